/// Reads any recording beacond knows, recognised from its content, not its name.
public struct RecordingReader: Sendable {
    public enum Format: Sendable, Equatable, CustomStringConvertible {
        case btsnoop(BtsnoopFormat.Datalink)
        /// With the link types its interfaces declare.
        case pcapng(linkTypes: [UInt32])
        case pcap(linkType: UInt32)
        case hcidump

        public var description: String {
            switch self {
            case .btsnoop(.monitor): "btsnoop (datalink 2001, BlueZ monitor)"
            case .btsnoop(.h4): "btsnoop (datalink 1002, H4)"
            case .btsnoop(.hci): "btsnoop (datalink 1001, HCI)"
            case .pcapng(let linkTypes) where linkTypes.isEmpty:
                "pcapng, no interfaces"
            case .pcapng(let linkTypes):
                "pcapng, link type\(linkTypes.count > 1 ? "s" : "") "
                    + linkTypes.map(LinkType.describe).joined(separator: ", ")
            case .pcap(let linkType): "pcap, link type \(LinkType.describe(linkType))"
            case .hcidump: "hcidump --raw text"
            }
        }
    }

    private enum Reader: Sendable {
        case btsnoop(BtsnoopReader)
        case pcapng(PcapngReader)
        case pcap(PcapReader)
        case hcidump(HCIDumpReader)
    }

    private var reader: Reader

    public init(bytes: [UInt8]) throws(RecordingError) {
        try self.init(bytes: bytes[...])
    }

    public init(bytes: ArraySlice<UInt8>) throws(RecordingError) {
        if bytes.starts(with: BtsnoopFormat.magic.prefix(min(bytes.count, BtsnoopFormat.magic.count))), !bytes.isEmpty {
            reader = .btsnoop(try BtsnoopReader(bytes: bytes))
        } else if bytes.starts(with: [0x0A, 0x0D, 0x0D, 0x0A]) {
            reader = .pcapng(try PcapngReader(bytes: bytes))
        } else if PcapFormat.hasMagic(bytes) {
            reader = .pcap(try PcapReader(bytes: bytes))
        } else {
            reader = .hcidump(try HCIDumpReader(bytes: bytes))
        }
    }

    public var format: Format {
        switch reader {
        case .btsnoop(let r): .btsnoop(r.datalink)
        case .pcapng(let r): .pcapng(linkTypes: r.linkTypes)
        case .pcap(let r): .pcap(linkType: r.linkType)
        case .hcidump: .hcidump
        }
    }

    /// The next HCI event, or `nil` at the end or at the first unreadable record.
    public mutating func next() -> RecordedEvent? {
        switch reader {
        case .btsnoop(var r):
            let event = r.next()
            reader = .btsnoop(r)
            return event
        case .pcapng(var r):
            let event = r.next()
            reader = .pcapng(r)
            return event
        case .pcap(var r):
            let event = r.next()
            reader = .pcap(r)
            return event
        case .hcidump(var r):
            let event = r.next()
            reader = .hcidump(r)
            return event
        }
    }

    /// Why reading stopped before the end, if it did.
    public var failure: RecordingError? {
        switch reader {
        case .btsnoop(let r): r.failure
        case .pcapng(let r): r.failure
        case .pcap(let r): r.failure
        case .hcidump(let r): r.failure
        }
    }

    /// Packets that were unreadable and skipped: damaged lines of a text log,
    /// damaged or foreign packets of a pcap or pcapng capture. A damaged
    /// block or record header stops the reading instead.
    public var skippedRecords: Int {
        switch reader {
        case .btsnoop: 0
        case .pcapng(let r): r.skippedPackets
        case .pcap(let r): r.skippedPackets
        case .hcidump(let r): r.malformedPackets
        }
    }

    /// Why the last skipped packet was skipped, where the format says (pcap and pcapng).
    public var lastSkipReason: String? {
        switch reader {
        case .pcapng(let r): r.lastSkipReason
        case .pcap(let r): r.lastSkipReason
        case .btsnoop, .hcidump: nil
        }
    }
}
