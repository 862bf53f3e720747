/// Reads the HCI events of a btsnoop capture, record by record, without copying.
///
/// Other records (commands, ACL data, BlueZ's index and note records) are
/// skipped. Reading stops at the first truncated or corrupt record; `failure`
/// then says where, and everything before it has been delivered.
public struct BtsnoopReader: RecordedEventReader {
    public let datalink: BtsnoopFormat.Datalink
    private let bytes: ArraySlice<UInt8>
    private var offset: Int
    public private(set) var recordsRead = 0
    public private(set) var failure: RecordingError?

    /// Checks the 16-byte header.
    public init(bytes: ArraySlice<UInt8>) throws(RecordingError) {
        let start = bytes.startIndex
        guard bytes.count >= BtsnoopFormat.headerSize else {
            throw .truncated(offset: 0, needed: BtsnoopFormat.headerSize, available: bytes.count)
        }
        guard bytes[start..<(start + 8)].elementsEqual(BtsnoopFormat.magic) else { throw .unrecognisedFormat }
        let version = bytes.bigEndianUInt32(at: start + 8)
        guard version == 1 else { throw .unsupportedVersion(version) }
        let datalinkValue = bytes.bigEndianUInt32(at: start + 12)
        guard let datalink = BtsnoopFormat.Datalink(rawValue: datalinkValue) else {
            throw .unsupportedDatalink(datalinkValue)
        }
        self.datalink = datalink
        self.bytes = bytes
        self.offset = start + BtsnoopFormat.headerSize
    }

    /// Bytes consumed so far, from the start of the file.
    public var bytesRead: Int { offset - bytes.startIndex }

    public var format: RecordingReader.Format { .btsnoop(datalink) }
    /// A btsnoop record is whole or the reading stops: none is skipped.
    public var skippedRecords: Int { 0 }
    public var lastSkipReason: String? { nil }

    /// The next HCI event, or `nil` at the end of the file or at the first bad record.
    public mutating func next() -> RecordedEvent? {
        while failure == nil, offset < bytes.endIndex {
            let available = bytes.endIndex - offset
            guard available >= BtsnoopFormat.recordHeaderSize else {
                failure = .truncated(offset: bytesRead, needed: BtsnoopFormat.recordHeaderSize, available: available)
                return nil
            }
            let originalLength = Int(bytes.bigEndianUInt32(at: offset))
            let includedLength = Int(bytes.bigEndianUInt32(at: offset + 4))
            let flags = bytes.bigEndianUInt32(at: offset + 8)
            let timestamp = bytes.bigEndianInt64(at: offset + 16)
            guard includedLength <= originalLength, includedLength <= BtsnoopFormat.largestRecord else {
                failure = .corruptRecord(
                    offset: bytesRead,
                    reason: "included length \(includedLength), original length \(originalLength)")
                return nil
            }
            let body = offset + BtsnoopFormat.recordHeaderSize
            guard bytes.endIndex - body >= includedLength else {
                failure = .truncated(
                    offset: bytesRead, needed: BtsnoopFormat.recordHeaderSize + includedLength, available: available)
                return nil
            }
            offset = body + includedLength
            recordsRead += 1
            if let packet = Self.eventPacket(bytes[body..<offset], datalink: datalink, flags: flags) {
                let unix = Timestamp(microsecondsSinceEpoch: timestamp &- BtsnoopFormat.epochOffset)
                return RecordedEvent(timestamp: unix, packet: packet)
            }
        }
        return nil
    }

    /// The event packet (no H4 byte) in a record, or `nil` if the record is not an event.
    /// pcapng's HCI link types carry the same records (`PcapngReader`).
    static func eventPacket(_ record: ArraySlice<UInt8>, datalink: BtsnoopFormat.Datalink, flags: UInt32) -> ArraySlice<UInt8>? {
        switch datalink {
        case .monitor:
            return flags & 0xFFFF == BtsnoopFormat.MonitorOpcode.event.rawValue ? record : nil
        case .hci:
            // Bit 1 command/event, bit 0 received: an event is both.
            return flags & 0b11 == 0b11 ? record : nil
        case .h4:
            guard record.first == BtsnoopFormat.h4EventType else { return nil }
            return record.dropFirst()
        }
    }
}
