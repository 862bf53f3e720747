import BeaconConfiguration
import BeaconCore
import BeaconSources
import DBus
import Logging
import ServiceLifecycle
import UnixSignals

/// The service's main job: a source feeds the pure engine; region and
/// nearest-venue events are logged and the state is kept on disk.
///
/// One task owns the engine; everything else (the source, the ticker,
/// SIGHUP) sends it messages, so the engine needs no lock and nothing waits
/// on it for long.
public final class BeaconService: Service, Sendable {
    public struct Settings: Sendable {
        public var configurationPath: String
        /// The command line's source; `nil` uses the file's, then `auto`.
        public var source: SourceSpec?
        public var stateDirectory: String
        /// How often time is let pass in the engine (exits, staleness, nearest venue).
        public var tickInterval: Duration = .milliseconds(200)
        /// A source that delivers nothing for this long is reported as silent.
        public var silenceAfter: Duration = .seconds(30)
        /// Where to offer the API; `nil` runs without D-Bus.
        public var bus: DBusConnection.Bus?
        public var version: String

        public init(
            configurationPath: String, source: SourceSpec?, stateDirectory: String, bus: DBusConnection.Bus?,
            version: String
        ) {
            self.configurationPath = configurationPath
            self.source = source
            self.stateDirectory = stateDirectory
            self.bus = bus
            self.version = version
        }
    }

    enum Input: Sendable {
        case source(SourceEvent)
        case sourceEnded(String)
        case tick
        case request(ServiceRequest)
    }

    private let settings: Settings
    private let configuration: Configuration
    private let logger: Logger

    /// - Parameter configuration: already loaded and valid; beacond refuses to start otherwise.
    public init(settings: Settings, configuration: Configuration, logger: Logger) {
        self.settings = settings
        self.configuration = configuration
        self.logger = logger
    }

    public var source: SourceSpec { settings.source ?? configuration.source ?? .auto }

    public func run() async throws {
        let (inputs, continuation) = AsyncStream<Input>.makeStream(bufferingPolicy: .bufferingNewest(1 << 16))
        let spec = source
        let factory = SourceFactory(configurationPath: settings.configurationPath, rebaseReplays: true)
        let interval = settings.tickInterval
        try await cancelWhenGracefulShutdown {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        let outcome = try await factory.run(spec) { continuation.yield(.source($0)) }
                        if case .replay(let summary) = outcome {
                            continuation.yield(.sourceEnded(Self.describe(summary)))
                        }
                    } catch {
                        continuation.yield(.sourceEnded("\(error)"))
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: interval)
                        continuation.yield(.tick)
                    }
                }
                group.addTask {
                    for await _ in await UnixSignalsSequence(trapping: .sighup) { continuation.yield(.request(.reload(nil))) }
                }
                // The service lives as long as its engine: a source that ends (a
                // replay) leaves it answering with what it knows.
                defer { group.cancelAll() }
                try await self.ownEngine(inputs, submit: { continuation.yield(.request($0)) })
            }
        }
    }

    /// The engine's owner: the only code that touches it.
    private func ownEngine(_ inputs: AsyncStream<Input>, submit: @escaping @Sendable (ServiceRequest) -> Void) async throws {
        let store = StateStore(directory: settings.stateDirectory)
        let restored: EngineState
        switch store.load() {
        case .loaded(let state):
            restored = state
            logger.info("restored state from \(store.path): \(state.regions.count) region(s), preferred venue \(state.preferredVenue ?? "none")")
        case .missing:
            restored = EngineState()
        case .unusable(let reason):
            restored = EngineState()
            logger.warning("\(reason); starting afresh and replacing it")
        }
        let start = WallClock.now()
        var engine = BeaconEngine(configuration: configuration, restored: restored, now: start)
        var decoder = AdvertisementDecoder()
        var events: [EngineEvent] = []
        var saved = restored
        var lastTick = start
        var silentSince: Timestamp?
        var available = true
        var availability = "scanning with \(source)"
        /// Silence is counted from the last sighting or from when the radio came back, whichever is later.
        var resumedAt = start
        func snapshot(_ engine: BeaconEngine, at time: Timestamp) -> ServiceSnapshot {
            ServiceSnapshot(time: time, engine: engine, available: available, availabilityReason: availability, source: source.description)
        }
        var bus: BusService?
        if let address = settings.bus {
            do {
                bus = try await BusService.start(
                    bus: address, snapshot: snapshot(engine, at: start), version: settings.version, submit: submit)
                logger.info("on the \(address) bus as \(BusPaths.busName)")
            } catch {
                logger.critical("cannot offer \(BusPaths.busName) on the \(address) bus: \(error.message)")
                throw error
            }
        }
        defer { bus?.connection.close() }
        logger.info("beacond started: source \(source), \(configuration.regions.count) region(s), \(configuration.venues.count) venue(s)")

        /// Availability changes not yet signalled: sent once the snapshot with
        /// the new `Available` is published, so a caller reacting to the
        /// signal reads the new value.
        var announcements: [(Bool, String)] = []
        /// Says when scanning stops and resumes: the log, the `Available`
        /// property and the AvailabilityChanged signal.
        func announce(_ now: Bool, _ reason: String) {
            if now { logger.notice("scanning: \(reason)") } else { logger.warning("not scanning: \(reason)") }
            available = now
            availability = reason
            announcements.append((now, reason))
        }

        for await input in inputs {
            // Answers that must wait until the state they change is on disk.
            var replies: [() -> Void] = []
            switch input {
            case .source(.hciEvent(let packet, let time)):
                decoder.decode(event: packet, at: time) { engine.ingest($0, into: &events) }
                tickIfDue(&engine, at: time, last: &lastTick, events: &events)
            case .source(.advertisement(let advertisement)):
                if let sighting = decoder.decode(advertisement) { engine.ingest(sighting, into: &events) }
                tickIfDue(&engine, at: advertisement.time, last: &lastTick, events: &events)
            case .source(.availability(let now, let reason)):
                let time = engine.serviceNow
                engine.radio(available: now, now: time)
                if now { resumedAt = time }
                silentSince = nil
                announce(now, reason)
            case .sourceEnded(let reason):
                logger.notice("source \(source) ended: \(reason)")
                announce(false, "source ended: \(reason)")
            case .tick:
                let now = engine.serviceNow
                engine.tick(now: now, into: &events)
                lastTick = now
                // A silent source is flagged but the engine goes on: beacons that
                // are really gone (a café closed for the night) must still exit.
                let quiet = now - max(engine.lastSighting ?? start, resumedAt)
                if quiet >= settings.silenceAfter, silentSince == nil, available {
                    silentSince = now
                    announce(false, "source \(source) is up but has delivered no iBeacon advertisement for \(quiet.configurationText)")
                } else if quiet < settings.silenceAfter, silentSince != nil {
                    silentSince = nil
                    announce(true, "advertisements arrive again from \(source)")
                }
            case .request(let request):
                replies = handle(request, engine: &engine, events: &events)
            }
            for event in events {
                if let line = EventLog.line(event) { logger.info("\(line)") }
            }
            if let bus, !events.isEmpty || !announcements.isEmpty || input.isTickOrRequest {
                bus.publish(snapshot(engine, at: engine.serviceNow), events: events)
            }
            for (now, reason) in announcements { bus?.availabilityChanged(now, reason: reason) }
            announcements.removeAll()
            events.removeAll(keepingCapacity: true)
            if engine.state != saved {
                do {
                    try store.save(engine.state)
                    saved = engine.state
                } catch {
                    logger.error("cannot save state: \(error)")
                }
            }
            for reply in replies { reply() }
        }
        logger.info(
            "beacond stopping: \(decoder.advertisements) advertisements, \(decoder.iBeacons) iBeacons, \(decoder.malformed) malformed dropped")
    }

    /// Lets time pass on the source's clock too, so a replay at `@max` ticks as it was recorded.
    private func tickIfDue(_ engine: inout BeaconEngine, at time: Timestamp, last: inout Timestamp, events: inout [EngineEvent]) {
        guard time - last >= settings.tickInterval else { return }
        engine.tick(now: time, into: &events)
        last = time
    }

    /// Requests from D-Bus callers and SIGHUP, answered here, where the engine
    /// lives. A change that persists or creates objects is answered only once
    /// it is saved and published: the returned replies are sent after both.
    private func handle(
        _ request: ServiceRequest, engine: inout BeaconEngine, events: inout [EngineEvent]
    ) -> [() -> Void] {
        let now = engine.serviceNow
        switch request {
        case .startMonitoring(let region, let call):
            do {
                try engine.startMonitoring(region, now: now)
                logger.info("region \(region.id) added by \(region.owner ?? "?"): \(region.constraint)")
                // Answered once the snapshot that exports the region's object is published.
                return [{ call.reply([.objectPath(BusPaths.region(region.id))]) }]
            } catch {
                call.fail(BeacondError.regionExists("\(error); choose another id"))
            }
        case .stopMonitoring(let id, let call):
            guard let region = engine.monitor.definitions.first(where: { $0.id == id }) else {
                call.fail(BeacondError.unknownRegion("no region '\(BusService.printable(id))' is monitored"))
                return []
            }
            guard let owner = region.owner else {
                call.fail(BeacondError.notOwner("region \(id) comes from \(settings.configurationPath); edit the file and Reload"))
                return []
            }
            guard owner == call.sender else {
                call.fail(BeacondError.notOwner("region \(id) belongs to another client (\(owner))"))
                return []
            }
            try? engine.stopMonitoring(id: id, into: &events)
            call.reply()
        case .setPreferredVenue(let id, let call):
            do {
                try engine.setPreferredVenue(id)
                engine.tick(now: now, into: &events)
                logger.info("preferred venue: \(id ?? "none (nearest to me)")")
                return [{ call.reply() }]
            } catch {
                call.fail(BeacondError.unknownVenue("\(error); the venues are \(engine.configuration.venues.map(\.id).joined(separator: ", "))"))
            }
        case .reload(let call):
            do {
                let configuration = try ConfigurationLoader.load(contentsOf: settings.configurationPath)
                engine.reconfigure(configuration, now: now, into: &events)
                logger.notice("reloaded \(settings.configurationPath): \(configuration.regions.count) region(s), \(configuration.venues.count) venue(s)")
                call?.reply()
            } catch {
                logger.error("not reloading, \(settings.configurationPath) is invalid; keeping the running configuration:\n\(error)")
                call?.fail(BeacondError.invalidConfig("\(error)"))
            }
        case .clientLeft(let name):
            for region in engine.monitor.definitions where region.owner == name {
                try? engine.stopMonitoring(id: region.id, into: &events)
                logger.info("region \(region.id) removed: its owner \(name) left the bus")
            }
        }
        return []
    }

    private static func describe(_ summary: ReplaySource.Summary) -> String {
        var text = "replayed \(summary.events) HCI events (\(summary.format))"
        if summary.skippedRecords > 0 { text += ", skipped \(summary.skippedRecords) unreadable lines" }
        if let stop = summary.stoppedEarly { text += "; stopped early: \(stop)" }
        return text
    }
}

extension BeaconService.Input {
    var isTickOrRequest: Bool {
        switch self {
        case .tick, .request: true
        default: false
        }
    }
}

extension BeaconEngine {
    /// The service's now: the wall clock, but never before the last sighting
    /// (a replay at `@max` runs ahead of the wall clock).
    fileprivate var serviceNow: Timestamp {
        let wall = WallClock.now()
        return max(wall, lastSighting ?? wall)
    }
}
