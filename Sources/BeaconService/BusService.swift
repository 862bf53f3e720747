import BeaconCore
import BeacondAPI
import BeaconSources
import BeacondBus
import DBus
import Synchronization

/// beacond on D-Bus (SPEC section 6): `org.beacond` with Manager1 at
/// `/org/beacond` and Region1, Beacon1 and Venue1 objects below it.
///
/// Reads are answered on the bus thread from the engine's last publication
/// (`BusAnswers`, on the connection's executor: no lock, no hop); changes are
/// handed to the engine's owner as requests and answered from there. Neither
/// side ever waits for the other.
final class BusService: Sendable {
    private typealias Manager1 = Beacond.Manager1

    let connection: DBusConnection
    /// Hands a request to the engine's owner; false when its caller has too many queued.
    private let enqueue: @Sendable (ServiceRequest) -> Bool
    private let version: String
    private let limits: ServiceLimits
    private let answers: BusAnswers
    private let published: Mutex<Published>

    /// What is on the bus, to announce only what changed.
    private struct Published {
        /// Region objects by key, with the definition they were exported for and their last values.
        var regions: [String: (definition: RegionDefinition, values: [DBusValue])] = [:]
        var venues: [String: [(String, DBusValue)]] = [:]
        var venuePacing: VenuePacing
        var beacons: BeaconObjectLedger
        var manager: [(String, DBusValue)] = []
    }

    /// Connects, exports the manager and owns `org.beacond`; fails clearly if the name is taken.
    static func start(
        bus: DBusConnection.Bus, snapshot: ServiceSnapshot, version: String, limits: ServiceLimits,
        enqueue: @escaping @Sendable (ServiceRequest) -> Bool
    ) async throws(DBusError) -> BusService {
        let connection = try await DBusConnection.connect(bus)
        // Exported before the name is taken, so that a call the bus holds for
        // an activated beacond finds its objects; announced to no one until then.
        connection.withholdSignalsUntilNamed()
        let service = BusService(connection: connection, snapshot: snapshot, version: version, limits: limits, enqueue: enqueue)
        connection.objects.setObjectManager(at: Beacond.root, listingAlways: Beacond.objectPaths)
        connection.export(Beacond.root, interfaces: [service.managerDeclaration()])
        service.publish(snapshot, events: [])
        // Only the bus driver's own broadcast says a client left (the binding
        // drops forgeries: other senders, and unicast signals).
        connection.subscribe(
            sender: DBusNames.busDriver, path: DBusNames.busDriverPath, interface: DBusNames.busDriver,
            member: "NameOwnerChanged"
        ) { [weak service] signal in
            guard signal.arguments.count == 3, let name = signal.arguments[0].string, name.hasPrefix(":"),
                signal.arguments[1].string == name, signal.arguments[2].string == ""
            else { return }
            service?.clientLeft(name)
        }
        do {
            try await connection.requestName(Beacond.busName)
        } catch {
            connection.close()
            throw error
        }
        return service
    }

    private init(
        connection: DBusConnection, snapshot: ServiceSnapshot, version: String, limits: ServiceLimits,
        enqueue: @escaping @Sendable (ServiceRequest) -> Bool
    ) {
        self.connection = connection
        self.enqueue = enqueue
        self.version = version
        self.limits = limits
        answers = BusAnswers(Self.publication(snapshot, version: version), executor: connection.executor)
        published = Mutex(
            Published(
                venuePacing: VenuePacing(coalescing: limits.coalescing, budget: limits.objectChanges, period: limits.objectChangePeriod),
                beacons: BeaconObjectLedger(coalescing: limits.coalescing, budget: limits.objectChanges, period: limits.objectChangePeriod)))
    }

    /// The answers read most, built here once per publication rather than per call.
    private static func publication(_ snapshot: ServiceSnapshot, version: String) -> BusAnswers.Publication {
        BusAnswers.Publication(
            snapshot: snapshot, nearest: snapshot.nearest.map { DBusEncodedReply([Beacond.Venue($0, now: snapshot.time).dbusValue]) },
            manager: managerProperties(snapshot, version: version))
    }

    /// Hands a request to the engine, or fails it at once when its caller
    /// has `queuedPerClient` waiting already: a flood from one client must
    /// not push back another's.
    private func submit(_ request: ServiceRequest) {
        guard !enqueue(request) else { return }
        request.call?.fail(
            BeacondError.busy("this client has \(limits.queuedPerClient) requests waiting for beacond already; wait for their answers"))
    }

    /// Hands `call`'s request to the engine with the Unix user its client
    /// runs as, for the bounds per user; on the connection's thread (a handler).
    private func submit(_ call: DBusMethodCall, _ request: @escaping @Sendable (Caller) -> ServiceRequest) {
        withUser(of: call) { [weak self] user in self?.submit(request(Caller(call: call, user: user))) }
    }

    /// Calls `then` on the connection's thread with the Unix user `call`'s
    /// client runs as: at once once known, else when the bus has said,
    /// behind that client's earlier calls. The bus is asked once per client
    /// and never waited for here: a blocking ask held every client for up to
    /// 25 s when the bus was slow to answer or beacond's queue was full.
    /// Once beacond stops, every call is refused here: all that waits or changes something comes this way.
    private func withUser(of call: DBusMethodCall, _ then: @escaping @Sendable (UInt32) -> Void) {
        if let stopping = answers.assumeIsolated({ $0.stopping }) { return call.fail(stopping) }
        let limit = limits.waitingForUserPerClient
        switch answers.assumeIsolated({ $0.user(of: call, then: then, limit: limit) }) {
        case .known(let user):
            then(user)
        case .queued:
            break
        case .refused:
            call.fail(BeacondError.busy("this client has \(limit) calls waiting for beacond already; wait for their answers"))
        case .ask:
            let client = call.sender
            Task { [connection, answers] in
                let answer: Result<UInt32, DBusError>
                do throws(DBusError) {
                    answer = .success(try await connection.unixUser(of: client))
                } catch {
                    answer = .failure(error)
                }
                connection.perform {
                    for waiting in answers.assumeIsolated({ $0.userAnswered(client, answer) }) {
                        switch answer {
                        case .success(let user): waiting.then(user)
                        case .failure(let error): waiting.call.fail(error)
                        }
                    }
                }
            }
        }
    }

    /// On the connection's thread (a signal handler).
    private func clientLeft(_ name: String) {
        answers.assumeIsolated { $0.forget(name) }
        submit(.clientLeft(name))
    }

    /// Refuses every call from now on, and those waiting here, with
    /// `refusal`; returns once that holds on the connection's thread, so no
    /// handler hands the engine another request after it.
    func stop(_ refusal: BeacondError) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            do throws(DBusError) {
                try connection.execute { [answers] in
                    answers.assumeIsolated { $0.stop(refusal) }
                    done.resume()
                }
            } catch {
                done.resume()  // closing: the bus answers what is left
            }
        }
    }

    // MARK: Publishing the engine's state

    /// Called by the engine's owner after a step: objects appear and go,
    /// signals go out, properties change (coalesced), waiters get answers.
    /// `events` are the region transitions and nearest-venue changes since the last call.
    ///
    /// What changes is worked out here, off the connection's thread, and
    /// carried out there in one piece: every read is answered on that thread,
    /// so a reader sees the last publication with its objects or this one
    /// with its objects, never an answer naming an object not exported yet.
    func publish(_ snapshot: ServiceSnapshot, events: [EngineEvent]) {
        let publication = Self.publication(snapshot, version: version)
        let objects = [regionChanges(snapshot), venueChanges(snapshot), beaconChanges(snapshot)]
        let signals = events.compactMap { signal(for: $0, snapshot) }
        let manager = changedManagerProperties(publication.manager)
        connection.perform { [self] in
            answers.assumeIsolated { $0.apply(publication) }  // first: the objects' getters read it
            // Before the signals: NearestVenueChanged names the venue's Beacon1 object.
            for changes in objects {
                changes.carryOut(on: connection) { path, values in answers.assumeIsolated { $0.serve(path, values) } }
            }
            for (signal, arguments) in signals { emit(signal, arguments) }
            if !manager.isEmpty { connection.emitPropertiesChanged(Beacond.root, interface: Manager1.name, names: manager) }
            answers.assumeIsolated { $0.answerWaiters() }  // last, once the objects an answer names are exported
        }
    }

    /// Objects to remove, export and announce changes of, in that order (a
    /// region whose definition changed goes and comes back at its path).
    private struct ObjectChanges: Sendable {
        var interface: String
        var removed: [String] = []
        var added: [(path: String, declaration: DBusInterface)] = []
        var changed: [(path: String, names: [String])] = []
        /// The values an added or changed Venue1 or Beacon1 object serves from
        /// this step on (a Region1 reads the publication instead).
        var values: [String: [(String, DBusValue)]] = [:]

        /// Each object's values are served from the step that announces them:
        /// a read handled while the next publication is worked out gets the
        /// values last announced, not that publication's, nor none.
        func carryOut(on connection: DBusConnection, serving serve: (String, [(String, DBusValue)]?) -> Void) {
            for path in removed {
                connection.unexport(path)
                serve(path, nil)
            }
            for (path, declaration) in added {
                serve(path, values[path])
                connection.export(path, interfaces: [declaration])
            }
            for (path, names) in changed {
                serve(path, values[path])
                connection.emitPropertiesChanged(path, interface: interface, names: names)
            }
        }
    }

    /// The Manager1 signal an engine event is, if any.
    private func signal(for event: EngineEvent, _ snapshot: ServiceSnapshot) -> (APISignal, [DBusValue])? {
        switch event {
        case .region(let transition) where transition.notify && transition.kind != .determinedOutside:
            guard let region = snapshot.regionsByKey[transition.regionID] else { return nil }
            return (
                transition.kind == .entered ? Manager1.regionEntered : Manager1.regionExited,
                [.string(region.id), .objectPath(BusPaths.region(region))]
            )
        case .nearestVenueChanged(let venue):
            return (
                Manager1.nearestVenueChanged,
                [.string(venue?.venueID ?? ""), venue.map { Beacond.Venue($0, now: snapshot.time).dbusValue } ?? .vardict([])]
            )
        default:
            return nil
        }
    }

    /// AvailabilityChanged(b available, s reason).
    func availabilityChanged(_ available: Bool, reason: String) {
        emit(Manager1.availabilityChanged, [.boolean(available), .string(reason)])
    }

    private func emit(_ signal: APISignal, _ arguments: [DBusValue]) {
        connection.emit(path: Beacond.root, interface: Manager1.name, member: signal.name, arguments: arguments)
    }

    /// Region objects follow the regions: a region whose definition changed
    /// (a Reload that adds or drops its major, say) is exported anew, so its
    /// properties always match its declaration.
    private func regionChanges(_ snapshot: ServiceSnapshot) -> ObjectChanges {
        var changes = ObjectChanges(interface: Beacond.Region1.name)
        published.withLock { published in
            for (key, entry) in published.regions where snapshot.regionsByKey[key] != entry.definition {
                published.regions[key] = nil
                changes.removed.append(BusPaths.region(entry.definition))
            }
            for region in snapshot.regions {
                let values = regionProperties(region, snapshot).map(\.1)
                if let old = published.regions[region.key] {
                    if old.values != values { changes.changed.append((BusPaths.region(region), [Beacond.Region1.state.name])) }
                } else {
                    changes.added.append((BusPaths.region(region), regionDeclaration(region)))
                }
                published.regions[region.key] = (region, values)
            }
        }
        return changes
    }

    private func venueChanges(_ snapshot: ServiceSnapshot) -> ObjectChanges {
        var changes = ObjectChanges(interface: Beacond.Venue1.name)
        published.withLock { published in
            let ids = Set(snapshot.configuration.venues.map(\.id))
            for id in published.venues.keys where !ids.contains(id) {
                published.venues[id] = nil
                published.venuePacing.forget(id)
                changes.removed.append(BusPaths.venue(id))
            }
            var changed: [(id: String, names: [String], values: [(String, DBusValue)])] = []
            // Each venue's closest ranged beacon, found in one pass (ranged is nearest first):
            // a search per venue was a million comparisons a publication with 1,000 venues.
            var closest: [String: RangedBeacon] = [:]
            for beacon in snapshot.ranged where beacon.proximity != .unknown {
                if let id = beacon.venueID, closest[id] == nil { closest[id] = beacon }
            }
            for venue in snapshot.configuration.venues {
                let values = venueProperties(venue, closest: closest[venue.id], snapshot)
                if let old = published.venues[venue.id] {
                    guard BeaconObjectLedger.meaningfullyDifferent(old, values) else { continue }
                    changed.append((venue.id, BeaconObjectLedger.changedNames(old, values), values))
                } else {
                    changes.added.append((BusPaths.venue(venue.id), venueDeclaration(venue.id)))
                    changes.values[BusPaths.venue(venue.id)] = values
                    published.venues[venue.id] = values
                }
            }
            // A change held back is announced later: the object serves its last announced values meanwhile.
            let admitted = published.venuePacing.admit(changed.map { ($0.id, $0.names) }, now: snapshot.serviceTime)
            for (id, names, values) in changed where admitted.contains(id) {
                changes.changed.append((BusPaths.venue(id), names))
                changes.values[BusPaths.venue(id)] = values
                published.venues[id] = values
            }
        }
        return changes
    }

    private func beaconChanges(_ snapshot: ServiceSnapshot) -> ObjectChanges {
        let (ledger, values) = published.withLock { published in
            let changes = published.beacons.reconcile(snapshot.ranged, nearest: snapshot.nearest?.beacon?.identity, now: snapshot.serviceTime) {
                Beacond.Beacon($0, in: snapshot).properties
            }
            let announced = changes.added.map(\.identity) + changes.changed.map(\.0)
            return (changes, announced.compactMap { identity in published.beacons.exported[identity].map { (BusPaths.beacon(identity), $0.properties) } })
        }
        return ObjectChanges(
            interface: Beacond.Beacon1.name, removed: ledger.removed.map(BusPaths.beacon),
            added: ledger.added.map { (BusPaths.beacon($0.identity), beaconDeclaration($0.identity)) },
            changed: ledger.changed.map { (BusPaths.beacon($0.0), $0.1) }, values: Dictionary(uniqueKeysWithValues: values))
    }

    /// The Manager1 properties whose values changed since the last publication.
    private func changedManagerProperties(_ properties: [(String, DBusValue)]) -> [String] {
        published.withLock { published -> [String] in
            defer { published.manager = properties }
            guard !published.manager.isEmpty else { return [] }
            return BeaconObjectLedger.changedNames(published.manager, properties)
        }
    }

    // MARK: Declarations (Sources/BeacondAPI), served

    private static func managerProperties(_ snapshot: ServiceSnapshot, version: String) -> [(String, DBusValue)] {
        Beacond.Status(
            available: snapshot.available, source: snapshot.source.description, adapter: snapshot.source.adapter ?? "",
            nearestVenue: snapshot.nearest?.venueID,
            preferredVenue: snapshot.preferredVenue, version: version, droppedAdvertisements: snapshot.droppedAdvertisements,
            mqtt: snapshot.mqtt
        ).properties
    }

    private func regionProperties(_ region: RegionDefinition, _ snapshot: ServiceSnapshot) -> [(String, DBusValue)] {
        Beacond.Region(
            id: region.id, constraint: region.constraint, state: snapshot.regionStates[region.key] ?? .unknown,
            notifyOnEntry: region.notifyOnEntry, notifyOnExit: region.notifyOnExit, owner: region.owner
        ).properties
    }

    private func venueProperties(
        _ venue: VenueDefinition, closest: RangedBeacon?, _ snapshot: ServiceSnapshot
    ) -> [(String, DBusValue)] {
        let id = venue.id
        return [
            (Beacond.Venue1.id.name, .string(id)),
            (Beacond.Venue1.venueName.name, .string(venue.name)),
            (Beacond.Venue1.proximity.name, .string(closest?.proximity.rawValue ?? Proximity.unknown.rawValue)),
            (Beacond.Venue1.distance.name, .double(closest?.distance ?? -1)),
            (Beacond.Venue1.nearest.name, .boolean(snapshot.nearest?.venueID == id)),
        ]
    }

    private func managerDeclaration() -> DBusInterface {
        let handlers: [APIMethod: @Sendable (BusService, DBusMethodCall) -> Void] = [
            Manager1.getNearestVenue: { $0.getNearestVenue($1) },
            Manager1.requestNearestVenue: { $0.requestNearestVenue($1) },
            Manager1.getRangedBeacons: { $0.getRangedBeacons($1) },
            Manager1.requestState: { $0.requestState($1) },
            Manager1.startMonitoring: { $0.startMonitoring($1) },
            Manager1.stopMonitoring: { service, call in
                let id = call.arguments[0].string ?? ""
                // Checked before the call is held for its user: a held call holds its message.
                guard Identifier.isValid(id) else { return call.fail(BeacondError.notYourRegion(id)) }
                service.submit(call) { .stopMonitoring(id: id, $0) }
            },
            Manager1.setPreferredVenue: { service, call in
                let id = call.arguments[0].string ?? ""
                guard id.isEmpty || Identifier.isValid(id) else {
                    return call.fail(BeacondError.unknownVenue("no venue '\(id.quotedForMessage)': a venue id is \(Identifier.rule)"))
                }
                service.submit(call) { .setPreferredVenue(id.isEmpty ? nil : id, $0) }
            },
            Manager1.reload: { service, call in service.submit(call) { .reload($0) } },
        ]
        return DBusInterface(
            Manager1.interface,
            handlers: Dictionary(uniqueKeysWithValues: handlers.map { method, handler in
                (method.name, { @Sendable [weak self] call in self.map { handler($0, call) } })
            })
        ) { [weak self] in
            self?.answers.assumeIsolated { $0.publication.manager }
        }
    }

    /// Declared for one definition: Major and Minor only where it has them.
    /// A changed definition gets a new object (`regionChanges`), so the object
    /// answers from the definition it was exported for: between the engine
    /// dropping a region and the object's removal (or the other way round when
    /// one is added) it still reads as that region, in state unknown.
    private func regionDeclaration(_ region: RegionDefinition) -> DBusInterface {
        let absent = [
            region.constraint.major == nil ? Beacond.Region1.major.name : nil, region.constraint.minor == nil ? Beacond.Region1.minor.name : nil,
        ]
        return DBusInterface(Beacond.Region1.interface, leavingOut: Set(absent.compactMap(\.self))) { [weak self] in
            self.map { $0.regionProperties(region, $0.answers.assumeIsolated { $0.snapshot }) }
        }
    }

    /// Serves the values last announced, as a Beacon1 does: a venue a Reload
    /// dropped still reads as itself until its object goes (the snapshot no
    /// longer has its name), and a read agrees with the signals.
    private func venueDeclaration(_ id: String) -> DBusInterface {
        DBusInterface(Beacond.Venue1.interface) { [answers] in
            answers.assumeIsolated { $0.served[BusPaths.venue(id)] }
        }
    }

    /// Serves the values last announced (the ledger's), so an object waiting
    /// to be removed still answers with what its signals said.
    private func beaconDeclaration(_ identity: BeaconIdentity) -> DBusInterface {
        DBusInterface(Beacond.Beacon1.interface) { [answers] in
            answers.assumeIsolated { $0.served[BusPaths.beacon(identity)] }
        }
    }

    // MARK: Method handlers (on the bus thread, never waiting for the engine)

    private func getNearestVenue(_ call: DBusMethodCall) {
        guard let nearest = answers.assumeIsolated({ $0.publication.nearest }) else {
            call.fail(BeacondError.noVenue("no venue is in range and no preferred venue is set"))
            return
        }
        call.reply(nearest)
    }

    private func requestNearestVenue(_ call: DBusMethodCall) {
        guard let timeout = call.arguments[0].integer, timeout <= limits.longestWait else {
            call.fail(BeacondError.invalidArguments("timeout_ms must be at most \(limits.longestWait) (5 minutes)"))
            return
        }
        guard let deadline = answers.assumeIsolated({ $0.deadlineToWait(call, timeout: .milliseconds(timeout), arrived: ServiceClock.now()) }) else { return }
        withUser(of: call) { [answers, limits] user in
            answers.assumeIsolated { $0.wait(call, user: user, deadline: deadline, limits: limits) }
        }
    }

    private func getRangedBeacons(_ call: DBusMethodCall) {
        do throws(BeacondError) {
            let constraint = try BeaconConstraint.decode(call.arguments[0], allowEmpty: true)
            let beacons = answers.assumeIsolated { $0.rangedBeacons() }.filter { constraint?.matches($0.identity) ?? true }
            call.reply([.array(elementSignature: Beacond.Beacon1.dictionary.signature, beacons.map(\.value))])
        } catch {
            call.fail(error)
        }
    }

    /// The caller's own region of that id first, then the configuration's.
    private func requestState(_ call: DBusMethodCall) {
        let id = call.arguments[0].string ?? ""
        // Checked first: a client's region is keyed "owner/id", which another's id must not name.
        guard Identifier.isValid(id) else {
            call.fail(BeacondError.unknownRegion("no region '\(id.quotedForMessage)': a region id is \(Identifier.rule)"))
            return
        }
        let states = answers.assumeIsolated { $0.snapshot.regionStates }
        guard let state = states[RegionDefinition.key(id: id, owner: call.sender)] ?? states[RegionDefinition.key(id: id, owner: nil)] else {
            call.fail(BeacondError.unknownRegion("no region '\(id.quotedForMessage)' is monitored"))
            return
        }
        call.reply([.string(state.rawValue)])
    }

    /// Validates the arguments here; the limits are checked by the engine's
    /// owner, where the regions are, so pipelined calls cannot race past them.
    private func startMonitoring(_ call: DBusMethodCall) {
        do throws(BeacondError) {
            let id = call.arguments[0].string ?? ""
            guard Identifier.isValid(id) else {
                throw BeacondError.invalidArguments("region id must be \(Identifier.rule)")
            }
            guard let constraint = try BeaconConstraint.decode(call.arguments[1], allowEmpty: false) else {
                throw BeacondError.invalidArguments("the constraint needs at least a uuid")
            }
            let options = try Manager1.monitoringOptions.entries(of: call.arguments[2], naming: "option")
            func flag(_ key: APIDictionary.Key) throws(BeacondError) -> Bool {
                guard let value = options[key.name] else { return true }
                guard let flag = value.bool else { throw BeacondError.invalidArguments("\(key.name) must be a boolean") }
                return flag
            }
            let region = RegionDefinition(
                id: id, constraint: constraint, notifyOnEntry: try flag(Manager1.OptionKey.notifyOnEntry),
                notifyOnExit: try flag(Manager1.OptionKey.notifyOnExit), owner: call.sender)
            submit(call) { .startMonitoring(region, $0) }
        } catch {
            call.fail(error)
        }
    }
}
