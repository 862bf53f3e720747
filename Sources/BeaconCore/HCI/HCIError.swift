/// Why an HCI event could not be read. Carries enough to find the bad byte.
public enum HCIError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Fewer than the two header bytes (event code, parameter length).
    case missingHeader(available: Int)
    /// The parameter length byte disagrees with the bytes present.
    case lengthMismatch(declared: Int, available: Int)
    /// An LE Meta event without its subevent code.
    case missingSubevent
    /// An advertising report event with a report count of 0 or too many to fit.
    case invalidReportCount(Int)
    /// A report ends before its fixed fields or its data do.
    case truncatedReport(index: Int, needed: Int, available: Int)
    /// Bytes left over after the last report.
    case trailingBytes(Int)

    public var description: String {
        switch self {
        case let .missingHeader(available):
            "HCI event has \(available) bytes, too short for its header"
        case let .lengthMismatch(declared, available):
            "HCI event declares \(declared) parameter bytes but carries \(available)"
        case .missingSubevent:
            "LE Meta event without a subevent code"
        case let .invalidReportCount(count):
            "advertising report event claims \(count) reports"
        case let .truncatedReport(index, needed, available):
            "advertising report \(index) needs \(needed) more bytes, \(available) remain"
        case let .trailingBytes(count):
            "\(count) bytes left after the last advertising report"
        }
    }
}
