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
    /// Client-added regions per bus client.
    static let regionsPerClient = 16
    /// The longest a RequestNearestVenue may wait.
    static let longestWait: UInt32 = 300_000
    /// PropertiesChanged at most this often per object.
    static let coalescing: Duration = .seconds(1)

    let connection: DBusConnection
    private let submit: @Sendable (ServiceRequest) -> Void
    private let version: String
    private let current: Mutex<ServiceSnapshot>
    private let published = Mutex(Published())
    private let waiters = Mutex<[Waiter]>([])

    private struct Waiter {
        var call: DBusMethodCall
        var deadline: Timestamp
    }

    /// What was last announced per object, to emit only meaningful changes, and not too often.
    private struct Published {
        var regions: [String: [DBusValue]] = [:]
        var venues: [String: [DBusValue]] = [:]
        var beacons: [BeaconIdentity: (values: [DBusValue], emitted: Timestamp)] = [:]
        var manager: [DBusValue] = []
    }

    /// Connects, exports the manager and owns `org.beacond`; fails clearly if the name is taken.
    static func start(
        bus: DBusConnection.Bus, snapshot: ServiceSnapshot, version: String,
        submit: @escaping @Sendable (ServiceRequest) -> Void
    ) async throws(DBusError) -> BusService {
        let connection = try DBusConnection.connect(bus)
        let service = BusService(connection: connection, snapshot: snapshot, version: version, submit: submit)
        connection.objects.setObjectManager(at: BusPaths.root)
        connection.export(BusPaths.root, interfaces: [service.managerDeclaration()])
        service.publish(snapshot, events: [])
        connection.subscribe(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged") {
            [weak service] signal in
            guard signal.arguments.count == 3, let name = signal.arguments[0].string, name.hasPrefix(":"),
                signal.arguments[2].string == ""
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
        connection: DBusConnection, snapshot: ServiceSnapshot, version: String,
        submit: @escaping @Sendable (ServiceRequest) -> Void
    ) {
        self.connection = connection
        self.submit = submit
        self.version = version
        current = Mutex(snapshot)
    }

    private var snapshot: ServiceSnapshot { current.withLock { $0 } }

    private func clientLeft(_ name: String) {
        waiters.withLock { $0.removeAll { $0.call.sender == name } }
        submit(.clientLeft(name))
    }

    // MARK: Publishing the engine's state

    /// Called by the engine's owner after a step: objects appear and go,
    /// signals go out, properties change (coalesced), waiters get answers.
    func publish(_ snapshot: ServiceSnapshot, events: [EngineEvent]) {
        current.withLock { $0 = snapshot }
        for event in events {
            switch event {
            case .region(let transition) where transition.notify && transition.kind != .determinedOutside:
                connection.emit(
                    path: BusPaths.root, interface: Self.managerInterface,
                    member: transition.kind == .entered ? "RegionEntered" : "RegionExited",
                    arguments: [.string(transition.regionID), .objectPath(BusPaths.region(transition.regionID))])
            case .nearestVenueChanged(let venue):
                connection.emit(
                    path: BusPaths.root, interface: Self.managerInterface, member: "NearestVenueChanged",
                    arguments: [.string(venue?.venueID ?? ""), venue.map { BusValues.venue($0, now: snapshot.time) } ?? .vardict([])])
            default:
                break
            }
        }
        syncRegions(snapshot)
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

    private func syncRegions(_ snapshot: ServiceSnapshot) {
        var changed: [(String, [String])] = []
        var added: [RegionDefinition] = []
        var removed: [String] = []
        published.withLock { published in
            let live = Dictionary(snapshot.regions.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            for id in published.regions.keys where live[id] == nil {
                published.regions[id] = nil
                removed.append(id)
            }
            for region in snapshot.regions {
                let values = regionProperties(region, snapshot).map(\.1)
                if let old = published.regions[region.id] {
                    if old != values { changed.append((region.id, ["State"])) }
                } else {
                    added.append(region)
                }
                published.regions[region.id] = values
            }
        }
        for id in removed { connection.unexport(BusPaths.region(id)) }
        for region in added { connection.export(BusPaths.region(region.id), interfaces: [regionDeclaration(region)]) }
        for (id, names) in changed {
            connection.emitPropertiesChanged(BusPaths.region(id), interface: Self.regionInterface, names: names)
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
                let values = venueProperties(venue.id, snapshot).map(\.1)
                if let old = published.venues[venue.id] {
                    if Self.meaningfullyDifferent(old, values) { changed.append(venue.id) }
                } else {
                    added.append(venue.id)
                }
                if published.venues[venue.id] == nil || changed.contains(venue.id) { published.venues[venue.id] = values }
            }
        }
        for id in removed { connection.unexport(BusPaths.venue(id)) }
        for id in added { connection.export(BusPaths.venue(id), interfaces: [venueDeclaration(id)]) }
        for id in changed {
            connection.emitPropertiesChanged(BusPaths.venue(id), interface: Self.venueInterface, names: ["Proximity", "Distance", "Nearest"])
        }
    }

    private func syncBeacons(_ snapshot: ServiceSnapshot) {
        var added: [BeaconIdentity] = []
        var removed: [BeaconIdentity] = []
        var changed: [(BeaconIdentity, [String])] = []
        published.withLock { published in
            for identity in published.beacons.keys where snapshot.rangedByIdentity[identity] == nil {
                published.beacons[identity] = nil
                removed.append(identity)
            }
            for beacon in snapshot.ranged {
                let properties = BusValues.beaconProperties(beacon)
                let values = properties.map(\.1)
                guard let old = published.beacons[beacon.identity] else {
                    published.beacons[beacon.identity] = (values, snapshot.time)
                    added.append(beacon.identity)
                    continue
                }
                guard snapshot.time - old.emitted >= Self.coalescing, Self.meaningfullyDifferent(old.values, values) else {
                    continue
                }
                let names = zip(properties, old.values).filter { $0.0.1 != $0.1 }.map(\.0.0)
                published.beacons[beacon.identity] = (values, snapshot.time)
                changed.append((beacon.identity, names))
            }
        }
        for identity in removed { connection.unexport(BusPaths.beacon(identity)) }
        for identity in added { connection.export(BusPaths.beacon(identity), interfaces: [beaconDeclaration(identity)]) }
        for (identity, names) in changed {
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

    /// A change worth a signal: any text, flag or integer, or a number that moved by more than 5%.
    static func meaningfullyDifferent(_ old: [DBusValue], _ new: [DBusValue]) -> Bool {
        zip(old, new).contains { a, b in
            switch (a, b) {
            case (.double(let x), .double(let y)):
                return abs(x - y) > 0.05 * max(abs(x), abs(y), 0.01)
            case (.uint64, .uint64):
                return false  // LastSeen moves with every packet: not a change by itself
            default:
                return a != b
            }
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
        ]
    }

    private func regionProperties(_ region: RegionDefinition, _ snapshot: ServiceSnapshot) -> [(String, DBusValue)] {
        // Major and Minor are absent when the region takes any (SPEC section 6).
        var properties: [(String, DBusValue)] = [("Id", .string(region.id)), ("Uuid", .string(region.constraint.uuid.uuidString))]
        if let major = region.constraint.major { properties.append(("Major", .uint16(major))) }
        if let minor = region.constraint.minor { properties.append(("Minor", .uint16(minor))) }
        properties.append(("State", .string((snapshot.regionStates[region.id] ?? .unknown).rawValue)))
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

    private func managerDeclaration() -> DBusInterface {
        let signatures = ["Available": "b", "Source": "s", "Adapter": "s", "NearestVenue": "s", "PreferredVenue": "s", "Version": "s"]
        let names = ["Available", "Source", "Adapter", "NearestVenue", "PreferredVenue", "Version"]
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
                    guard let id = call.arguments[0].string else { return }
                    self?.submit(.stopMonitoring(id: id, call))
                },
                .init("SetPreferredVenue", inputs: [.init("id", "s")]) { [weak self] call in
                    let id = call.arguments[0].string ?? ""
                    self?.submit(.setPreferredVenue(id.isEmpty ? nil : id, call))
                },
                .init("Reload") { [weak self] call in self?.submit(.reload(call)) },
            ],
            properties: names.map { name in
                .init(name, signatures[name]!) { [weak self] in
                    guard let self else { return .string("") }
                    return self.managerProperties(self.snapshot).first { $0.0 == name }!.1
                }
            },
            signals: [
                .init("RegionEntered", [.init("id", "s"), .init("region", "o")]),
                .init("RegionExited", [.init("id", "s"), .init("region", "o")]),
                .init("NearestVenueChanged", [.init("id", "s"), .init("venue", "a{sv}")]),
                .init("AvailabilityChanged", [.init("available", "b"), .init("reason", "s")]),
            ])
    }

    private func regionDeclaration(_ region: RegionDefinition) -> DBusInterface {
        let id = region.id
        let signatures: [(String, String)] = [
            ("Id", "s"), ("Uuid", "s"), ("Major", "q"), ("Minor", "q"), ("State", "s"), ("NotifyOnEntry", "b"),
            ("NotifyOnExit", "b"), ("Owner", "s"),
        ].filter { name, _ in
            (name != "Major" || region.constraint.major != nil) && (name != "Minor" || region.constraint.minor != nil)
        }
        return DBusInterface(
            name: Self.regionInterface,
            properties: signatures.map { name, signature in
                .init(name, signature) { [weak self] in
                    guard let self, let region = self.snapshot.regions.first(where: { $0.id == id }) else { return .string("") }
                    return self.regionProperties(region, self.snapshot).first { $0.0 == name }!.1
                }
            })
    }

    private func venueDeclaration(_ id: String) -> DBusInterface {
        let signatures: [(String, String)] = [("Id", "s"), ("Name", "s"), ("Proximity", "s"), ("Distance", "d"), ("Nearest", "b")]
        return DBusInterface(
            name: Self.venueInterface,
            properties: signatures.map { name, signature in
                .init(name, signature) { [weak self] in
                    guard let self else { return .string("") }
                    return self.venueProperties(id, self.snapshot).first { $0.0 == name }!.1
                }
            })
    }

    private func beaconDeclaration(_ identity: BeaconIdentity) -> DBusInterface {
        let order = ["Uuid", "Major", "Minor", "Rssi", "FilteredRssi", "MeasuredPower", "Distance", "Accuracy", "Proximity", "LastSeen", "Address", "Venue"]
        return DBusInterface(
            name: Self.beaconInterface,
            properties: order.map { name in
                .init(name, BusValues.beaconSignatures[name]!) { [weak self] in
                    guard let beacon = self?.snapshot.rangedByIdentity[identity] else { return .string("") }
                    return BusValues.beaconProperties(beacon).first { $0.0 == name }!.1
                }
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
        guard let timeout = call.arguments[0].integer, timeout <= Self.longestWait else {
            call.fail(BeacondError.invalidArguments("timeout_ms must be at most \(Self.longestWait) (5 minutes)"))
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

    private func requestState(_ call: DBusMethodCall) {
        let id = call.arguments[0].string ?? ""
        guard let state = snapshot.regionStates[id] else {
            call.fail(BeacondError.unknownRegion("no region '\(Self.printable(id))' is monitored"))
            return
        }
        call.reply([.string(state.rawValue)])
    }

    private func startMonitoring(_ call: DBusMethodCall) {
        do throws(DBusError) {
            let id = call.arguments[0].string ?? ""
            guard Identifier.isValid(id) else {
                throw BeacondError.invalidArguments("region id must be \(Identifier.rule)")
            }
            guard let constraint = try BusValues.constraint(call.arguments[1], allowEmpty: false) else { return }
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
            let owned = snapshot.regions.filter { $0.owner == call.sender }.count
            guard owned < Self.regionsPerClient else {
                throw BeacondError.tooManyRegions("a client may monitor at most \(Self.regionsPerClient) regions; stop one first")
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
