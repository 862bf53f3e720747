import BeaconConfiguration
import BeaconCore
import BeaconMQTT
import BeaconSources
import BeacondAPI
import BeacondBus
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
        public var tickInterval = BeaconEngine.tickInterval
        /// A source that delivers nothing for this long is reported as silent.
        public var silenceAfter: Duration = .seconds(30)
        /// What the ticker and paced sources sleep on. A test running the
        /// service in its own process gives one whose wake-ups come on the
        /// service's own thread, in the order they fall due: with the shared
        /// pool's timers, starved while a whole suite starts, a replay once
        /// fell seconds behind the ticker (the likeliest cause; not reproduced).
        public var pacing: any Clock<Duration> = ContinuousClock()
        /// Where to offer the API; `nil` runs without D-Bus.
        public var bus: DBusConnection.Bus?
        public var version: String
        public var limits = ServiceLimits()

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

    private let settings: Settings
    private let configuration: Configuration
    private let logger: Logger
    private var limits: ServiceLimits { settings.limits }

    /// - Parameter configuration: already loaded and valid; beacond refuses to start otherwise.
    public init(settings: Settings, configuration: Configuration, logger: Logger) {
        self.settings = settings
        self.configuration = configuration
        self.logger = logger
    }

    public var source: SourceSpec { settings.source ?? configuration.source ?? .auto }

    public func run() async throws {
        let mailbox = ServiceMailbox(capacity: limits.advertisementQueue)
        let spec = source
        let factory = SourceFactory(configurationPath: settings.configurationPath, rebaseReplays: true, pacing: settings.pacing)
        let (interval, pacing) = (settings.tickInterval, settings.pacing)
        try await cancelWhenGracefulShutdown {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do throws(SourceError) {
                        let outcome = try await factory.run(spec) { mailbox.post($0) }
                        if case .replay(let summary) = outcome {
                            mailbox.post(.sourceEnded(Self.describe(summary)))
                        }
                    } catch where !Task.isCancelled {  // stopping is no failure
                        mailbox.post(.sourceFailed(error))
                    } catch {}
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await pacing.sleep(for: interval)
                        mailbox.post(.tick)
                    }
                }
                group.addTask {
                    for await _ in await UnixSignalsSequence(trapping: .sighup) { mailbox.post(.request(.reload(nil))) }
                }
                // The service lives as long as its engine: a source that ends (a
                // replay) leaves it answering with what it knows.
                defer { group.cancelAll() }
                try await withTaskCancellationHandler {
                    try await self.ownEngine(mailbox)
                } onCancel: {
                    mailbox.finish()
                }
            }
        }
    }

    /// The engine's owner: the only code that touches it.
    private func ownEngine(_ mailbox: ServiceMailbox) async throws {
        let store = StateStore(directory: settings.stateDirectory)
        let restored: EngineState
        let loaded = store.load()
        switch loaded {
        case .loaded(let state):
            restored = state
        case .missing:
            restored = EngineState()
        case .unusable(let reason):
            restored = EngineState()
            // Kept, not overwritten: a region state from a newer beacond or a
            // hand edit gone wrong may hold the preferred venue someone wants back.
            logger.warning("\(reason); starting afresh and replacing it (\(store.setAside() ?? "the file is kept as \(store.setAsidePath)"))")
        }
        let start = ServiceClock.now()
        var engine = BeaconEngine(configuration: configuration, restored: restored, now: start)
        if case .loaded = loaded {
            logger.info("restored state from \(store.path): \(restored.regions.count) region(s), preferred venue \(engine.preferredVenueID ?? "none")")
        }
        // As a reload says it: the file's preference is dropped, and the next save leaves it out.
        if let preferred = restored.preferredVenue, engine.preferredVenueID == nil {
            logger.notice(
                "the preferred venue '\(preferred.quotedForMessage)' of \(store.path) is not in \(settings.configurationPath); answering with the nearest venue")
        }
        var decoder = AdvertisementDecoder()
        var events: [EngineEvent] = []
        var keeper = StateKeeper(store: store, saved: restored)
        // However beacond stops (asked to, its source failed, the bus lost), a
        // save waiting out its backoff is tried once more: the stop keeps what the engine knew.
        defer {
            if case .failed(let error, _) = keeper.sync(engine.state, now: ServiceClock.now(), requested: true) {
                logger.error("stopping with the state unsaved: \(error)")
            }
        }
        var bounds = CallerBounds(limits: limits)
        var lastTick = start
        var silentSince: Timestamp?
        var available = true
        var availability = "scanning with \(source)"
        var dropped: UInt64 = 0
        var dropReport = DropReport()
        var powerReport = ImplausiblePowerReport()
        /// What the source says it opened: `auto`'s choice, a bare `hci`'s adapter.
        var opened: SourceSpec?
        /// Silence is counted from the last advertisement of any kind (SPEC
        /// section 2: a radio that hears phones and no beacon is not deaf) or
        /// from when the radio came back, whichever is later.
        var lastHeard: Timestamp?
        var resumedAt = start
        /// Since when the bus has taken none of beacond's messages, and the signals dropped before then.
        var backedUp: (since: Timestamp, signalsDropped: Int)?
        // Off without an `mqtt:` section: no MQTT library call is made at all.
        let mqtt = configuration.mqtt.map { MQTTPublisher(settings: $0, version: settings.version, logger: logger) }
        /// `shown`: `SourceTime.shown`, once a source time is known.
        func snapshot(_ engine: BeaconEngine, at time: Timestamp, serviceTime: Timestamp, shown: Duration? = nil) -> ServiceSnapshot {
            ServiceSnapshot(
                time: time, serviceTime: serviceTime, shownOffset: shown, engine: engine, available: available, availabilityReason: availability,
                source: opened ?? source, droppedAdvertisements: dropped, mqtt: mqtt?.status ?? "off")
        }
        var bus: BusService?
        if let address = settings.bus {
            do {
                bus = try await BusService.start(
                    bus: address, snapshot: snapshot(engine, at: start, serviceTime: start), version: settings.version, limits: limits,
                    enqueue: { [queued = limits.queuedPerClient] in mailbox.post(request: $0, perCaller: queued) })
                logger.info("on the \(address) bus as \(Beacond.busName)")
            } catch where Task.isCancelled {
                // SIGTERM while the bus had not answered yet: a stop asked for, not a failure.
                logger.info("beacond stopping: asked to stop while connecting to \(address.phrase)")
                return
            } catch {
                // Refused by the bus's policy is its own answer; otherwise say what to check, and how to try beacond without that bus.
                let hint = error.name == "org.freedesktop.DBus.Error.AccessDenied"
                    ? "" : "; \(address.whatToCheck); to try beacond without it: dbus-run-session -- beacond --bus session …, or --bus none"
                logger.critical("cannot offer \(Beacond.busName) on the \(address) bus: \(error.message)\(hint)")
                throw error
            }
        }
        defer { bus?.connection.close() }
        // Once the bus name is beacond's: a second beacond started by hand, which
        // cannot have the name, must not take the first one's MQTT session (same client id).
        mqtt?.start()
        defer { mqtt?.stop() }
        logger.info("beacond started: source \(source), \(configuration.regions.count) region(s), \(configuration.venues.count) venue(s)")
        var systemd = SystemdNotifier()
        systemd.status(availability)

        /// Availability changes not yet signalled: sent once the snapshot with
        /// the new `Available` is published, so a caller reacting to the
        /// signal reads the new value.
        var announcements: [(Bool, String)] = []
        /// Says when scanning stops and resumes: the log, the `Available`
        /// property and the AvailabilityChanged signal.
        func announce(_ now: Bool, _ reason: String) {
            if now { logger.notice("scanning: \(reason)") } else { logger.warning("not scanning: \(reason)") }
            systemd.status(now ? "scanning: \(reason)" : "not scanning: \(reason)")
            available = now
            availability = reason
            announcements.append((now, reason))
        }
        /// Region transitions and nearest-venue changes not yet signalled.
        var signals: [EngineEvent] = []

        /// Once the loop ends: the calls still waiting and those to come
        /// until the bus closes get "beacond is stopping", not the bus's NoReply.
        func refuseWhileStopping(_ why: String) async {
            let refusal = BeacondError.stopping(why)
            await bus?.stop(refusal)
            for case .request(let request) in mailbox.take().control { request.call?.fail(refusal) }
        }

        var sourceTime = SourceTime()
        for await _ in mailbox.wakeups {
            let batch = mailbox.take()
            /// Set when the source cannot scan: the batch is finished (its
            /// answers sent, its events published) before the service stops.
            var failure: SourceError?
            /// Set when the source has ended: said after this batch's
            /// advertisements, which it delivered before it ended.
            var ended: String?
            // Answers that must wait until the state they change is on disk and published.
            var replies: [() -> Void] = []
            var ticked = false
            var answered = false
            /// Handled once the batch's advertisements are in: a change a caller
            /// asks for (it ticks the engine) must not let time pass over
            /// advertisements that came before it and are not counted yet.
            var requests: [ServiceRequest] = []
            for control in batch.control {
                switch control {
                case .request(let request):
                    requests.append(request)
                case .availability(let now, let reason):
                    let time = sourceTime.now(ServiceClock.now())
                    engine.radio(available: now, now: time)
                    if now { resumedAt = time }
                    silentSince = nil
                    announce(now, reason)
                case .note(let note):
                    logger.notice("\(note)")
                case .opened(let spec):
                    if spec != opened, spec != source { logger.notice("source \(source) opened \(spec)") }
                    opened = spec
                case .sourceEnded(let reason):
                    ended = reason
                case .sourceFailed(let error):
                    failure = error
                case .tick:
                    ticked = true
                }
            }
            // Time passes up to each advertisement before it is in: after a gap
            // in a recording at @max, whatever the gap ended is over before the
            // first beacon heard again is counted (live, the ticker did that).
            for event in batch.advertisements {
                switch event {
                case .hciEvent(let packet, let time):
                    ticked = tickIfDue(&engine, at: time, last: &lastTick, events: &events) || ticked
                    let heard = decoder.advertisements
                    decoder.decode(event: packet, at: time) { engine.ingest($0, into: &events) }
                    if decoder.advertisements > heard { lastHeard = max(lastHeard ?? time, time) }
                case .advertisement(let advertisement):
                    ticked = tickIfDue(&engine, at: advertisement.time, last: &lastTick, events: &events) || ticked
                    if let sighting = decoder.decode(advertisement) { engine.ingest(sighting, into: &events) }
                    lastHeard = max(lastHeard ?? advertisement.time, advertisement.time)
                case .availability, .note, .opened:
                    break  // posted as control
                }
            }
            // Time passes after every advertisement queued before it is in.
            // The service's clock is read once a pass: pacing, backoff and the source's time agree.
            let serviceNow = ServiceClock.now()
            sourceTime.taken(lastHeard: lastHeard, at: serviceNow)
            let now = sourceTime.now(serviceNow)
            for request in requests {
                let regions = engine.monitor.definitions.count
                replies += handle(request, now: now, engine: &engine, keeper: &keeper, bounds: &bounds, events: &events)
                // Any peer can connect and leave the bus: one that held no region changes nothing to publish.
                if case .clientLeft = request, engine.monitor.definitions.count == regions { continue }
                answered = true
            }
            let quiet = now - max(lastHeard ?? start, resumedAt)
            if batch.control.contains(where: \.isTick) {
                engine.tick(now: now, into: &events)
                lastTick = now
                // A silent source is flagged but the engine goes on: beacons that
                // are really gone (a café closed for the night) must still exit.
                if quiet >= settings.silenceAfter, silentSince == nil, available {
                    silentSince = now
                    announce(false, "source \(opened ?? source) is up but has delivered no advertisement for \(settings.silenceAfter.configurationText)")
                }
            }
            // Over as soon as an advertisement is in, not at the next tick: a
            // source may end (a replay) or a tick come late before then.
            if quiet < settings.silenceAfter, silentSince != nil {
                silentSince = nil
                announce(true, "advertisements arrive again from \(opened ?? source)")
            }
            if let ended {
                logger.notice("source \(source) ended: \(ended)")
                silentSince = nil  // ended, not silent: no "arrive again" may follow
                announce(false, "source ended: \(ended)")
            }
            dropped = batch.dropped
            // Paced on the service's clock: a replay at @max must not log a minute's line every millisecond.
            if let line = dropReport.line(total: dropped, now: serviceNow) { logger.warning("\(line)") }
            for event in events {
                // A beacon with no 1 m calibration is said once, and at a pace: strangers can send them.
                if case .implausibleMeasuredPower(let beacon, _, _) = event,
                    !powerReport.admit(beacon, isVenue: engine.isVenueBeacon(beacon), now: serviceNow)
                {
                    continue
                }
                if let line = EventLog.line(event) { logger.info("\(line)") }
                if event.isSignalled { signals.append(event) }
            }
            if let line = powerReport.summary(now: serviceNow) { logger.info("\(line)") }
            events.removeAll(keepingCapacity: true)
            if ticked || answered || !signals.isEmpty || !announcements.isEmpty {
                let published = snapshot(engine, at: now, serviceTime: serviceNow, shown: sourceTime.shown)
                bus?.publish(published, events: signals)
                mqtt?.update(MQTTNodeState(published))
                signals.removeAll(keepingCapacity: true)
            }
            for (now, reason) in announcements { bus?.availabilityChanged(now, reason: reason) }
            announcements.removeAll()
            // The backoff is paced on the service's clock: a replay at @max must not retry at every pass.
            report(keeper.sync(engine.state, now: serviceNow))
            for reply in replies { reply() }
            // A bus connection lost (dbus-daemon restarted, or the transport dropped)
            // is never regained: stop, and systemd starts beacond again (exit 69).
            if let bus, let address = settings.bus, !bus.connection.isConnected {
                logger.critical("lost the connection to the \(address) bus (dbus-daemon restarted?); stopping, so that systemd starts beacond again")
                throw DBusError.disconnected("the connection to the bus was lost")
            }
            if let connection = bus?.connection, let address = settings.bus {
                let unsent = connection.unsentBacklog
                if unsent > 0, backedUp == nil {
                    backedUp = (serviceNow, connection.signalsDropped)
                    logger.warning(
                        "the \(address) bus takes none of beacond's messages (\(unsent) bytes wait to be sent): dbus-daemon stops reading a service whose replies fill a client that never reads them; beacond takes no calls and drops its signals until the bus takes them again (docs/trust.md)")
                } else if unsent == 0, let since = backedUp {
                    backedUp = nil
                    logger.notice(
                        "the \(address) bus takes beacond's messages again, after \((serviceNow - since.since).tenthsText) (at most \(connection.unsentBacklogPeak) bytes waited); \(connection.signalsDropped - since.signalsDropped) signal(s) dropped meanwhile")
                }
            }
            systemd.alive(bus: bus?.connection.executor.progress).map(log)
            if let failure {
                // Stopping lets systemd try again (Restart=on-failure) once the
                // adapter, the permission or bluetoothd is there; staying up would
                // scan nothing for good, and regions would exit for want of a radio.
                logger.critical("stopping: source \(source) cannot scan: \(failure)")
                await refuseWhileStopping("its radio cannot scan")
                throw failure
            }
        }
        await refuseWhileStopping("asked to stop")
        logger.info(
            "beacond stopping: \(decoder.advertisements) advertisements, \(decoder.iBeacons) iBeacons, \(decoder.malformed) malformed dropped, \(decoder.incompleteAdvertisements) never whole, \(dropped) dropped unprocessed")
    }

    /// What the watchdog's pacing says about the D-Bus thread, for the journal.
    private func log(_ step: WatchdogPacing.Step) {
        switch step {
        case .stuck(let waited):
            logger.critical(
                "the D-Bus thread has left its work waiting for \(waited.tenthsText): no longer telling systemd's watchdog that beacond is alive, so that it restarts beacond")
        case .unstuck:
            logger.warning("the D-Bus thread takes its work again: telling systemd's watchdog that beacond is alive again")
        case .ping, .wait:
            break
        }
    }

    /// Logs what saving the state came to: a failure once, and the recovery.
    private func report(_ outcome: StateKeeper.Outcome) {
        switch outcome {
        case .failed(let error, alreadySaid: false):
            logger.error(
                "cannot save state: \(error); retrying with backoff, and refusing changes callers ask for until it works (--state-dir names another directory)")
        case .recovered(let since):
            logger.notice("state saved again (it could not be saved for \((ServiceClock.now() - since).tenthsText))")
        case .unchanged, .saved, .pending, .failed:
            break
        }
    }

    /// Lets time pass on the source's clock too, so a replay at `@max` ticks as it was recorded.
    private func tickIfDue(_ engine: inout BeaconEngine, at time: Timestamp, last: inout Timestamp, events: inout [EngineEvent]) -> Bool {
        guard time - last >= settings.tickInterval else { return false }
        engine.tick(now: time, into: &events)
        last = time
        return true
    }

    /// Requests from D-Bus callers and SIGHUP, answered here, where the engine
    /// lives. A change that persists or creates objects is answered only once
    /// it is saved and published: the returned replies are sent after both.
    private func handle(
        _ request: ServiceRequest, now: Timestamp, engine: inout BeaconEngine, keeper: inout StateKeeper, bounds: inout CallerBounds,
        events: inout [EngineEvent]
    ) -> [() -> Void] {
        switch request {
        case .startMonitoring(let region, let caller):
            let call = caller.call
            // Counted here, where the regions live: a client pipelining calls cannot slip past.
            // Paced on the service's clock, not the source's: a replay at full speed runs ahead of it.
            if let refusal = bounds.refusalToStart(caller, regions: engine.monitor.definitions, now: ServiceClock.now()) {
                call.fail(refusal)
                return []
            }
            do {
                try engine.startMonitoring(region, now: now)
                bounds.started(caller)
                logger.info("region \(region.key) added: \(region.constraint)")
                // Answered once the snapshot that exports the region's object is published.
                return [{ call.reply([.objectPath(BusPaths.region(region))]) }]
            } catch {
                bounds.startRefused(caller)
                call.fail(BeacondError.regionExists("\(error); choose another id"))
            }
        case .stopMonitoring(let id, let caller):
            let call = caller.call
            let definitions = engine.monitor.definitions
            if definitions.contains(where: { $0.owner == call.sender && $0.id == id }) {
                try? engine.stopMonitoring(key: RegionDefinition.key(id: id, owner: call.sender), into: &events)
                // Answered once the snapshot without the region's object is published.
                return [{ call.reply() }]
            } else if definitions.contains(where: { $0.owner == nil && $0.id == id }) {
                call.fail(BeacondError.notOwner("region \(id) comes from \(settings.configurationPath); edit the file and Reload"))
            } else {
                call.fail(BeacondError.notYourRegion(id))
            }
        case .setPreferredVenue(let id, let caller):
            let call = caller.call
            let previous = engine.preferredVenueID
            // Setting it again, as it is on disk too, writes nothing, so it is not
            // paced: a kiosk may say it on every screen.
            // Answered after the batch's publication all the same: an earlier call in
            // it may have made this the preference, and that is not published yet.
            guard id != previous || keeper.saved.preferredVenue != id else { return [{ call.reply() }] }
            if let refusal = bounds.refusalToChange(caller, now: ServiceClock.now()) {
                call.fail(refusal)
                return []
            }
            do {
                try engine.setPreferredVenue(id)
            } catch {
                bounds.changeRefused(caller)
                call.fail(BeacondError.unknownVenue("\(error); the venues are \(engine.configuration.venues.map(\.id).listed(atMost: 10))"))
                return []
            }
            // Nothing is acknowledged that is not on disk.
            let outcome = keeper.sync(engine.state, now: ServiceClock.now(), requested: true)
            report(outcome)
            if case .failed(let error, _) = outcome {
                try? engine.setPreferredVenue(previous)
                call.fail(BeacondError.stateNotSaved("the preferred venue is unchanged: \(error)"))
                return []
            }
            engine.tick(now: now, into: &events)
            logger.info("preferred venue: \(id ?? "none (nearest to me)")")
            return [{ call.reply() }]
        case .reload(let caller):
            let call = caller?.call
            if let caller, let refusal = bounds.refusalToChange(caller, now: ServiceClock.now()) {
                caller.call.fail(refusal)
                return []
            }
            do {
                let configuration = try ConfigurationLoader.load(contentsOf: settings.configurationPath)
                let dropped = engine.reconfigure(configuration, now: now, into: &events)
                if !dropped.removedRegions.isEmpty {
                    logger.notice("regions no longer in \(settings.configurationPath): \(dropped.removedRegions.joined(separator: ", "))")
                }
                if let preferred = dropped.droppedPreferredVenue {
                    logger.notice("the preferred venue \(preferred) is no longer in \(settings.configurationPath); answering with the nearest venue")
                }
                if configuration.mqtt != self.configuration.mqtt {
                    logger.notice("the mqtt section changed; it applies when beacond restarts")
                }
                if settings.source == nil, configuration.source != self.configuration.source {
                    logger.notice("the source changed to \(configuration.source ?? .auto); it applies when beacond restarts (still \(source))")
                }
                logger.notice("reloaded \(settings.configurationPath): \(configuration.regions.count) region(s), \(configuration.venues.count) venue(s)")
                // Answered once the snapshot of the new configuration is published and saved.
                return [{ call?.reply() }]
            } catch {
                logger.error("not reloading, \(settings.configurationPath) is invalid; keeping the running configuration:\n\(error)")
                call?.fail(BeacondError.invalidConfig("\(error)"))
            }
        case .clientLeft(let name):
            bounds.forget(name)
            for key in engine.stopMonitoring(owner: name, into: &events) {
                logger.info("region \(key) removed: its owner left the bus")
            }
        }
        return []
    }

    private static func describe(_ summary: ReplaySource.Summary) -> String {
        var text = "replayed \(summary.events) HCI events (\(summary.format))"
        if let skipped = summary.skipped { text += ", \(skipped)" }
        if let times = summary.timeNote { text += "; \(times)" }
        if let stop = summary.stoppedEarly { text += "; stopped early: \(stop)" }
        return text
    }
}

extension MQTTNodeState {
    /// `beacons.yaml`'s regions, and the beacons ranged for them (in one of
    /// them that is inside), only: a D-Bus client's regions, and the beacons
    /// ranged only for those, are its own business.
    init(_ snapshot: ServiceSnapshot) {
        let configured = snapshot.configuration.regions
        let inside = configured.filter { snapshot.regionStates[$0.key] == .inside }
        self.init(
            nearest: snapshot.nearest,
            regions: Dictionary(
                configured.map { ($0.id, snapshot.regionStates[$0.key] ?? .unknown) }, uniquingKeysWith: { first, _ in first }),
            scanning: snapshot.available, scanningReason: snapshot.availabilityReason,
            beacons: snapshot.ranged.filter { beacon in inside.contains { $0.constraint.matches(beacon.identity) } })
    }
}

extension ServiceMailbox.Control {
    var isTick: Bool {
        if case .tick = self { return true }
        return false
    }
}

extension EngineEvent {
    /// Region transitions and nearest-venue changes go out as signals; beacons
    /// appearing and going are published as objects, coalesced.
    var isSignalled: Bool {
        switch self {
        case .region, .nearestVenueChanged: true
        case .beaconAppeared, .beaconDisappeared, .implausibleMeasuredPower: false
        }
    }
}
