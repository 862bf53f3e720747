/// An HCI command as the host sends it to the controller: the few the `hci`
/// source needs to set up a passive LE scan, and their wire form.
///
/// Legacy (0x200B/0x200C) and extended (0x2041/0x2042) scanning are separate
/// families: a controller that has seen one refuses the other with Command
/// Disallowed, so a scan uses one family throughout (`ScanCommands`).
public struct HCICommand: Sendable, Equatable, CustomStringConvertible {
    /// OGF (6 bits) and OCF (10 bits), as `(ogf << 10) | ocf`.
    public var opcode: UInt16
    public var parameters: [UInt8]

    public init(opcode: UInt16, parameters: [UInt8] = []) {
        self.opcode = opcode
        self.parameters = parameters
    }

    /// The H4 packet written to a raw HCI socket: type 0x01, opcode (LE), length, parameters.
    public var packet: [UInt8] {
        [0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8), UInt8(parameters.count)] + parameters
    }

    public static let readLocalSupportedCommandsOpcode: UInt16 = 0x1002

    /// Read Local Supported Commands: the 64-octet bitmap that says which
    /// scanning family the controller really has (its HCI version does not).
    public static let readLocalSupportedCommands = HCICommand(opcode: readLocalSupportedCommandsOpcode)

    public var description: String {
        let name = switch opcode {
        case Self.readLocalSupportedCommandsOpcode: "Read Local Supported Commands"
        case ScanCommands.legacy.parametersOpcode: "LE Set Scan Parameters"
        case ScanCommands.legacy.enableOpcode: "LE Set Scan Enable"
        case ScanCommands.extended.parametersOpcode: "LE Set Extended Scan Parameters"
        case ScanCommands.extended.enableOpcode: "LE Set Extended Scan Enable"
        default: "command"
        }
        return "\(name) (0x\(String(opcode, radix: 16, uppercase: true)))"
    }
}

/// One family of LE scanning commands.
public enum ScanCommands: Sendable, Equatable {
    case legacy
    case extended

    public var parametersOpcode: UInt16 { self == .legacy ? 0x200B : 0x2041 }
    public var enableOpcode: UInt16 { self == .legacy ? 0x200C : 0x2042 }

    /// A passive scan (no scan requests: nothing is sent on the air) of the
    /// 1M PHY, with the given interval and window in units of 0.625 ms, from
    /// the public address, accepting every advertiser.
    public func scanParameters(interval: UInt16, window: UInt16) -> HCICommand {
        let timing: [UInt8] = [0x00, UInt8(interval & 0xFF), UInt8(interval >> 8), UInt8(window & 0xFF), UInt8(window >> 8)]
        switch self {
        case .legacy:
            return HCICommand(opcode: parametersOpcode, parameters: timing + [0x00, 0x00])
        case .extended:
            // Own address type, filter policy, PHYs (bit 0: LE 1M), then that PHY's type, interval, window.
            return HCICommand(opcode: parametersOpcode, parameters: [0x00, 0x00, 0x01] + timing)
        }
    }

    /// Scanning on or off. Duplicate filtering is always off: every
    /// advertisement is a sample for the ranger.
    public func scanEnable(_ enable: Bool) -> HCICommand {
        let flag: UInt8 = enable ? 1 : 0
        switch self {
        case .legacy:
            return HCICommand(opcode: enableOpcode, parameters: [flag, 0x00])
        case .extended:
            // Duration 0 and period 0: scan until told to stop.
            return HCICommand(opcode: enableOpcode, parameters: [flag, 0x00, 0x00, 0x00, 0x00, 0x00])
        }
    }

    /// Extended scanning when the controller lists both extended scan
    /// commands (octet 37, bits 5 and 6), legacy otherwise.
    public init(supportedCommands bitmap: ArraySlice<UInt8>) {
        let octet = bitmap.count > 37 ? bitmap[bitmap.startIndex + 37] : 0
        self = octet & 0b0110_0000 == 0b0110_0000 ? .extended : .legacy
    }
}

/// The controller's answer to a command: Command Complete (0x0E) or Command Status (0x0F).
public struct HCICommandOutcome: Sendable, Equatable {
    public var opcode: UInt16
    public var status: HCIStatus
    /// Command Complete's return parameters after the status byte (empty for Command Status).
    public var returnParameters: ArraySlice<UInt8>

    public static let commandCompleteCode: UInt8 = 0x0E
    public static let commandStatusCode: UInt8 = 0x0F

    /// Reads an event packet (no H4 byte); `nil` if it is not a well-formed
    /// Command Complete or Command Status.
    public init?(event packet: ArraySlice<UInt8>) {
        let start = packet.startIndex
        guard packet.count >= 2, packet.count - 2 == Int(packet[start + 1]) else { return nil }
        switch packet[start] {
        case Self.commandCompleteCode:
            // Num_HCI_Command_Packets, opcode (LE), status, return parameters.
            guard packet.count >= 6 else { return nil }
            opcode = UInt16(packet[start + 3]) | UInt16(packet[start + 4]) << 8
            status = HCIStatus(rawValue: packet[start + 5])
            returnParameters = packet[(start + 6)...]
        case Self.commandStatusCode:
            // Status, Num_HCI_Command_Packets, opcode (LE).
            guard packet.count == 6 else { return nil }
            status = HCIStatus(rawValue: packet[start + 2])
            opcode = UInt16(packet[start + 4]) | UInt16(packet[start + 5]) << 8
            returnParameters = []
        default:
            return nil
        }
    }
}

/// An HCI status code, named for the ones a scan meets.
public struct HCIStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = HCIStatus(rawValue: 0x00)
    public static let unknownCommand = HCIStatus(rawValue: 0x01)
    /// Also what a controller says while the kernel's own scan is running.
    public static let commandDisallowed = HCIStatus(rawValue: 0x0C)
    public static let invalidParameters = HCIStatus(rawValue: 0x12)

    public var description: String {
        let name = switch self {
        case .success: "Success"
        case .unknownCommand: "Unknown HCI Command"
        case .commandDisallowed: "Command Disallowed"
        case .invalidParameters: "Invalid HCI Command Parameters"
        default: "error"
        }
        return "\(name) (0x\(String(rawValue, radix: 16, uppercase: true)))"
    }
}
