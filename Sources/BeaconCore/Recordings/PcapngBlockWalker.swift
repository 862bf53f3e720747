/// Steps through the blocks of a pcapng file, checking every length before
/// it is used: a block's length must be at least 12, a multiple of 4, within
/// the file, and repeated at its end. Each section header sets the byte order
/// of the blocks after it.
struct PcapngBlockWalker: Sendable {
    /// One block: its type, its body (between the leading and trailing lengths), where it starts.
    struct Block {
        var type: UInt32
        var body: ArraySlice<UInt8>
        var offset: Int
    }

    private let bytes: ArraySlice<UInt8>
    private var position: Int
    private(set) var bigEndian = false
    private(set) var failure: RecordingError?

    init(bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    /// Bytes consumed so far, from the start of the file.
    var bytesRead: Int { position - bytes.startIndex }

    /// The next whole block, or `nil` at the end or at the first damaged block (then `failure` says why).
    mutating func next() -> Block? {
        guard failure == nil, position < bytes.endIndex else { return nil }
        let available = bytes.endIndex - position
        guard available >= PcapngFormat.blockOverhead else {
            failure = .truncated(offset: bytesRead, needed: PcapngFormat.blockOverhead, available: available)
            return nil
        }
        let type = bytes.uint32(at: position, bigEndian: bigEndian)
        if type == PcapngFormat.sectionHeaderType {
            // The type reads the same both ways; the magic after the length says which way the rest reads.
            guard available >= PcapngFormat.sectionHeaderPrefix else {
                failure = .truncated(offset: bytesRead, needed: PcapngFormat.sectionHeaderPrefix, available: available)
                return nil
            }
            switch bytes.uint32(at: position + 8, bigEndian: false) {
            case PcapngFormat.byteOrderMagic: bigEndian = false
            case PcapngFormat.byteOrderMagic.byteSwapped: bigEndian = true
            case let other:
                failure = .corruptRecord(offset: bytesRead + 8, reason: "section header with byte-order magic 0x\(hex(other)), expected 0x1A2B3C4D")
                return nil
            }
        }
        let length = Int(bytes.uint32(at: position + 4, bigEndian: bigEndian))
        guard length >= PcapngFormat.blockOverhead, length % 4 == 0 else {
            failure = .corruptRecord(offset: bytesRead, reason: "block of type 0x\(hex(type)) with length \(length), not a multiple of 4 of at least 12")
            return nil
        }
        guard length <= available else {
            failure = .truncated(offset: bytesRead, needed: length, available: available)
            return nil
        }
        let trailing = Int(bytes.uint32(at: position + length - 4, bigEndian: bigEndian))
        guard trailing == length else {
            failure = .corruptRecord(offset: bytesRead, reason: "block of type 0x\(hex(type)) says \(length) bytes at its start and \(trailing) at its end")
            return nil
        }
        let block = Block(type: type, body: bytes[(position + 8)..<(position + length - 4)], offset: bytesRead)
        position += length
        return block
    }

    /// Stops the walk at a block whose content cannot be right.
    mutating func fail(_ error: RecordingError) {
        failure = error
    }

    private func hex(_ value: UInt32) -> String {
        hexByte(UInt8(value >> 24)) + hexByte(UInt8(value >> 16 & 0xFF)) + hexByte(UInt8(value >> 8 & 0xFF)) + hexByte(UInt8(value & 0xFF))
    }
}

extension ArraySlice<UInt8> {
    func uint32(at index: Int, bigEndian: Bool) -> UInt32 {
        bigEndian
            ? bigEndianUInt32(at: index)
            : UInt32(self[index]) | UInt32(self[index + 1]) << 8 | UInt32(self[index + 2]) << 16 | UInt32(self[index + 3]) << 24
    }

    func uint16(at index: Int, bigEndian: Bool) -> UInt16 {
        bigEndian ? UInt16(self[index]) << 8 | UInt16(self[index + 1]) : UInt16(self[index]) | UInt16(self[index + 1]) << 8
    }
}
