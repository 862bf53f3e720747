/// Why an advertisement's payload was rejected. Each case says where, so a
/// dropped frame can be traced back to its bytes.
public enum FrameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An AD structure's length byte points past the end of the payload.
    case truncatedStructure(offset: Int, declaredLength: Int, remaining: Int)
    /// A manufacturer-specific AD structure too short to hold its company identifier.
    case manufacturerDataWithoutCompany(offset: Int, length: Int)
    /// Apple's iBeacon type (0x02) with the wrong length byte, or fewer than its 21 payload bytes.
    case malformedIBeacon(offset: Int, lengthByte: UInt8, payloadSize: Int)

    public var description: String {
        switch self {
        case let .truncatedStructure(offset, declared, remaining):
            "AD structure at offset \(offset) declares \(declared) bytes but only \(remaining) remain"
        case let .manufacturerDataWithoutCompany(offset, length):
            "manufacturer data at offset \(offset) has \(length) bytes, too short for a company identifier"
        case let .malformedIBeacon(offset, lengthByte, payloadSize):
            "iBeacon at offset \(offset) has length byte 0x\(hexByte(lengthByte)) and \(payloadSize) payload bytes; "
                + "expected 0x15 and at least 21"
        }
    }
}
