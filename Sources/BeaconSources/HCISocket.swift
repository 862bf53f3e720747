import BeaconCore
import CBluetooth
import Foundation

/// Opening a raw HCI socket through libbluetooth, with errors that say what to do.
///
/// This is the first step of the `hci` source; it fails early and clearly on
/// machines without Bluetooth (containers, network namespaces, kernels
/// without it), without an adapter, or without the capabilities to scan.
public enum HCISocket {
    /// Resolves `hciN` (or the first adapter) and opens it; returns the descriptor.
    public static func open(adapter: String?) throws(SourceError) -> Int32 {
        let probe = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        if probe < 0 { throw .unavailable(socketProblem(errno)) }
        close(probe)
        let id: Int32
        if let adapter {
            id = hci_devid(adapter)
            guard id >= 0 else {
                throw .unavailable("no Bluetooth adapter named \(adapter); list adapters with `hciconfig` or `btmgmt info`")
            }
        } else {
            id = hci_get_route(nil)
            guard id >= 0 else {
                throw .unavailable(
                    "no Bluetooth adapter is up; check `hciconfig` (then `sudo hciconfig hci0 up`) "
                        + "and `rfkill list` (then `sudo rfkill unblock bluetooth`)")
            }
        }
        let descriptor = hci_open_dev(id)
        guard descriptor >= 0 else {
            throw .unavailable("cannot open hci\(id): \(String(cString: strerror(errno)))")
        }
        return descriptor
    }

    private static func socketProblem(_ code: Int32) -> String {
        let detail = String(cString: strerror(code))
        switch code {
        case EAFNOSUPPORT:
            return "this kernel offers no Bluetooth sockets (socket(AF_BLUETOOTH): \(detail)). "
                + "Containers and network namespaces have none, and neither do kernels without the bluetooth module "
                + "(try `sudo modprobe bluetooth`). Without a radio, use --source simulate or --source replay:FILE."
        case EPERM, EACCES:
            return "not allowed to open a raw HCI socket (\(detail)); grant CAP_NET_RAW and CAP_NET_ADMIN: "
                + "`sudo setcap cap_net_raw,cap_net_admin+eip $(command -v beacond)`, or in the systemd unit "
                + "`AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN`"
        default:
            return "cannot open a Bluetooth socket: \(detail)"
        }
    }
}
