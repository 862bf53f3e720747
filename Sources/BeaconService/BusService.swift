import BeaconCore
import DBus
import Synchronization

/// beacond on D-Bus (SPEC section 6): `org.beacond` with Manager1 at
/// `/org/beacond` and Region1, Beacon1 and Venue1 objects below it.
///
/// Reads are answered on the bus thread from the engine's last published
/// snapshot; changes are handed to the engine's owner as requests and
/// answered from there. Neither side ever waits for the other.
final class BusService: Sendable {
    static let managerInterface = "org.beacond.Manager1"
    static let regionInterface = "org.beacond.Region1"
    static let beaconInterface = "org.beacond.Beacon1"
    static let venueInterface = "org.beacond.Venue1"

    let connection: DBusConnection
    private let submit: @Sendable (ServiceRequest) -> Void
    private let version: String
    private let limits: ServiceLimits
    private let current: Mutex<ServiceSnapshot>
    private let published: Mutex<Published>
    private let waiters = Mutex<[Waiter]>([])

    private struct Waiter {
        var call: DBusMethodCall
        var deadline: Timestamp
    }

    /// What is on the bus, to announce only what changed.
    private struct Published {
        /// Region objects by key, with the definition they were exported for and their last values.
        var regions: [String: (definition: RegionDefinition, values: [DBusValue])] = [:]
        var venues: [String: [(String, DBusValue)]] = [:]
        var beacons: BeaconObjectLedger
        var manager: [DBusValue] = []
    }

    /// Connects, exports the manager and owns `org.beacond`; fails clearly if the name is taken.
    static func start(
        bus: DBusConnection.Bus, snapshot: ServiceSnapshot, version: String, limits: ServiceLimits,
        submit: @escaping @Sendable (ServiceRequest) -> Void
    ) async throws(DBusError) -> BusService {
        let connection = try DBusConnection.connect(bus)
        let service = BusService(connection: connection, snapshot: snapshot, version: version, limits: limits, submit: submit)
        connection.objects.setObjectManager(at: BusPaths.root)
        connection.export(BusPaths.root, interfaces: [service.managerDeclaration()])
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
            try await connection.requestName(BusPaths.busName)
        } catch {
            connection.close()
            throw error
        }
        return service
    }

    private init(
        connection: DBusConnection, snapshot: ServiceSnapshot, version: String, limits: ServiceLimits,
        submit: @escaping @Sendable (ServiceRequest) -> Void
    ) {
        self.connection = connection
        self.submit = submit
        self.version = version
        self.limits = limits
        current = Mutex(snapshot)
        published = Mutex(Published(beacons: BeaconObjectLedger(coalescing: limits.coalescing, budget: limits.objectChangesPerPublication)))
    }

    private var snapshot: ServiceSnapshot { current.withLock { $0 } }

    private func clientLeft(_ name: String) {
        waiters.withLock { $0.removeAll { $0.call.sender == name } }
        submit(.clientLeft(name))
    }

    // MARK: Publishing the engine's state

    /// Called by the engine's owner after a step: objects appear and go,
    /// signals go out, properties change (coalesced), waiters get answers.
    /// `events` are the region transitions and nearest-venue changes since the last call.
    func publish(_ snapshot: ServiceSnapshot, events: [EngineEvent]) {
        current.withLock { $0 = snapshot }
        syncRegions(snapshot)
        for event in events {
            switch event {
            case .region(let transition) where transition.notify && transition.kind != .determinedOutside:
                guard let region = snapshot.regionsByKey[transition.regionID] else { continue }
                connection.emit(
                    path: BusPaths.root, interface: Self.managerInterface,
                    member: transition.kind == .entered ? "RegionEntered" : "RegionExited",
                    arguments: [.string(region.id), .objectPath(BusPaths.region(region))])
            case .nearestVenueChanged(let venue):
                connection.emit(
                    path: BusPaths.root, interface: Self.managerInterface, member: "NearestVenueChanged",
                    arguments: [.string(venue?.venueID ?? ""), venue.map { BusValues.venue($0, now: snapshot.time) } ?? .vardict([])])
            default:
                break
            }
        }
        syncVenues(snapshot)
        syncBeacons(snapshot)
        syncManager(snapshot)
        answerWaiters(snapshot)
    }

    /// AvailabilityChanged(b available, s reason).
    func availabilityChanged(_ available: Bool, reason: String) {
        connection.emit(
            path: BusPaths.root, interface: Self.managerInterface, member: "AvailabilityChanged",
            arguments: [.boolean(available), .string(reason)])
    }

    /// Region objects follow the regions: a region whose definition changed
    /// (a Reload that adds or drops its major, say) is exported anew, so its
    /// properties always match its declaration.
    private func syncRegions(_ snapshot: ServiceSnapshot) {
        var changed: [RegionDefinition] = []
        var added: [RegionDefinition] = []
        var removed: [RegionDefinition] = []
        published.withLock { published in
            for (key, entry) in published.regions where snapshot.regionsByKey[key] != entry.definition {
                published.regions[key] = nil
                removed.append(entry.definition)
            }
            for region in snapshot.regions {
                let values = regionProperties(region, snapshot).map(\.1)
                if let old = published.regions[region.key] {
                    if old.values != values { changed.append(region) }
                } else {
                    added.append(region)
                }
                published.regions[region.key] = (region, values)
            }
        }
        for region in removed { connection.unexport(BusPaths.region(region)) }
        for region in added { connection.export(BusPaths.region(region), interfaces: [regionDeclaration(region)]) }
        for region in changed {
            connection.emitPropertiesChanged(BusPaths.region(region), interface: Self.regionInterface, names: ["State"])
        }
    }

    private func syncVenues(_ snapshot: ServiceSnapshot) {
        var added: [String] = []
        var removed: [String] = []
        var changed: [String] = []
        published.withLock { published in
            let ids = Set(snapshot.configuration.venues.map(\.id))
            for id in published.venues.keys where !ids.contains(id) {
                published.venues[id] = nil
                removed.append(id)
            }
            for venue in snapshot.configuration.venues {
                let values = venueProperties(venue.id, snapshot)
                if let old = published.venues[venue.id] {
                    guard BeaconObjectLedger.meaningfullyDifferent(old, values) else { continue }
                    changed.append(venue.id)
                } else {
                    added.append(venue.id)
                }
                published.venues[venue.id] = values
            }
        }
        for id in removed { connection.unexport(BusPaths.venue(id)) }
        for id in added { connection.export(BusPaths.venue(id), interfaces: [venueDeclaration(id)]) }
        for id in changed {
            connection.emitPropertiesChanged(BusPaths.venue(id), interface: Self.venueInterface, names: ["Proximity", "Distance", "Nearest"])
        }
    }

    private func syncBeacons(_ snapshot: ServiceSnapshot) {
        let changes = published.withLock { published in
            published.beacons.reconcile(snapshot.ranged, now: snapshot.time, properties: BusValues.beaconProperties)
        }
        for identity in changes.removed { connection.unexport(BusPaths.beacon(identity)) }
        for entry in changes.added {
            connection.export(BusPaths.beacon(entry.identity), interfaces: [beaconDeclaration(entry.identity)])
        }
        for (identity, names) in changes.changed {
            connection.emitPropertiesChanged(BusPaths.beacon(identity), interface: Self.beaconInterface, names: names)
        }
    }

    private func syncManager(_ snapshot: ServiceSnapshot) {
        let properties = managerProperties(snapshot)
        let values = properties.map(\.1)
        let names = published.withLock { published -> [String] in
            defer { published.manager = values }
            guard !published.manager.isEmpty else { return [] }
            return zip(properties, published.manager).filter { $0.0.1 != $0.1 }.map(\.0.0)
        }
        if !names.isEmpty {
            connection.emitPropertiesChanged(BusPaths.root, interface: Self.managerInterface, names: names)
        }
    }

    // MARK: RequestNearestVenue

    private func answerWaiters(_ snapshot: ServiceSnapshot) {
        let (ready, expired) = waiters.withLock { waiters -> ([DBusMethodCall], [DBusMethodCall]) in
            let answer = snapshot.nearest != nil
            let ready = answer ? waiters.map(\.call) : []
            let expired = answer ? [] : waiters.filter { $0.deadline <= snapshot.time }.map(\.call)
            waiters.removeAll { answer || $0.deadline <= snapshot.time }
            return (ready, expired)
        }
        if let nearest = snapshot.nearest {
            for call in ready { call.reply([BusValues.venue(nearest, now: snapshot.time)]) }
        }
        for call in expired {
            call.fail(BeacondError.locationUnknown("no venue could be determined within the timeout"))
        }
    }

    // MARK: Declarations (one source for dispatch and introspection)

    private func managerProperties(_ snapshot: ServiceSnapshot) -> [(String, DBusValue)] {
        [
            ("Available", .boolean(snapshot.available)),
            ("Source", .string(snapshot.source)),
            ("Adapter", .string(snapshot.source.hasPrefix("hci") || snapshot.source.hasPrefix("bluez") ? (snapshot.source.split(separator: ":").dropFirst().first.map(String.init) ?? "hci0") : "")),
            ("NearestVenue", .string(snapshot.nearest?.venueID ?? "")),
            ("PreferredVenue", .string(snapshot.preferredVenue ?? "")),
            ("Version", .string(version)),
            ("DroppedAdvertisements", .uint64(snapshot.droppedAdvertisements)),
            ("Mqtt", .string(snapshot.mqtt)),
        ]
    }

    private func regionProperties(_ region: RegionDefinition, _ snapshot: ServiceSnapshot) -> [(String, DBusValue)] {
        // Major and Minor are absent when the region takes any (SPEC section 6).
        var properties: [(String, DBusValue)] = [("Id", .string(region.id)), ("Uuid", .string(region.constraint.uuid.uuidString))]
        if let major = region.constraint.major { properties.append(("Major", .uint16(major))) }
        if let minor = region.constraint.minor { properties.append(("Minor", .uint16(minor))) }
        properties.append(("State", .string((snapshot.regionStates[region.key] ?? .unknown).rawValue)))
        properties.append(("NotifyOnEntry", .boolean(region.notifyOnEntry)))
        properties.append(("NotifyOnExit", .boolean(region.notifyOnExit)))
        properties.append(("Owner", .string(region.owner ?? "config")))
        return properties
    }

    private func venueProperties(_ id: String, _ snapshot: ServiceSnapshot) -> [(String, DBusValue)] {
        let venue = snapshot.configuration.venues.first { $0.id == id }
        let closest = snapshot.ranged.first { $0.venueID == id && $0.proximity != .unknown }
        return [
            ("Id", .string(id)),
            ("Name", .string(venue?.name ?? "")),
            ("Proximity", .string(closest?.proximity.rawValue ?? Proximity.unknown.rawValue)),
            ("Distance", .double(closest?.distance ?? -1)),
            ("Nearest", .boolean(snapshot.nearest?.venueID == id)),
        ]
    }

    /// Property declarations whose getters read `values()` by name: an object
    /// serves what it was declared with, or `fallback` if it has gone since.
    private static func properties(
        _ signatures: [(String, String)], values: @escaping @Sendable () -> [(String, DBusValue)]?
    ) -> [DBusInterface.Property] {
        signatures.map { name, signature in
            .init(name, signature) {
                values()?.first { $0.0 == name }?.1 ?? DBusValue.zero(signature: signature)
            }
        }
    }

    private func managerDeclaration() -> DBusInterface {
        let signatures: [(String, String)] = [
            ("Available", "b"), ("Source", "s"), ("Adapter", "s"), ("NearestVenue", "s"), ("PreferredVenue", "s"),
            ("Version", "s"), ("DroppedAdvertisements", "t"), ("Mqtt", "s"),
        ]
        return DBusInterface(
            name: Self.managerInterface,
            methods: [
                .init("GetNearestVenue", outputs: [.init("venue", "a{sv}")]) { [weak self] call in self?.getNearestVenue(call) },
                .init("RequestNearestVenue", inputs: [.init("timeout_ms", "u")], outputs: [.init("venue", "a{sv}")]) {
                    [weak self] call in self?.requestNearestVenue(call)
                },
                .init("GetRangedBeacons", inputs: [.init("constraint", "a{sv}")], outputs: [.init("beacons", "aa{sv}")]) {
                    [weak self] call in self?.getRangedBeacons(call)
                },
                .init("RequestState", inputs: [.init("region_id", "s")], outputs: [.init("state", "s")]) {
                    [weak self] call in self?.requestState(call)
                },
                .init(
                    "StartMonitoring", inputs: [.init("id", "s"), .init("constraint", "a{sv}"), .init("options", "a{sv}")],
                    outputs: [.init("region", "o")]
                ) { [weak self] call in self?.startMonitoring(call) },
                .init("StopMonitoring", inputs: [.init("id", "s")]) { [weak self] call in
                    self?.submit(.stopMonitoring(id: call.arguments[0].string ?? "", call))
                },
                .init("SetPreferredVenue", inputs: [.init("id", "s")]) { [weak self] call in
                    let id = call.arguments[0].string ?? ""
                    self?.submit(.setPreferredVenue(id.isEmpty ? nil : id, call))
                },
                .init("Reload") { [weak self] call in self?.submit(.reload(call)) },
            ],
            properties: Self.properties(signatures) { [weak self] in
                self.map { $0.managerProperties($0.snapshot) }
            },
            signals: [
                .init("RegionEntered", [.init("id", "s"), .init("region", "o")]),
                .init("RegionExited", [.init("id", "s"), .init("region", "o")]),
                .init("NearestVenueChanged", [.init("id", "s"), .init("venue", "a{sv}")]),
                .init("AvailabilityChanged", [.init("available", "b"), .init("reason", "s")]),
            ])
    }

    /// Declared for one definition: Major and Minor only where it has them.
    /// A changed definition gets a new object (`syncRegions`).
    private func regionDeclaration(_ region: RegionDefinition) -> DBusInterface {
        let key = region.key
        let signatures: [(String, String)] = [
            ("Id", "s"), ("Uuid", "s"), ("Major", "q"), ("Minor", "q"), ("State", "s"), ("NotifyOnEntry", "b"),
            ("NotifyOnExit", "b"), ("Owner", "s"),
        ].filter { name, _ in
            (name != "Major" || region.constraint.major != nil) && (name != "Minor" || region.constraint.minor != nil)
        }
        return DBusInterface(
            name: Self.regionInterface,
            properties: Self.properties(signatures) { [weak self] in
                guard let self else { return nil }
                let snapshot = self.snapshot
                return snapshot.regionsByKey[key].map { self.regionProperties($0, snapshot) }
            })
    }

    private func venueDeclaration(_ id: String) -> DBusInterface {
        let signatures: [(String, String)] = [("Id", "s"), ("Name", "s"), ("Proximity", "s"), ("Distance", "d"), ("Nearest", "b")]
        return DBusInterface(
            name: Self.venueInterface,
            properties: Self.properties(signatures) { [weak self] in
                self.map { $0.venueProperties(id, $0.snapshot) }
            })
    }

    /// Serves the values last announced (the ledger's), so an object waiting
    /// to be removed still answers with what its signals said.
    private func beaconDeclaration(_ identity: BeaconIdentity) -> DBusInterface {
        DBusInterface(
            name: Self.beaconInterface,
            properties: Self.properties(BusValues.beaconSignatures) { [weak self] in
                self?.published.withLock { $0.beacons.exported[identity]?.properties }
            })
    }

    // MARK: Method handlers (on the bus thread, never waiting for the engine)

    private func getNearestVenue(_ call: DBusMethodCall) {
        let snapshot = snapshot
        guard let nearest = snapshot.nearest else {
            call.fail(BeacondError.noVenue("no venue is in range and no preferred venue is set"))
            return
        }
        call.reply([BusValues.venue(nearest, now: snapshot.time)])
    }

    private func requestNearestVenue(_ call: DBusMethodCall) {
        guard let timeout = call.arguments[0].integer, timeout <= limits.longestWait else {
            call.fail(BeacondError.invalidArguments("timeout_ms must be at most \(limits.longestWait) (5 minutes)"))
            return
        }
        let snapshot = snapshot
        if let nearest = snapshot.nearest, nearest.source == .ranging, nearest.proximity != .unknown {
            call.reply([BusValues.venue(nearest, now: snapshot.time)])
            return
        }
        if timeout == 0 {
            call.fail(BeacondError.locationUnknown("no venue is known right now"))
            return
        }
        waiters.withLock { $0.append(Waiter(call: call, deadline: snapshot.time + .milliseconds(timeout))) }
    }

    private func getRangedBeacons(_ call: DBusMethodCall) {
        do throws(DBusError) {
            let constraint = try BusValues.constraint(call.arguments[0], allowEmpty: true)
            let beacons = snapshot.ranged.filter { constraint?.matches($0.identity) ?? true }
            call.reply([.array(elementSignature: "a{sv}", beacons.map { .vardict(BusValues.beaconProperties($0)) })])
        } catch {
            call.fail(error)
        }
    }

    /// The caller's own region of that id first, then the configuration's.
    private func requestState(_ call: DBusMethodCall) {
        let id = call.arguments[0].string ?? ""
        let states = snapshot.regionStates
        guard let state = states[RegionDefinition.key(id: id, owner: call.sender)] ?? states[RegionDefinition.key(id: id, owner: nil)] else {
            call.fail(BeacondError.unknownRegion("no region '\(Self.printable(id))' is monitored"))
            return
        }
        call.reply([.string(state.rawValue)])
    }

    /// Validates the arguments here; the limits are checked by the engine's
    /// owner, where the regions are, so pipelined calls cannot race past them.
    private func startMonitoring(_ call: DBusMethodCall) {
        do throws(DBusError) {
            let id = call.arguments[0].string ?? ""
            guard Identifier.isValid(id) else {
                throw BeacondError.invalidArguments("region id must be \(Identifier.rule)")
            }
            guard let constraint = try BusValues.constraint(call.arguments[1], allowEmpty: false) else {
                throw BeacondError.invalidArguments("the constraint needs at least a uuid")
            }
            guard let options = call.arguments[2].stringKeyedEntries else { throw BeacondError.invalidArguments("options must be a{sv}") }
            let unknown = Set(options.keys).subtracting(["notify_on_entry", "notify_on_exit"])
            guard unknown.isEmpty else {
                throw BeacondError.invalidArguments("unknown option(s) \(unknown.sorted().joined(separator: ", ")); expected notify_on_entry, notify_on_exit")
            }
            func flag(_ name: String) throws(DBusError) -> Bool {
                guard let value = options[name] else { return true }
                guard let flag = value.bool else { throw BeacondError.invalidArguments("\(name) must be a boolean") }
                return flag
            }
            let region = RegionDefinition(
                id: id, constraint: constraint, notifyOnEntry: try flag("notify_on_entry"),
                notifyOnExit: try flag("notify_on_exit"), owner: call.sender)
            submit(.startMonitoring(region, call))
        } catch {
            call.fail(error)
        }
    }

    /// Text from a caller, shortened for an error message.
    static func printable(_ text: String) -> String {
        text.count > 64 ? String(text.prefix(64)) + "…" : text
    }
}
