/// Why a recording could not be read, or could not be read to the end.
///
/// Readers stop at the first of these and keep what they read before it, so
/// a capture cut off by a full disk or a pulled plug still replays.
public enum RecordingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not a btsnoop, pcapng or pcap header, nor `hcidump --raw` text.
    case unrecognisedFormat
    /// A btsnoop header with a version other than 1.
    case unsupportedVersion(UInt32)
    /// A btsnoop datalink this reader does not know (it knows 1001, 1002 and 2001).
    case unsupportedDatalink(UInt32)
    /// A pcap capture of a link type beacond does not read, or a pcapng capture none of whose interfaces has one it reads.
    case unsupportedLinkType(UInt32)
    /// The file ends inside a header or a record.
    case truncated(offset: Int, needed: Int, available: Int)
    /// A record whose lengths cannot be right (included > original, or absurdly large).
    case corruptRecord(offset: Int, reason: String)

    public var description: String {
        switch self {
        case .unrecognisedFormat:
            "not a recording beacond knows: expected a btsnoop capture (btmon -w, Android HCI snoop log), "
                + "a pcapng or pcap capture (Wireshark, tcpdump, nRF Sniffer, Ubertooth) or an hcidump --raw text log"
        case let .unsupportedVersion(version):
            "btsnoop version \(version) is not supported (only version 1 exists)"
        case let .unsupportedDatalink(datalink):
            "btsnoop datalink \(datalink) is not supported (1001 HCI, 1002 H4 and 2001 BlueZ monitor are)"
        case let .unsupportedLinkType(linkType):
            "link type \(LinkType.describe(linkType)) is not supported; beacond reads "
                + LinkType.allCases.map { LinkType.describe($0.rawValue) }.joined(separator: ", ")
        case let .truncated(offset, needed, available):
            "truncated at byte \(offset): \(needed) bytes needed, \(available) left"
        case let .corruptRecord(offset, reason):
            "corrupt record at byte \(offset): \(reason)"
        }
    }
}
