/// Reads the HCI events of a classic pcap capture: one link type for the
/// whole file, read as in pcapng (`CapturedPacketDecoder`). Reading stops at
/// the first truncated or impossible record; `failure` then says where, and
/// everything before it has been delivered.
public struct PcapReader: RecordedEventReader {
    public let linkType: UInt32
    private let type: LinkType
    private let bigEndian: Bool
    private let nanoseconds: Bool
    /// Bytes of frame check sequence at the end of every packet (0 or 2–30).
    private let frameCheckBytes: Int
    private let bytes: ArraySlice<UInt8>
    private var offset: Int
    private var packets = CapturedPacketDecoder()
    public private(set) var failure: RecordingError?

    /// Checks the 24-byte header, and refuses a link type beacond cannot read.
    public init(bytes: ArraySlice<UInt8>) throws(RecordingError) {
        guard PcapFormat.hasMagic(bytes) else { throw .unrecognisedFormat }
        guard bytes.count >= PcapFormat.headerSize else {
            throw .truncated(offset: 0, needed: PcapFormat.headerSize, available: bytes.count)
        }
        let start = bytes.startIndex
        let magic = bytes.uint32(at: start, bigEndian: false)
        bigEndian = magic == PcapFormat.microsecondMagic.byteSwapped || magic == PcapFormat.nanosecondMagic.byteSwapped
        nanoseconds = magic == PcapFormat.nanosecondMagic || magic == PcapFormat.nanosecondMagic.byteSwapped
        let major = bytes.uint16(at: start + 4, bigEndian: bigEndian)
        guard major == 2 else {
            throw .corruptRecord(offset: 4, reason: "pcap major version \(major); only version 2 is defined")
        }
        let field = bytes.uint32(at: start + 20, bigEndian: bigEndian)
        linkType = field & PcapFormat.linkTypeMask
        frameCheckBytes = PcapFormat.frameCheckBytes(field)
        guard let type = LinkType(rawValue: linkType) else { throw .unsupportedLinkType(linkType) }
        self.type = type
        self.bytes = bytes
        offset = start + PcapFormat.headerSize
    }

    /// Bytes consumed so far, from the start of the file.
    private var bytesRead: Int { offset - bytes.startIndex }
    /// Damaged packets skipped (a bad CRC, lengths that disagree).
    public var skippedRecords: Int { packets.skippedPackets }

    public var format: RecordingReader.Format { .pcap(linkType: linkType) }
    /// Why the last skipped packet was skipped.
    public var lastSkipReason: String? { packets.lastSkipReason }

    /// The next HCI event, or `nil` at the end of the file or at the first bad record.
    public mutating func next() -> RecordedEvent? {
        while failure == nil, offset < bytes.endIndex {
            let available = bytes.endIndex - offset
            guard available >= PcapFormat.recordHeaderSize else {
                failure = .truncated(offset: bytesRead, needed: PcapFormat.recordHeaderSize, available: available)
                return nil
            }
            let seconds = Int64(bytes.uint32(at: offset, bigEndian: bigEndian))
            let fraction = Int64(bytes.uint32(at: offset + 4, bigEndian: bigEndian))
            let captured = Int(bytes.uint32(at: offset + 8, bigEndian: bigEndian))
            guard captured <= PcapFormat.largestPacket else {
                failure = .corruptRecord(
                    offset: bytesRead, reason: "packet of \(captured) captured bytes, more than any capture holds (\(PcapFormat.largestPacket))")
                return nil
            }
            guard captured <= available - PcapFormat.recordHeaderSize else {
                failure = .truncated(
                    offset: bytesRead, needed: PcapFormat.recordHeaderSize + captured, available: available)
                return nil
            }
            guard fraction < (nanoseconds ? 1_000_000_000 : 1_000_000) else {
                failure = .corruptRecord(
                    offset: bytesRead, reason: "a time fraction of \(fraction) \(nanoseconds ? "ns" : "µs"), not under a second")
                return nil
            }
            let data = bytes[(offset + PcapFormat.recordHeaderSize)..<(offset + PcapFormat.recordHeaderSize + captured)]
            offset += PcapFormat.recordHeaderSize + captured
            guard data.count >= frameCheckBytes else {
                _ = packets.skip("packet of \(data.count) bytes, shorter than its \(frameCheckBytes)-byte frame check sequence")
                continue
            }
            let time = Timestamp(microsecondsSinceEpoch: seconds * 1_000_000 + (nanoseconds ? fraction / 1_000 : fraction))
            if let event = packets.event(data.dropLast(frameCheckBytes), type: type, at: time) { return event }
        }
        return nil
    }
}
