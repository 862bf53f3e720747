import BeaconCore
import BeaconSources
import Foundation
import Synchronization

/// A controller behind the `HCIChannel` seam: it answers each command as a
/// real one would (Command Complete with a status, the supported-commands
/// bitmap for 0x1002) and queues advertising reports, so the bytes the `hci`
/// source sends and the events it reads can be checked without a radio.
final class ScriptedController: HCIChannel, Sendable {
    struct State {
        var adapterUp = true
        /// Octet 37 of the supported-commands bitmap (bits 5, 6: extended scanning).
        var octet37: UInt8 = 0
        /// Status answered per opcode (Success if absent); `nil` answers nothing.
        var statuses: [UInt16: HCIStatus?] = [:]
        var filter = ScriptedController.originalFilter
        var filters: [HCISocketFilter] = []
        var sent: [[UInt8]] = []
        var incoming: [[UInt8]] = []
        /// Reports queued once scanning is enabled (or at once, when listening to the kernel's scan).
        var reports: [[UInt8]] = []
        /// A report sent just before the first answer to this opcode, as a busy controller interleaves them.
        var interleave: (opcode: UInt16, report: [UInt8])?
        /// Thrown by `receive` once the queue is empty: the adapter went away.
        var failure: SourceError?
    }

    /// What `hcitool` or bluetoothd might have left on a socket: everything.
    static let originalFilter = HCISocketFilter(typeMask: 0xFFFF_FFFF, eventMask: .max, opcode: 0)

    let name: String
    let state: Mutex<State>

    init(name: String = "hci0", _ configure: (inout State) -> Void = { _ in }) {
        self.name = name
        var state = State()
        configure(&state)
        self.state = Mutex(state)
    }

    var isAdapterUp: Bool { state.withLock { $0.adapterUp } }
    var sent: [[UInt8]] { state.withLock { $0.sent } }
    var sentOpcodes: [UInt16] { sent.map { UInt16($0[1]) | UInt16($0[2]) << 8 } }

    func filter() throws(SourceError) -> HCISocketFilter { state.withLock { $0.filter } }

    func setFilter(_ filter: HCISocketFilter) throws(SourceError) {
        state.withLock {
            $0.filter = filter
            $0.filters.append(filter)
        }
    }

    func send(_ packet: [UInt8]) throws(SourceError) {
        state.withLock { state in
            state.sent.append(packet)
            let opcode = UInt16(packet[1]) | UInt16(packet[2]) << 8
            if let interleave = state.interleave, interleave.opcode == opcode {
                state.incoming.append(interleave.report)
                state.interleave = nil
            }
            guard let status = state.statuses[opcode] ?? .success else { return }
            var returned: [UInt8] = []
            if opcode == HCICommand.readLocalSupportedCommandsOpcode {
                returned = [UInt8](repeating: 0xFF, count: 64)
                returned[37] = state.octet37
            }
            state.incoming.append([0x04, 0x0E, UInt8(4 + returned.count), 0x01, packet[1], packet[2], status.rawValue] + returned)
            if opcode == ScanCommands.legacy.enableOpcode || opcode == ScanCommands.extended.enableOpcode,
                packet[4] == 1, status == .success
            {
                state.incoming += state.reports
            }
        }
    }

    func receive(timeout: Duration) throws(SourceError) -> [UInt8]? {
        let (packet, failure) = state.withLock { state -> ([UInt8]?, SourceError?) in
            state.incoming.isEmpty ? (nil, state.failure) : (state.incoming.removeFirst(), nil)
        }
        if let failure { throw failure }
        // Nothing queued: wait a little of the timeout, as a socket's poll
        // would, rather than have the source's thread spin (each test's
        // spinning thread starved the others when the whole suite ran).
        if packet == nil { usleep(UInt32(min(timeout, .milliseconds(1)) / .microseconds(1))) }
        return packet
    }

    /// An LE Meta event with one legacy report of an iBeacon, H4 byte first.
    static func iBeaconReport(minor: UInt16, rssi: Int8 = -60, extended: Bool = false) -> [UInt8] {
        let frame = IBeaconFrame(
            identity: BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: minor),
            measuredPower: -59)
        let type: AdvertisingReport.Kind = extended ? .extended([.legacyPDU]) : .legacy(.advNonconnInd)
        let report = AdvertisingReport(
            kind: type, addressType: 1, address: BluetoothAddress(0xC0, 0, 0, 0, 0, UInt8(minor & 0xFF)), rssi: rssi,
            data: ([0x02, 0x01, 0x06] + frame.advertisingData)[...])
        return [0x04] + HCIEvent.advertisingReportEvent([report])
    }
}
