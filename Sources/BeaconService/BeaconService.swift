import BeaconConfiguration
import BeaconCore
import BeaconSources
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

        public init(configurationPath: String, source: SourceSpec?, stateDirectory: String) {
            self.configurationPath = configurationPath
            self.source = source
            self.stateDirectory = stateDirectory
        }
    }

    enum Input: Sendable {
        case source(SourceEvent)
        case sourceEnded(String)
        case tick
        case reload
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
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
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
                    for await _ in await UnixSignalsSequence(trapping: .sighup) { continuation.yield(.reload) }
                }
                group.addTask { await self.ownEngine(inputs) }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// The engine's owner: the only code that touches it.
    private func ownEngine(_ inputs: AsyncStream<Input>) async {
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
        logger.info("beacond started: source \(source), \(configuration.regions.count) region(s), \(configuration.venues.count) venue(s)")

        for await input in inputs {
            switch input {
            case .source(.hciEvent(let packet, let time)):
                decoder.decode(event: packet, at: time) { engine.ingest($0, into: &events) }
                tickIfDue(&engine, at: time, last: &lastTick, events: &events)
            case .source(.advertisement(let advertisement)):
                if let sighting = decoder.decode(advertisement) { engine.ingest(sighting, into: &events) }
                tickIfDue(&engine, at: advertisement.time, last: &lastTick, events: &events)
            case .source(.availability(let available, let reason)):
                if available { logger.notice("scanning resumed: \(reason)") } else { logger.warning("scanning stopped: \(reason)") }
            case .sourceEnded(let reason):
                logger.notice("source \(source) ended: \(reason)")
            case .tick:
                let now = max(WallClock.now(), engine.lastSighting ?? start)
                engine.tick(now: now, into: &events)
                lastTick = now
                let quiet = now - (engine.lastSighting ?? start)
                if quiet >= settings.silenceAfter, silentSince == nil {
                    silentSince = now
                    logger.warning("source \(source) has delivered no iBeacon advertisement for \(quiet.configurationText)")
                } else if quiet < settings.silenceAfter, silentSince != nil {
                    silentSince = nil
                    logger.notice("source \(source) delivers advertisements again")
                }
            case .reload:
                reload(&engine)
            }
            for event in events {
                if let line = EventLog.line(event, configuration: engine.configuration) { logger.info("\(line)") }
            }
            events.removeAll(keepingCapacity: true)
            if engine.state != saved {
                do {
                    try store.save(engine.state)
                    saved = engine.state
                } catch {
                    logger.error("cannot save state: \(error)")
                }
            }
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

    /// SIGHUP: re-read the configuration; keep the running one if the new file is invalid.
    private func reload(_ engine: inout BeaconEngine) {
        do {
            let configuration = try ConfigurationLoader.load(contentsOf: settings.configurationPath)
            engine.reconfigure(configuration, now: WallClock.now())
            logger.notice("reloaded \(settings.configurationPath): \(configuration.regions.count) region(s), \(configuration.venues.count) venue(s)")
        } catch {
            logger.error("not reloading, \(settings.configurationPath) is invalid; keeping the running configuration:\n\(error)")
        }
    }

    private static func describe(_ summary: ReplaySource.Summary) -> String {
        var text = "replayed \(summary.events) HCI events (\(summary.format))"
        if summary.skippedRecords > 0 { text += ", skipped \(summary.skippedRecords) unreadable lines" }
        if let stop = summary.stoppedEarly { text += "; stopped early: \(stop)" }
        return text
    }
}
