import BeaconCore
import BeacondAPI
import BeacondBus
import DBus
import Synchronization

extension BeaconClient {
    private typealias Manager1 = Beacond.Manager1

    /// The nearest venue now, then each change, like `CLLocationUpdate.liveUpdates()`:
    /// each element the venue, or `nil` when none is known. A change is
    /// another venue, or the same one with the listener settled or moving
    /// again (`isStationary`, like `CLLocationUpdate.isStationary`).
    public func nearestVenueUpdates() -> BeaconUpdates<Beacond.VenueUpdate> {
        updates(Manager1.nearestVenueChanged, Self.venueUpdate) { client throws(BeacondError) in
            do throws(BeacondError) {
                return [Beacond.VenueUpdate(venue: try await client.nearestVenue())]
            } catch .noVenue {
                return [Beacond.VenueUpdate(venue: nil)]
            }
        } stop: { _, _ in }
    }

    /// Whether the source delivers: now (with reason ""), then each change.
    public func availabilityUpdates() -> BeaconUpdates<Beacond.Availability> {
        updates(Manager1.availabilityChanged, Self.availability) { client throws(BeacondError) in
            [Beacond.Availability(available: try await client.status().available, reason: "")]
        } stop: { _, _ in }
    }

    /// Monitors `regions` as this client's own and yields their entries and
    /// exits, like `CLMonitor`'s events. Leaving the loop or cancelling the
    /// task stops monitoring them; so does this client leaving the bus.
    ///
    /// beacond paces region starts per Unix user (`ServiceLimits`): once
    /// they are spent, a start it answers with Busy is tried again every
    /// `regionStartInterval` for as long as the sequence lives, so a kiosk
    /// restarted soon after starting its regions gets them all, a second
    /// apart, instead of failing.
    public func monitor(_ regions: [MonitoredRegion]) -> BeaconUpdates<Beacond.RegionEvent> {
        // One id given twice is refused as beacond refuses it (RegionExists), not a trap here.
        let paths = Dictionary(
            regions.map { (BusPaths.region(RegionDefinition(id: $0.id, constraint: $0.constraint, owner: uniqueName)), $0.id) },
            uniquingKeysWith: { first, _ in first })
        let event = { @Sendable (kind: Beacond.RegionEvent.Kind) in
            { @Sendable (signal: DBusSignal) throws(BeacondError) -> Beacond.RegionEvent? in
                guard let path = signal.arguments.dropFirst().first?.string, let id = paths[path] else { return nil }
                return Beacond.RegionEvent(id: id, kind: kind, region: path)
            }
        }
        // What this sequence may have started, and so stops: not a region
        // beacond refused, but one whose call was cancelled or lost, which
        // beacond may have made. Each id is claimed first, so no other
        // sequence of this client starts or stops it meanwhile.
        let started = Mutex<[String]>([])
        let holder = regionClaims.newHolder()
        return updates(
            [(Manager1.regionEntered, event(.entered)), (Manager1.regionExited, event(.exited))], heldBack: false
        ) { client throws(BeacondError) in
            var given: Set<String> = []
            if let twice = regions.first(where: { !given.insert($0.id).inserted }) {
                throw .regionExists("the region '\(twice.id)' is given twice; each needs an id of its own")
            }
            for region in regions {
                guard await client.regionClaims.claim(region.id, for: holder) else {
                    throw .regionExists("another of this client's monitor sequences monitors a region '\(region.id)' already; choose another id")
                }
                while true {
                    started.withLock { $0.append(region.id) }
                    do throws(BeacondError) {
                        try await client.startMonitoring(region)
                        break
                    } catch {
                        // Refused, or never reached beacond: not started. (After
                        // a timeout it may have been: the stop asks anyway.)
                        let notStarted = switch error {
                        case .serviceNotRunning, .accessDenied: true
                        default: error.code != nil
                        }
                        if notStarted { started.withLock { _ = $0.popLast() } }
                        guard error.code == .busy, (try? await Task.sleep(for: ServiceLimits().regionStartInterval)) != nil else { throw error }
                    }
                }
            }
            return []
        } ended: { [regionClaims] in
            regionClaims.stopping(holder)
        } stop: { client, beacondLeft in
            // The regions went with the beacond that left: asking its
            // successor (or, where the bus starts beacond on demand, a
            // beacond started by the asking) to stop them would be wrong.
            for id in started.withLock({ $0 }) {
                if !beacondLeft { await client.stopMonitoringAsking(id) }
                client.regionClaims.release(id, of: holder)
            }
            client.regionClaims.releaseAll(of: holder)
        }
    }

    /// Entries and exits of every region that asks to be told (beacons.yaml's and every client's), by id.
    public func regionEvents() -> BeaconUpdates<Beacond.RegionEvent> {
        // Asks beacond once, so the sequence fails at once when it is not on the bus, as the others do.
        updates(
            [(Manager1.regionEntered, Self.regionEvent(.entered)), (Manager1.regionExited, Self.regionEvent(.exited))], heldBack: false
        ) { client throws(BeacondError) in
            _ = try await client.status()
            return []
        } stop: { _, _ in }
    }

    /// Everything beacond signals (`regionEvents()`'s entries and exits,
    /// nearest-venue and availability changes) as it happens, without the
    /// current state first. Returns once beacond has answered a call sent
    /// after subscribing, so nothing it signals from then on is missed: what
    /// a monitor that says it is ready needs. Fails when beacond is not on the bus.
    public func events() async throws(BeacondError) -> BeaconUpdates<BeaconEvent> {
        try await events(unreadEvents: Self.mostUnreadEvents)
    }

    /// `events()` with another bound on the events waiting unread (tests use a small one).
    func events(unreadEvents: Int) async throws(BeacondError) -> BeaconUpdates<BeaconEvent> {
        let events = updates([
            (Manager1.regionEntered, { @Sendable signal throws(BeacondError) in try Self.regionEvent(.entered)(signal).map(BeaconEvent.region) }),
            (Manager1.regionExited, { @Sendable signal throws(BeacondError) in try Self.regionEvent(.exited)(signal).map(BeaconEvent.region) }),
            (Manager1.nearestVenueChanged, { @Sendable signal throws(BeacondError) in .nearestVenue(try Self.venueUpdate(signal)) }),
            (Manager1.availabilityChanged, { @Sendable signal throws(BeacondError) in Self.availability(signal).map(BeaconEvent.availability) }),
        ], heldBack: false, unreadEvents: unreadEvents) { _ throws(BeacondError) in [] } stop: { _, _ in }
        // The bus takes a connection's messages in order: the match rules are in place once this is answered.
        _ = try await status()
        return events
    }

    // MARK: Signals as elements

    private static func regionEvent(_ kind: Beacond.RegionEvent.Kind) -> @Sendable (DBusSignal) throws(BeacondError) -> Beacond.RegionEvent? {
        { signal throws(BeacondError) in
            guard let id = signal.arguments.first?.string, let path = signal.arguments.dropFirst().first?.string else { return nil }
            return Beacond.RegionEvent(id: id, kind: kind, region: path)
        }
    }

    @Sendable private static func venueUpdate(_ signal: DBusSignal) throws(BeacondError) -> Beacond.VenueUpdate {
        let venue = signal.arguments.dropFirst().first
        return Beacond.VenueUpdate(venue: signal.arguments.first?.string == "" ? nil : try Beacond.Venue(dbus: venue))
    }

    /// `nil` for a signal without its two arguments: skipped, not read as "unavailable".
    @Sendable private static func availability(_ signal: DBusSignal) -> Beacond.Availability? {
        guard let available = signal.arguments.first?.bool, let reason = signal.arguments.dropFirst().first?.string else { return nil }
        return Beacond.Availability(available: available, reason: reason)
    }

    private func updates<Element: Sendable>(
        _ signal: APISignal, _ element: @escaping @Sendable (DBusSignal) throws(BeacondError) -> Element?,
        start: @escaping @Sendable (BeaconClient) async throws(BeacondError) -> [Element],
        stop: @escaping @Sendable (BeaconClient, _ beacondLeft: Bool) async -> Void
    ) -> BeaconUpdates<Element> {
        updates([(signal, element)], start: start, stop: stop)
    }

    /// A sequence fed by Manager1's `signals` (each turned into an element,
    /// or skipped for `nil`), begun by `start` and ended by cancellation
    /// (then the match rules go and `stop` runs), by beacond leaving the bus,
    /// or by the connection to the bus being lost.
    ///
    /// Where `start` answers with the current state (`heldBack`), signals
    /// that come while it runs are held back: when there are any they are
    /// yielded instead of `start`'s elements. beacond signals every change,
    /// so the last of them is at least as new as `start`'s answer, which may
    /// have been read before them; and a reader that falls behind finds only
    /// the newest state waiting, never a backlog. Where `start` only sets
    /// things up (a monitor's region starts, which beacond may pace a second
    /// apart), each signal is an event yielded as it comes, and at most
    /// `unreadEvents` wait for the reader: one more ends the sequence with
    /// `LimitsExceeded` rather than dropping an event or growing without
    /// bound. `ended` runs as the sequence ends, before `stop`, which is told
    /// whether beacond (or the bus) left: then what it held is gone with it.
    private func updates<Element: Sendable>(
        _ signals: [(APISignal, @Sendable (DBusSignal) throws(BeacondError) -> Element?)], heldBack: Bool = true,
        unreadEvents: Int = BeaconClient.mostUnreadEvents,
        start: @escaping @Sendable (BeaconClient) async throws(BeacondError) -> [Element],
        ended: @escaping @Sendable () -> Void = {},
        stop: @escaping @Sendable (BeaconClient, _ beacondLeft: Bool) async -> Void
    ) -> BeaconUpdates<Element> {
        let (stream, continuation) = AsyncThrowingStream<Element, any Error>.makeStream(
            bufferingPolicy: heldBack ? .bufferingNewest(1) : .bufferingOldest(unreadEvents))
        let early = Mutex<[Element]?>(heldBack ? [] : nil)
        let deliver = { @Sendable (value: Element) in
            let held = early.withLock { early -> Bool in
                early?.append(value)
                return early != nil
            }
            guard !held else { return }
            if case .dropped = continuation.yield(value), !heldBack {
                continuation.finish(
                    throwing: BeacondError.bus(
                        name: DBusError.limitsExceededName,
                        message: "more than \(unreadEvents) events were waiting unread; the sequence ended so that none is lost unseen"))
            }
        }
        let bus = connection.bus
        let left = Mutex(false)
        let subscriptions = signals.map { signal, element in
            BusSubscription(connection, sender: Beacond.busName, path: Beacond.root, interface: Manager1.name, member: signal.name) { received in
                do {
                    if let value = try element(received) { deliver(value) }
                } catch {
                    continuation.finish(throwing: error)
                }
            }
        }
        + [
            BusSubscription(
                connection, sender: DBusNames.busDriver, path: DBusNames.busDriverPath, interface: DBusNames.busDriver,
                member: StandardInterfaces.nameOwnerChanged, arg0: Beacond.busName
            ) { signal in
                // The owner beacond's regions and state lived in left: gone, or replaced by another at once.
                guard signal.arguments.count == 3, signal.arguments[1].string != "" else { return }
                left.withLock { $0 = true }
                continuation.finish(throwing: BeacondError.serviceNotRunning(BeacondError.notRunning(on: bus)))
            },
            // The bus itself going away says nothing on the bus: libdbus tells its own connection.
            BusSubscription(
                connection, sender: nil, path: StandardInterfaces.localPath, interface: StandardInterfaces.local,
                member: StandardInterfaces.disconnected
            ) { _ in
                left.withLock { $0 = true }
                continuation.finish(throwing: BeacondError(.disconnected("the connection to the \(bus) bus was lost"), bus: bus))
            },
        ]
        // A sequence made in a task cancelled already ends without starting:
        // a monitor would otherwise claim its regions for a moment after its
        // caller was gone, and another sequence begun then be refused them.
        let starting = Task { [cancelled = Task.isCancelled] in
            guard !cancelled else { return continuation.finish() }
            do throws(BeacondError) {
                let initial = try await start(self)
                early.withLock { early in
                    for value in early?.isEmpty == false ? early! : initial { continuation.yield(value) }
                    early = nil
                }
            } catch {
                continuation.finish(throwing: error)
            }
        }
        // The match rules go at once: a hung beacond must not keep them for
        // the 25 s its unanswered StopMonitoring may take.
        continuation.onTermination = { [self] _ in
            for subscription in subscriptions { subscription.cancel() }
            starting.cancel()
            ended()
            let beacondLeft = left.withLock { $0 }  // set before the finish that brought us here
            Task {
                _ = await starting.result
                await stop(self, beacondLeft)
            }
        }
        return BeaconUpdates(stream: stream)
    }
}
