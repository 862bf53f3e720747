import BeaconCore
import DBus

/// `bluez[:hciN]`: advertisements through BlueZ's own D-Bus API, as any
/// other Bluetooth client on the machine would get them. Needs no
/// capability and shares the radio with bluetoothd's other users.
///
/// It finds the adapter through ObjectManager, sets the discovery filter
/// (`Transport` le and `DuplicateData` true, explicitly: BlueZ's default is
/// false whatever its documentation says), starts discovery, and turns
/// `Device1` RSSI + ManufacturerData from InterfacesAdded and
/// PropertiesChanged into advertisements. It re-arms by itself when
/// bluetoothd restarts, when the adapter is removed and comes back, and when
/// it is powered off and on; each change is an availability event. When
/// discovery has delivered nothing for `quietCheck`, it restarts its own
/// discovery session (StopDiscovery, StartDiscovery: other clients' sessions
/// go on), a bounded number of times (`SilenceRecovery`), and notes it.
public struct BlueZSource: Sendable {
    public var adapter: String?
    public var bus: DBusConnection.Bus
    /// Long enough for BlueZ's duplicate-filtered rate (about one report per
    /// beacon per 10.24 s discovery restart on some Pis) not to look deaf.
    public var quietCheck: Duration
    public var recoveryAttempts: Int

    public init(adapter: String?, bus: DBusConnection.Bus = .system, quietCheck: Duration = .seconds(30), recoveryAttempts: Int = 3) {
        self.adapter = adapter
        self.bus = bus
        self.quietCheck = quietCheck
        self.recoveryAttempts = recoveryAttempts
    }

    enum Input: Sendable {
        /// org.bluez's new owner; empty when bluetoothd left the bus.
        case ownerChanged(String)
        case signal(DBusSignal)
        /// A second has passed: time to look at the silence.
        case tick
    }

    /// Delivers advertisements and availability changes until cancelled.
    /// Fails at the start if there is no system bus, no bluetoothd or no adapter.
    public func run(_ deliver: (SourceEvent) -> Void) async throws(SourceError) {
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.connect(bus)
        } catch {
            throw .unavailable("cannot reach the \(bus) bus to talk to BlueZ: \(error.message)")
        }
        defer { connection.close() }
        let (inputs, continuation) = AsyncStream<Input>.makeStream(bufferingPolicy: .bufferingNewest(1 << 16))
        connection.subscribe(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged", arg0: BlueZ.service) {
            continuation.yield(.ownerChanged($0.arguments.last?.string ?? ""))
        }
        connection.subscribe(sender: BlueZ.service, interface: BlueZ.objectManager) { continuation.yield(.signal($0)) }
        connection.subscribe(sender: BlueZ.service, interface: BlueZ.properties, member: "PropertiesChanged") {
            continuation.yield(.signal($0))
        }
        let ticker = Task {
            while (try? await Task.sleep(for: .seconds(1))) != nil { continuation.yield(.tick) }
        }
        defer { ticker.cancel() }
        var session = BlueZSession(
            wanted: adapter, connection: connection,
            recovery: SilenceRecovery(firstAfter: quietCheck, attempts: recoveryAttempts, now: .now))
        if let problem = await session.arm(deliver) { throw .unavailable(problem) }
        for await input in inputs {
            await session.handle(input, deliver)
        }
        await session.stopDiscovery()
    }
}

/// Names of BlueZ's D-Bus API.
enum BlueZ {
    static let service = "org.bluez"
    static let adapter = "org.bluez.Adapter1"
    static let device = "org.bluez.Device1"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let properties = "org.freedesktop.DBus.Properties"
}

/// The bluez source's view of bluetoothd: which adapter it uses, whether it
/// is discovering, and the devices seen under it.
struct BlueZSession {
    let wanted: String?
    let connection: DBusConnection
    /// The unique name of org.bluez's owner: signals from anyone else are ignored.
    private var owner: String?
    private var adapterPath: String?
    private var devices: [String: BlueZDevice] = [:]
    private var reported: (available: Bool, reason: String)?
    private var recovery: SilenceRecovery
    /// When to ask for discovery again after BlueZ refused it (the source's
    /// ticks come once a second), and whether the refused ask was a silence
    /// re-arm's: then the retry finishes that re-arm, and the recovery's count
    /// goes on (BlueZ 5.66 refuses a StartDiscovery that follows our own
    /// StopDiscovery too closely: the kernel answers its Start Service
    /// Discovery Busy until its Stop Discovery has set the state, just after
    /// replying to it).
    private var retryDiscovery: (at: ContinuousClock.Instant, rearm: Bool)?
    static let discoveryRetryInterval: Duration = .seconds(5)
    /// Whether BlueZ holds a discovery session of ours, which is what an
    /// `InProgress` answer to StartDiscovery means when it does.
    private var session = DiscoverySession.none

    /// BlueZ 5.66 drops a client's session when its start is refused, at
    /// StopDiscovery, at power off and with the adapter (src/adapter.c:
    /// discovery_remove, adapter_stop). It is unknown after an unanswered
    /// call, and after a StopDiscovery answered `InProgress` (our start still pending there).
    enum DiscoverySession { case none, ours, unknown }

    init(wanted: String?, connection: DBusConnection, recovery: SilenceRecovery) {
        self.wanted = wanted
        self.connection = connection
        self.recovery = recovery
    }

    static let powerOnAdvice = "`bluetoothctl power on` (and `rfkill unblock bluetooth` if it is blocked)"

    private var adapterName: String { adapterPath.map { String($0.split(separator: "/").last ?? "") } ?? wanted ?? "the adapter" }

    /// Finds bluetoothd and the adapter and starts discovery; returns what is
    /// missing if it cannot even find them, unreported: at the start that
    /// stops beacond (said once, by the service), later it is an availability change.
    mutating func arm(_ deliver: (SourceEvent) -> Void) async -> String? {
        owner = nil
        adapterPath = nil
        devices = [:]
        let objects: [DBusValue]
        do throws(DBusError) {
            let name = try await connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetNameOwner", arguments: [.string(BlueZ.service)])
            owner = name.first?.string
            objects = try await connection.call(
                destination: BlueZ.service, path: "/", interface: BlueZ.objectManager, member: "GetManagedObjects")
        } catch {
            let problem = error.name == "org.freedesktop.DBus.Error.NameHasNoOwner"
                ? "bluetoothd is not running (nobody owns org.bluez on the system bus); start it with `sudo systemctl start bluetooth`"
                : "cannot read BlueZ's objects: \(error)"
            return problem
        }
        let tree = Self.objectTree(objects.first)
        let adapters = tree.filter { $0.value[BlueZ.adapter] != nil }.keys.sorted()
        guard let path = adapters.first(where: matches) else {
            let problem = "BlueZ has no adapter\(wanted.map { " named \($0)" } ?? "") (found: \(adapters.isEmpty ? "none" : adapters.joined(separator: ", "))); check `bluetoothctl list` and `rfkill list`"
            return problem
        }
        for (devicePath, interfaces) in tree where devicePath.hasPrefix(path + "/") {
            if let properties = interfaces[BlueZ.device] { _ = remember(devicePath, properties) }
        }
        await adopt(path, tree[path]?[BlueZ.adapter] ?? [:], deliver)
        return nil
    }

    mutating func handle(_ input: BlueZSource.Input, _ deliver: (SourceEvent) -> Void) async {
        switch input {
        case .ownerChanged(""):
            owner = nil
            adapterPath = nil
            devices = [:]
            report(false, "bluetoothd left the system bus (stopped or restarting); waiting for it to return", deliver)
        case .ownerChanged:
            if let problem = await arm(deliver) { report(false, problem, deliver) }
        case .signal(let signal):
            guard signal.sender == owner else { return }
            await handle(signal, deliver)
        case .tick:
            if let retry = retryDiscovery, adapterPath != nil, ContinuousClock.now >= retry.at {
                await startDiscovery(rearm: retry.rearm, deliver)
            }
            await recoverIfQuiet(deliver)
        }
    }

    /// Restarts our discovery session when it has gone quiet, within `SilenceRecovery`'s bounds.
    private mutating func recoverIfQuiet(_ deliver: (SourceEvent) -> Void) async {
        guard reported?.available == true, let adapterPath else { return }
        switch recovery.step(at: .now) {
        case .rearm(let attempt, let attempts, let quiet):
            do throws(DBusError) {
                _ = try await connection.call(
                    destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, member: "StopDiscovery")
                session = .none
            } catch {
                // Failed ("No discovery started") and NotReady (powered off) say BlueZ holds none;
                // InProgress says ours is there with a call of ours still pending (stop_discovery:
                // client->msg), and anything else is not an answer.
                session = ["org.bluez.Error.Failed", "org.bluez.Error.NotReady"].contains(error.name) ? .none : .unknown
            }
            await startDiscovery(rearm: true, deliver)
            deliver(.note(
                "\(adapterName): no advertisement through BlueZ for \(quiet.configurationText); restarted our discovery "
                    + "(StopDiscovery, StartDiscovery; try \(attempt) of \(attempts))"))
        case .giveUp(let attempts, let quiet):
            deliver(.note(
                "\(adapterName): still no advertisement through BlueZ after \(attempts) restarts of discovery "
                    + "(\(quiet.configurationText) of quiet); leaving it alone until one arrives. Nothing in range, "
                    + "or a deaf radio: `bluetoothctl power off; bluetoothctl power on`"))
        case nil:
            break
        }
    }

    private mutating func handle(_ signal: DBusSignal, _ deliver: (SourceEvent) -> Void) async {
        let arguments = signal.arguments
        switch signal.member {
        case "InterfacesAdded":
            guard let path = arguments.first?.string, arguments.count == 2 else { return }
            let interfaces = Self.interfaces(arguments[1])
            if let properties = interfaces[BlueZ.adapter], adapterPath == nil, matches(path) {
                await adopt(path, properties, deliver)
            }
            if let properties = interfaces[BlueZ.device], isOurs(path) {
                received(path, properties, deliver)
            }
        case "InterfacesRemoved":
            guard let path = arguments.first?.string, let names = arguments.last?.arrayElements?.compactMap(\.string) else { return }
            if path == adapterPath, names.contains(BlueZ.adapter) {
                let name = adapterName
                adapterPath = nil
                devices = [:]
                report(false, "\(name) was removed; waiting for it to come back", deliver)
            } else if names.contains(BlueZ.device) {
                devices[path] = nil
            }
        case "PropertiesChanged":
            guard arguments.count == 3, let interface = arguments[0].string,
                let changed = arguments[1].unwrapped.stringKeyedEntries
            else { return }
            if interface == BlueZ.adapter, signal.path == adapterPath, let powered = changed["Powered"]?.bool {
                if powered {
                    await startDiscovery(deliver)
                } else {
                    retryDiscovery = nil  // powering on asks again
                    session = .none
                    report(false, "\(adapterName) was powered off; \(Self.powerOnAdvice)", deliver)
                }
            } else if interface == BlueZ.device, isOurs(signal.path) {
                received(signal.path, changed, deliver)
            }
        default:
            return
        }
    }

    /// Takes an adapter into use: discovery if it is powered, a wait if not.
    private mutating func adopt(_ path: String, _ properties: [String: DBusValue], _ deliver: (SourceEvent) -> Void) async {
        adapterPath = path
        session = .none
        deliver(.opened(.bluez(adapter: adapterName)))
        if properties["Powered"]?.bool == true {
            await startDiscovery(deliver)
        } else {
            report(false, "\(adapterName) is powered off; \(Self.powerOnAdvice)", deliver)
        }
    }

    /// Asks for discovery; a refusal is said and asked again every
    /// `discoveryRetryInterval` until BlueZ discovers (or the adapter's
    /// power or bluetoothd's coming back asks first). Discovering after
    /// being unavailable starts the silence recovery afresh, unless this
    /// is (the retry of) a silence re-arm.
    private mutating func startDiscovery(rearm: Bool = false, _ deliver: (SourceEvent) -> Void) async {
        guard let adapterPath else { return }
        retryDiscovery = nil
        let again = "asking again every \(Self.discoveryRetryInterval.configurationText)"
        do throws(DBusError) {
            var discovering = try await askToDiscover(adapterPath)
            // Right after our own StopDiscovery (a re-arm), BlueZ 5.66 on Linux
            // refuses for a moment: the kernel answers Busy until its Stop
            // Discovery has set the state. Asked again shortly, not said.
            var quick = rearm ? Self.rearmQuickTries : 0
            while !discovering, quick > 0 {
                quick -= 1
                try? await Task.sleep(for: Self.rearmQuickInterval)
                if Task.isCancelled { return }  // stopping
                discovering = try await askToDiscover(adapterPath)
            }
            guard discovering else {
                retryDiscovery = (.now + Self.discoveryRetryInterval, rearm)
                report(false, "BlueZ answered StartDiscovery on \(adapterName) with InProgress: the kernel did not start our discovery; \(again)", deliver)
                return
            }
            report(true, "discovering through BlueZ on \(adapterName) (Transport le, DuplicateData true)", restartingRecovery: !rearm, deliver)
        } catch {
            retryDiscovery = (.now + Self.discoveryRetryInterval, rearm)
            report(false, "BlueZ refused to discover on \(adapterName): \(error); \(again)", deliver)
        }
    }

    /// How often, and how far apart, a re-arm's refused StartDiscovery is asked again before it is said.
    static let rearmQuickTries = 3
    static let rearmQuickInterval: Duration = .milliseconds(250)

    /// SetDiscoveryFilter (again: a refused client goes back to BlueZ's
    /// pre-set filters, and setting it there is harmless), then StartDiscovery; whether BlueZ now discovers for us. `InProgress` is
    /// BlueZ's answer both to a client already discovering and when the kernel
    /// refused to start (discovery_complete: btd_error_busy): without a
    /// session of ours it is a refusal. Only when that is unknown does the
    /// adapter's Discovering decide, which says any client's discovery.
    private mutating func askToDiscover(_ adapterPath: String) async throws(DBusError) -> Bool {
        let filter = DBusValue.vardict([("Transport", .string("le")), ("DuplicateData", .boolean(true))])
        _ = try await connection.call(
            destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, member: "SetDiscoveryFilter", arguments: [filter])
        do throws(DBusError) {
            _ = try await connection.call(destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, member: "StartDiscovery")
            session = .ours
            return true
        } catch where error.name == "org.bluez.Error.InProgress" {
            guard session != .none else { return false }
            let discovering = try await connection.call(
                destination: BlueZ.service, path: adapterPath, interface: BlueZ.properties, member: "Get",
                arguments: [.string(BlueZ.adapter), .string("Discovering")])
            session = discovering.first?.unwrapped.bool == true ? .ours : .none
            return session == .ours
        } catch {
            if !error.name.hasPrefix("org.bluez.Error.") { session = .unknown }  // unanswered: it may have started
            throw error
        }
    }

    /// Best effort when stopping; bluetoothd also ends our discovery when we
    /// leave the bus. Sent from a task of its own: the source's is cancelled
    /// by now, and a cancelled task's calls fail before they are sent.
    func stopDiscovery() async {
        guard let adapterPath else { return }
        let connection = connection
        await Task {
            _ = try? await connection.call(
                destination: BlueZ.service, path: adapterPath, interface: BlueZ.adapter, member: "StopDiscovery",
                timeout: .seconds(2))
        }.value
    }

    /// A device's properties: delivered as an advertisement when they carry a report.
    private mutating func received(_ path: String, _ properties: [String: DBusValue], _ deliver: (SourceEvent) -> Void) {
        guard remember(path, properties), let advertisement = devices[path]?.advertisement(at: ServiceClock.now()) else { return }
        deliver(.advertisement(advertisement))
        if let tries = recovery.heard(at: .now) {
            deliver(.note("\(adapterName): advertisements came back after restarting discovery (\(SilenceRecovery.count(tries)))"))
        }
    }

    private mutating func remember(_ path: String, _ properties: [String: DBusValue]) -> Bool {
        var device = devices[path] ?? BlueZDevice(address: BlueZDevice.address(fromPath: path))
        let isReport = device.merge(properties)
        devices[path] = device
        return isReport
    }

    private mutating func report(
        _ available: Bool, _ reason: String, restartingRecovery: Bool = true, _ deliver: (SourceEvent) -> Void
    ) {
        if let reported, reported.available == available, reported.reason == reason { return }
        if available, reported?.available != true, restartingRecovery { recovery.restart(at: .now) }
        reported = (available, reason)
        deliver(.availability(available: available, reason: reason))
    }

    private func matches(_ path: String) -> Bool {
        guard let wanted else { return path.hasPrefix("/org/bluez/") }
        return path == "/org/bluez/\(wanted)"
    }

    private func isOurs(_ path: String) -> Bool {
        guard let adapterPath else { return false }
        return path.hasPrefix(adapterPath + "/")
    }

    /// `a{sa{sv}}`: interface → properties.
    static func interfaces(_ value: DBusValue) -> [String: [String: DBusValue]] {
        var result: [String: [String: DBusValue]] = [:]
        for (name, properties) in value.unwrapped.stringKeyedEntries ?? [:] {
            result[name] = properties.unwrapped.stringKeyedEntries ?? [:]
        }
        return result
    }

    /// GetManagedObjects' `a{oa{sa{sv}}}`: path → interface → properties.
    static func objectTree(_ value: DBusValue?) -> [String: [String: [String: DBusValue]]] {
        guard case .dictionary(_, _, let entries)? = value else { return [:] }
        var result: [String: [String: [String: DBusValue]]] = [:]
        for entry in entries {
            guard let path = entry.key.string else { continue }
            result[path] = interfaces(entry.value)
        }
        return result
    }
}
