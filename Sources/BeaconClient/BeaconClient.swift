import BeaconCore
import BeacondAPI
import BeacondBus
import DBus

/// A Swift client of beacond, shaped like Core Location: typed calls, and
/// async sequences for what changes. Every error is a `BeacondError` with a
/// message a person can act on.
///
/// ```swift
/// let client = try await BeaconClient.connect(bus: .system)
/// for try await update in client.nearestVenueUpdates() {
///     print(update.venue?.name ?? "no venue", update.isStationary)
/// }
/// ```
///
/// The connection closes when the client and every sequence it made are gone.
public final class BeaconClient: Sendable {
    public typealias Bus = DBusConnection.Bus
    private typealias Manager1 = Beacond.Manager1

    let connection: DBusConnection
    /// Which of this client's `monitor` sequences holds each region id.
    let regionClaims = RegionClaims()

    /// The most events (`monitor`, `regionEvents`, `events`) a sequence keeps
    /// for a reader that does not take them: one more ends it with
    /// `LimitsExceeded`. beacond paces its signals, so a reader this far
    /// behind is stuck, or holds a sequence it no longer reads.
    public static let mostUnreadEvents = 1_024

    /// Connects to `bus`; beacond need not be running yet (calls then fail with `.serviceNotRunning`).
    public static func connect(bus: Bus = .system) async throws(BeacondError) -> BeaconClient {
        do {
            return BeaconClient(connection: try await DBusConnection.connect(bus))
        } catch {
            throw .bus(name: error.name, message: "\(error.message); \(bus.whatToCheck)")
        }
    }

    private init(connection: DBusConnection) {
        self.connection = connection
    }

    deinit {
        connection.close()
    }

    public var bus: Bus { connection.bus }

    /// This client's unique name on the bus: the owner of the regions it monitors.
    public var uniqueName: String { connection.uniqueName }

    // MARK: Calls

    /// The nearest venue now; `.noVenue` when none is in range and no preferred venue is set.
    public func nearestVenue() async throws(BeacondError) -> Beacond.Venue {
        try Beacond.Venue(dbus: try await call(Manager1.getNearestVenue).first)
    }

    /// One answer from ranging, waiting up to `timeout` for it;
    /// `.locationUnknown` when none came. beacond holds a call at most
    /// `ServiceLimits.longestWait` (5 minutes): a longer `timeout` is
    /// `.invalidArguments`, answered at once.
    public func requestNearestVenue(timeout: Duration) async throws(BeacondError) -> Beacond.Venue {
        let milliseconds = UInt32(clamping: max(0, timeout.wholeMilliseconds))
        let reply = try await call(Manager1.requestNearestVenue, [.uint32(milliseconds)], timeout: timeout + .seconds(5))
        return try Beacond.Venue(dbus: reply.first)
    }

    /// The ranged beacons matching `constraint` (all for `nil`), nearest first.
    public func rangedBeacons(matching constraint: BeaconConstraint? = nil) async throws(BeacondError) -> [Beacond.Beacon] {
        let reply = try await call(Manager1.getRangedBeacons, [constraint?.dbusValue ?? .vardict([])])
        guard let elements = reply.first?.arrayElements else { throw DictionaryReader.malformed("GetRangedBeacons did not answer a list") }
        var beacons: [Beacond.Beacon] = []
        for element in elements {
            beacons.append(try Beacond.Beacon(properties: try DictionaryReader(element, what: Beacond.Beacon1.dictionary.title).entries))
        }
        return beacons
    }

    /// The state of this client's region `id`, else of beacons.yaml's.
    public func regionState(_ id: String) async throws(BeacondError) -> RegionState {
        let reply = try await call(Manager1.requestState, [.string(id)])
        guard let state = reply.first?.string.flatMap(RegionState.init(rawValue:)) else {
            throw DictionaryReader.malformed("RequestState answered \(reply)")
        }
        return state
    }

    /// The venue to answer with when nothing is in range; `nil` for nearest only.
    public func setPreferredVenue(_ id: String?) async throws(BeacondError) {
        _ = try await call(Manager1.setPreferredVenue, [.string(id ?? "")])
    }

    /// Re-reads beacons.yaml; `.invalidConfig` lists every problem, and nothing changes.
    public func reload() async throws(BeacondError) {
        _ = try await call(Manager1.reload)
    }

    /// Every monitored region (beacons.yaml's and every client's), by id.
    public func regions() async throws(BeacondError) -> [Beacond.Region] {
        try await objects(implementing: Beacond.Region1.name).map(Beacond.Region.init(properties:))
            .sorted { ($0.id, $0.owner ?? "") < ($1.id, $1.owner ?? "") }
    }

    /// The ids of beacons.yaml's venues, sorted.
    public func venueIDs() async throws(BeacondError) -> [String] {
        try await objects(implementing: Beacond.Venue1.name).compactMap { $0[Beacond.Venue1.id.name]?.string }.sorted()
    }

    /// The properties of every object implementing `interface` (GetManagedObjects).
    private func objects(implementing interface: String) async throws(BeacondError) -> [[String: DBusValue]] {
        let reply = try await call(
            StandardInterfaces.objectManager, StandardInterfaces.getManagedObjects, [], timeout: .seconds(25))
        guard case .dictionary(_, _, let objects)? = reply.first else {
            throw DictionaryReader.malformed("GetManagedObjects did not answer a dictionary")
        }
        return objects.compactMap { $0.value.stringKeyedEntries?[interface]?.stringKeyedEntries }
    }

    /// Manager1's properties.
    public func status() async throws(BeacondError) -> Beacond.Status {
        let reply = try await call(StandardInterfaces.properties, StandardInterfaces.getAll, [.string(Manager1.name)], timeout: .seconds(25))
        return try Beacond.Status(properties: try DictionaryReader(reply.first, what: "beacond's status").entries)
    }

    /// Monitors `region` as this client's own until `stopMonitoring` or until this client leaves the bus.
    func startMonitoring(_ region: MonitoredRegion) async throws(BeacondError) {
        let options: DBusValue = .declared([
            (Manager1.OptionKey.notifyOnEntry, .boolean(region.notifyOnEntry)), (Manager1.OptionKey.notifyOnExit, .boolean(region.notifyOnExit)),
        ])
        _ = try await call(Manager1.startMonitoring, [.string(region.id), region.constraint.dbusValue, options])
    }

    func stopMonitoring(_ id: String) async throws(BeacondError) {
        _ = try await call(Manager1.stopMonitoring, [.string(id)])
    }

    /// How often a monitor's StopMonitoring is asked again while beacond answers Busy.
    static let stopTries = 50
    static let stopRetryInterval: Duration = .milliseconds(100)

    /// Stops `id` for a monitor that ends, asking again while beacond answers
    /// Busy: stops are not paced, so Busy only says this client has
    /// `queuedPerClient` requests waiting, answered in moments. Given up at
    /// once, the region (and its id) stayed until the client left the bus.
    func stopMonitoringAsking(_ id: String) async {
        for _ in 0..<Self.stopTries {
            do throws(BeacondError) {
                try await stopMonitoring(id)
                return
            } catch where error.code == .busy {
                try? await Task.sleep(for: Self.stopRetryInterval)
            } catch {
                return
            }
        }
    }

    // MARK: Calling

    private func call(_ method: APIMethod, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(25)) async throws(BeacondError) -> [DBusValue] {
        assert(arguments.map(\.signature) == method.inputs.map(\.type.signature), "\(method.name) takes other arguments")
        return try await call(Manager1.name, method.name, arguments, timeout: timeout)
    }

    private func call(_ interface: String, _ member: String, _ arguments: [DBusValue], timeout: Duration) async throws(BeacondError) -> [DBusValue] {
        do {
            return try await connection.call(
                destination: Beacond.busName, path: Beacond.root, interface: interface, member: member, arguments: arguments, timeout: timeout)
        } catch {
            // The bus says NoReply both when a call timed out and when beacond
            // left while the call waited (stopped, or crashed); only the bus
            // knows which.
            if error.name == StandardInterfaces.noReply {
                switch await beacondIsOnTheBus() {
                case false?: throw .serviceNotRunning(BeacondError.notRunning(on: connection.bus))
                case nil: throw BeacondError(error, bus: connection.bus)  // the bus cannot say either
                case true?: break
                }
                // libdbus's own text lists causes a reader cannot tell apart.
                throw .bus(
                    name: error.name,
                    message: "beacond is on the bus but did not answer \(member) within \(timeout.configurationText): it may be stuck "
                        + "(journalctl -u beacond; under systemd its watchdog restarts it)")
            }
            throw BeacondError(error, bus: connection.bus)
        }
    }

    /// Whether org.beacond has an owner now; `nil` when the bus cannot say.
    private func beacondIsOnTheBus() async -> Bool? {
        let reply = try? await connection.call(
            destination: DBusNames.busDriver, path: DBusNames.busDriverPath, interface: DBusNames.busDriver, member: StandardInterfaces.nameHasOwner,
            arguments: [.string(Beacond.busName)])
        return reply?.first?.bool
    }
}
