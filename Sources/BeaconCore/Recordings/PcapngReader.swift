/// Reads the HCI events of a pcapng capture: what Wireshark, the nRF Sniffer
/// and Ubertooth users bring.
///
/// Interfaces with HCI link types (187, 201, 254) are read like btsnoop;
/// interfaces with LE link-layer types (251, 256, 272) carry advertising
/// PDUs off the air, which become the LE Advertising Report a controller
/// would have sent (`AdvertisingPDU`). Packets on other interfaces, damaged
/// link-layer packets and packets with a bad CRC are counted in
/// `skippedRecords` and skipped. Reading stops at the first damaged block;
/// `failure` then says where, and everything before it has been delivered.
public struct PcapngReader: RecordedEventReader {
    /// What an interface description block says about its packets.
    struct Interface: Sendable {
        var linkType: UInt32
        var snapLength: Int
        var resolution: TimestampResolution
        /// `if_tsoffset`, in seconds: added to every packet's time, as Wireshark does.
        var offsetSeconds: Int64 = 0
        /// `if_fcslen`: the frame check sequence that ends each packet, left
        /// out of it as Wireshark does (it is no part of the HCI event or PDU).
        var frameCheckLength = 0

        /// A packet's bytes without the frame check sequence, or what of it
        /// was captured: a packet cut by the snap length lost its end first.
        func withoutFrameCheck(_ packet: ArraySlice<UInt8>, originalLength: Int) -> ArraySlice<UInt8> {
            let cut = max(0, originalLength - packet.count)
            return packet.dropLast(min(packet.count, max(0, frameCheckLength - cut)))
        }
    }

    /// `if_tsresol`: timestamps count 10^-n or 2^-n seconds.
    enum TimestampResolution: Sendable, Equatable {
        case decimal(Int)
        case binary(Int)
    }

    /// Every link type the file's interfaces declare, in order of first appearance.
    public let linkTypes: [UInt32]
    /// The most interface descriptions one section may hold. A capture has one
    /// per device it listened on; a file of millions of tiny ones would have
    /// the reader hold them all (and the summary list their link types).
    public static let mostInterfaces = 1_024
    private var walker: PcapngBlockWalker
    private var interfaces: [Interface] = []
    private var packets = CapturedPacketDecoder()
    /// Packets skipped: damaged, or on an interface of a link type beacond does not read.
    public var skippedRecords: Int { packets.skippedPackets }
    /// Why the last skipped packet was skipped.
    public var lastSkipReason: String? { packets.lastSkipReason }

    /// Checks the section header, and refuses a file none of whose interfaces beacond can read.
    public init(bytes: ArraySlice<UInt8>) throws(RecordingError) {
        guard bytes.count >= 4, bytes.uint32(at: bytes.startIndex, bigEndian: false) == PcapngFormat.sectionHeaderType else {
            throw .unrecognisedFormat
        }
        var walker = PcapngBlockWalker(bytes: bytes)
        guard let first = walker.next() else { throw walker.failure ?? .unrecognisedFormat }
        try Self.checkSectionHeader(first, bigEndian: walker.bigEndian)
        // One pass over the block headers (bounded by the file's size) to
        // name the link types up front, so a foreign capture is refused before
        // anything starts rather than replaying nothing.
        var linkTypes: [UInt32] = []
        var seen: Set<UInt32> = []
        var inSection = 0
        while let block = walker.next() {
            if block.type == PcapngFormat.sectionHeaderType { inSection = 0 }
            if block.type == PcapngFormat.interfaceDescriptionType, block.body.count >= 2 {
                inSection += 1
                guard inSection <= Self.mostInterfaces else {
                    throw .corruptRecord(
                        offset: block.offset, reason: "more than \(Self.mostInterfaces) interface descriptions in one section; no capture tool writes that many")
                }
                let type = UInt32(block.body.uint16(at: block.body.startIndex, bigEndian: walker.bigEndian))
                if seen.insert(type).inserted { linkTypes.append(type) }
            }
        }
        if let first = linkTypes.first, !linkTypes.contains(where: { LinkType(rawValue: $0) != nil }) {
            throw .unsupportedLinkType(first)
        }
        self.linkTypes = linkTypes
        self.walker = PcapngBlockWalker(bytes: bytes)
    }

    public var format: RecordingReader.Format { .pcapng(linkTypes: linkTypes) }

    public var failure: RecordingError? { walker.failure }

    /// The next HCI event, or `nil` at the end of the file or at the first damaged block.
    public mutating func next() -> RecordedEvent? {
        while let block = walker.next() {
            switch block.type {
            case PcapngFormat.sectionHeaderType:
                do throws(RecordingError) {
                    try Self.checkSectionHeader(block, bigEndian: walker.bigEndian)
                } catch {
                    walker.fail(error)
                    return nil
                }
                interfaces.removeAll()  // interface ids count from 0 again in each section
            case PcapngFormat.interfaceDescriptionType:
                guard let interface = interfaceDescription(block) else { return nil }
                interfaces.append(interface)
            case PcapngFormat.enhancedPacketType:
                guard let (index, time, data) = enhancedPacket(block) else { return nil }
                if let event = recordedEvent(data, on: index, at: time) { return event }
            case PcapngFormat.simplePacketType:
                guard let data = simplePacket(block) else { return nil }
                if let event = recordedEvent(data, on: 0, at: nil) { return event }
            default:
                continue  // name resolution, statistics, custom blocks …: skipped by their length
            }
        }
        return nil
    }

    // MARK: Blocks

    private static func checkSectionHeader(_ block: PcapngBlockWalker.Block, bigEndian: Bool) throws(RecordingError) {
        // Magic (4), major (2), minor (2), section length (8).
        guard block.body.count >= 16 else {
            throw .corruptRecord(offset: block.offset, reason: "section header of \(block.body.count + 12) bytes, at least 28 expected")
        }
        let major = block.body.uint16(at: block.body.startIndex + 4, bigEndian: bigEndian)
        guard major == 1 else {
            throw .corruptRecord(offset: block.offset, reason: "pcapng major version \(major); only version 1 is defined")
        }
    }

    /// Link type (2), reserved (2), snap length (4), options.
    private mutating func interfaceDescription(_ block: PcapngBlockWalker.Block) -> Interface? {
        let body = block.body
        let bigEndian = walker.bigEndian
        guard body.count >= 8 else {
            walker.fail(.corruptRecord(offset: block.offset, reason: "interface description of \(body.count + 12) bytes, at least 20 expected"))
            return nil
        }
        var interface = Interface(
            linkType: UInt32(body.uint16(at: body.startIndex, bigEndian: bigEndian)),
            snapLength: Int(body.uint32(at: body.startIndex + 4, bigEndian: bigEndian)),
            resolution: .decimal(6))
        var index = body.startIndex + 8
        while body.endIndex - index >= 4 {
            let code = body.uint16(at: index, bigEndian: bigEndian)
            let length = Int(body.uint16(at: index + 2, bigEndian: bigEndian))
            if code == PcapngFormat.endOfOptions { break }
            guard length <= body.endIndex - index - 4 else {
                walker.fail(.corruptRecord(offset: block.offset, reason: "interface option \(code) of \(length) bytes runs past its block"))
                return nil
            }
            if code == PcapngFormat.timestampResolutionOption, length >= 1 {
                let value = body[index + 4]
                interface.resolution = value & 0x80 == 0 ? .decimal(Int(value)) : .binary(Int(value & 0x7F))
            }
            if code == PcapngFormat.frameCheckLengthOption, length >= 1 {
                interface.frameCheckLength = Int(body[index + 4])
            }
            if code == PcapngFormat.timestampOffsetOption, length >= 8 {
                let first = UInt64(body.uint32(at: index + 4, bigEndian: bigEndian))
                let second = UInt64(body.uint32(at: index + 8, bigEndian: bigEndian))
                interface.offsetSeconds = Int64(bitPattern: bigEndian ? first << 32 | second : second << 32 | first)
            }
            index += 4 + (length + 3) / 4 * 4
        }
        return interface
    }

    /// Interface id (4), timestamp high and low (4 + 4), captured length (4), original length (4), data, options.
    private mutating func enhancedPacket(_ block: PcapngBlockWalker.Block) -> (Int, Timestamp, ArraySlice<UInt8>)? {
        let body = block.body
        let bigEndian = walker.bigEndian
        guard body.count >= 20 else {
            walker.fail(.corruptRecord(offset: block.offset, reason: "enhanced packet block of \(body.count + 12) bytes, at least 32 expected"))
            return nil
        }
        let start = body.startIndex
        let index = Int(body.uint32(at: start, bigEndian: bigEndian))
        let captured = Int(body.uint32(at: start + 12, bigEndian: bigEndian))
        let original = Int(body.uint32(at: start + 16, bigEndian: bigEndian))
        guard index < interfaces.count else {
            walker.fail(.corruptRecord(offset: block.offset, reason: "packet on interface \(index), but \(interfaces.count) are described"))
            return nil
        }
        guard captured <= body.count - 20 else {
            walker.fail(.corruptRecord(offset: block.offset, reason: "packet of \(captured) captured bytes in a block with room for \(body.count - 20)"))
            return nil
        }
        let ticks = UInt64(body.uint32(at: start + 4, bigEndian: bigEndian)) << 32 | UInt64(body.uint32(at: start + 8, bigEndian: bigEndian))
        let interface = interfaces[index]
        let time = Timestamp(microsecondsSinceEpoch: Self.adding(seconds: interface.offsetSeconds, to: Self.microseconds(ticks, interface.resolution)))
        return (index, time, interface.withoutFrameCheck(body[(start + 20)..<(start + 20 + captured)], originalLength: original))
    }

    /// Original length (4), data: always interface 0, no time; the captured
    /// length is what fits, no more than the snap length.
    private mutating func simplePacket(_ block: PcapngBlockWalker.Block) -> ArraySlice<UInt8>? {
        let body = block.body
        guard let interface = interfaces.first else {
            walker.fail(.corruptRecord(offset: block.offset, reason: "simple packet block without an interface description before it"))
            return nil
        }
        guard body.count >= 4 else {
            walker.fail(.corruptRecord(offset: block.offset, reason: "simple packet block of \(body.count + 12) bytes, at least 16 expected"))
            return nil
        }
        let original = Int(body.uint32(at: body.startIndex, bigEndian: walker.bigEndian))
        var captured = min(original, body.count - 4)
        if interface.snapLength > 0 { captured = min(captured, interface.snapLength) }
        return interface.withoutFrameCheck(body[(body.startIndex + 4)..<(body.startIndex + 4 + captured)], originalLength: original)
    }

    /// `microseconds` plus `if_tsoffset`'s seconds, held at Int64's ends rather than overflowing.
    static func adding(seconds: Int64, to microseconds: Int64) -> Int64 {
        let (shift, tooFar) = seconds.multipliedReportingOverflow(by: 1_000_000)
        let (sum, overflow) = microseconds.addingReportingOverflow(shift)
        guard !tooFar, !overflow else { return seconds < 0 ? .min : .max }
        return sum
    }

    /// Ticks of 10^-n or 2^-n s to microseconds, without overflow for any n.
    static func microseconds(_ ticks: UInt64, _ resolution: TimestampResolution) -> Int64 {
        let value: UInt64
        switch resolution {
        case .decimal(let n) where n <= 6:
            let (scaled, overflow) = ticks.multipliedReportingOverflow(by: power(10, 6 - n))
            value = overflow ? UInt64(Int64.max) : scaled
        case .decimal(let n):
            value = n - 6 >= 20 ? 0 : ticks / power(10, n - 6)
        case .binary(let n):
            guard n < 64 else { return 0 }
            let whole = ticks >> n
            let fraction = ticks & ((1 << n) - 1)
            let (wholeMicros, overflow) = whole.multipliedReportingOverflow(by: 1_000_000)
            // fraction < 2^n, so fraction * 10^6 / 2^n < 10^6: the 128-bit product's top half shifted back.
            let product = fraction.multipliedFullWidth(by: 1_000_000)
            let fractionMicros = n == 0 ? 0 : (product.high << (64 - n)) | (product.low >> n)
            let (sum, carried) = wholeMicros.addingReportingOverflow(fractionMicros)
            value = overflow || carried ? UInt64(Int64.max) : sum
        }
        return Int64(clamping: value)
    }

    private static func power(_ base: UInt64, _ exponent: Int) -> UInt64 {
        (0..<exponent).reduce(1) { value, _ in value * base }
    }

    /// The HCI event a packet carries or stands for, or `nil` (skipped, counted if it was damaged).
    private mutating func recordedEvent(_ data: ArraySlice<UInt8>, on index: Int, at time: Timestamp?) -> RecordedEvent? {
        let linkType = interfaces[index].linkType
        guard let type = LinkType(rawValue: linkType) else {
            return packets.skip("packet on interface \(index), link type \(LinkType.describe(linkType))")
        }
        return packets.event(data, type: type, at: time)
    }
}
