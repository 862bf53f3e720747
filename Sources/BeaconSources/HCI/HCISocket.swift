import BeaconCore
import CBluetooth
import Glibc

/// A raw HCI socket opened through libbluetooth: the real `HCIChannel`.
///
/// Opening fails early and clearly on machines without Bluetooth
/// (containers, network namespaces, kernels without it), without an
/// adapter, with the adapter down, or without the capabilities to scan.
public final class HCISocket: HCIChannel {
    public let name: String
    private let deviceID: Int32
    private let descriptor: Int32

    /// Opens `hciN`, or the first adapter that is up.
    public init(adapter: String?) throws(SourceError) {
        let probe = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        if probe < 0 { throw .unavailable(Self.socketProblem(errno)) }
        close(probe)
        let id: Int32
        if let adapter {
            id = hci_devid(adapter)
            guard id >= 0 else {
                throw .unavailable("no Bluetooth adapter named \(adapter); list adapters with `hciconfig` or `btmgmt info`")
            }
        } else {
            id = hci_get_route(nil)
            guard id >= 0 else { throw .unavailable("no Bluetooth adapter is up; \(Self.bringUpAdvice("hci0"))") }
        }
        name = "hci\(id)"
        deviceID = id
        guard Self.isUp(id) else { throw .unavailable("\(name) is down; \(Self.bringUpAdvice(name))") }
        descriptor = hci_open_dev(id)
        guard descriptor >= 0 else { throw .unavailable("cannot open \(name): \(Self.describe(errno))") }
    }

    deinit {
        hci_close_dev(descriptor)
    }

    public var isAdapterUp: Bool { Self.isUp(deviceID) }

    public func filter() throws(SourceError) -> HCISocketFilter {
        var raw = hci_filter()
        var length = socklen_t(MemoryLayout<hci_filter>.size)
        guard getsockopt(descriptor, SOL_HCI, HCI_FILTER, &raw, &length) == 0 else {
            throw .unavailable("cannot read \(name)'s socket filter: \(Self.describe(errno))")
        }
        return HCISocketFilter(
            typeMask: raw.type_mask, eventMask: UInt64(raw.event_mask.0) | UInt64(raw.event_mask.1) << 32, opcode: raw.opcode)
    }

    public func setFilter(_ filter: HCISocketFilter) throws(SourceError) {
        var raw = hci_filter()
        raw.type_mask = filter.typeMask
        raw.event_mask = (UInt32(truncatingIfNeeded: filter.eventMask), UInt32(truncatingIfNeeded: filter.eventMask >> 32))
        raw.opcode = filter.opcode
        guard setsockopt(descriptor, SOL_HCI, HCI_FILTER, &raw, socklen_t(MemoryLayout<hci_filter>.size)) == 0 else {
            throw .unavailable("cannot set \(name)'s socket filter: \(Self.describe(errno))")
        }
    }

    public func send(_ packet: [UInt8]) throws(SourceError) {
        let written = packet.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == packet.count else {
            let code = errno
            if code == EPERM || code == EACCES {
                throw .unavailable("not allowed to send HCI commands to \(name); \(Self.capabilityAdvice)")
            }
            throw .unavailable("cannot send to \(name): \(Self.describe(code))")
        }
    }

    public func receive(timeout: Duration) throws(SourceError) -> [UInt8]? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = max(0, min(Double(Int32.max), (timeout / .milliseconds(1)).rounded(.up)))
        let ready = poll(&poller, 1, Int32(milliseconds))
        if ready < 0 {
            let code = errno
            if code == EINTR { return nil }
            // Returned at once, it would have the scan loop spin a core (ENOMEM, EINVAL).
            throw .unavailable("cannot wait for \(name)'s events (\(Self.describe(code)))")
        }
        guard ready > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 1 + 2 + 255)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count >= 0 else {
            let code = errno
            if code == EAGAIN || code == EINTR { return nil }
            throw .unavailable("\(name) stopped delivering (\(Self.describe(code))): removed, reset or powered off")
        }
        return Array(buffer[..<count])
    }

    private static func isUp(_ id: Int32) -> Bool {
        var info = hci_dev_info()
        return hci_devinfo(id, &info) == 0 && info.flags & (1 << UInt32(HCI_UP)) != 0
    }

    private static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }

    private static func bringUpAdvice(_ name: String) -> String {
        "check `hciconfig` (then `sudo hciconfig \(name) up`) and `rfkill list` (then `sudo rfkill unblock bluetooth`)"
    }

    static let capabilityAdvice =
        "grant CAP_NET_RAW and CAP_NET_ADMIN: `sudo setcap cap_net_raw,cap_net_admin+eip $(command -v beacond)`, "
        + "or in the systemd unit `AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN`"

    private static func socketProblem(_ code: Int32) -> String {
        switch code {
        case EAFNOSUPPORT:
            "this kernel offers no Bluetooth sockets (socket(AF_BLUETOOTH): \(describe(code))). "
                + "Containers and network namespaces have none, and neither do kernels without the bluetooth module "
                + "(try `sudo modprobe bluetooth`). Without a radio, use --source simulate or --source replay:FILE."
        case EPERM, EACCES:
            "not allowed to open a raw HCI socket (\(describe(code))); \(capabilityAdvice)"
        default:
            "cannot open a Bluetooth socket: \(describe(code))"
        }
    }
}
