/// Reads any recording beacond knows, recognised from its content, not its name.
public struct RecordingReader: Sendable {
    public enum Format: Sendable, Equatable, CustomStringConvertible {
        case btsnoop(BtsnoopFormat.Datalink)
        /// With the link types its interfaces declare.
        case pcapng(linkTypes: [UInt32])
        case pcap(linkType: UInt32)
        case hcidump

        /// A summary line names this many of a pcapng file's link types (a file may declare thousands).
        static let linkTypesNamed = 8

        public var description: String {
            switch self {
            case .btsnoop(.monitor): "btsnoop (datalink 2001, BlueZ monitor)"
            case .btsnoop(.h4): "btsnoop (datalink 1002, H4)"
            case .btsnoop(.hci): "btsnoop (datalink 1001, HCI)"
            case .pcapng(let linkTypes) where linkTypes.isEmpty:
                "pcapng, no interfaces"
            case .pcapng(let linkTypes):
                "pcapng, link type\(linkTypes.count > 1 ? "s" : "") "
                    + linkTypes.prefix(Self.linkTypesNamed).map(LinkType.describe).joined(separator: ", ")
                    + (linkTypes.count > Self.linkTypesNamed ? " and \(linkTypes.count - Self.linkTypesNamed) more" : "")
            case .pcap(let linkType): "pcap, link type \(LinkType.describe(linkType))"
            case .hcidump: "hcidump --raw text"
            }
        }
    }

    private var reader: any RecordedEventReader

    public init(bytes: [UInt8]) throws(RecordingError) {
        try self.init(bytes: bytes[...])
    }

    public init(bytes: ArraySlice<UInt8>) throws(RecordingError) {
        if bytes.starts(with: BtsnoopFormat.magic.prefix(min(bytes.count, BtsnoopFormat.magic.count))), !bytes.isEmpty {
            reader = try BtsnoopReader(bytes: bytes)
        } else if bytes.starts(with: [0x0A, 0x0D, 0x0D, 0x0A]) {
            reader = try PcapngReader(bytes: bytes)
        } else if PcapFormat.hasMagic(bytes) {
            reader = try PcapReader(bytes: bytes)
        } else {
            reader = try HCIDumpReader(bytes: bytes)
        }
    }

    public var format: Format { reader.format }

    /// The next HCI event, or `nil` at the end or at the first unreadable record.
    public mutating func next() -> RecordedEvent? { reader.next() }

    /// Why reading stopped before the end, if it did.
    public var failure: RecordingError? { reader.failure }

    /// See `RecordedEventReader.skippedRecords`.
    public var skippedRecords: Int { reader.skippedRecords }

    /// Why the last skipped packet was skipped, where the format says (pcap and pcapng).
    public var lastSkipReason: String? { reader.lastSkipReason }
}
