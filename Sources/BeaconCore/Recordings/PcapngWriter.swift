/// Writes pcapng captures with any of the link types beacond reads.
///
/// Tests and benchmarks use it to make captures that `tshark` reads too; the
/// bytes are built in memory, in either byte order, and written by the caller.
public struct PcapngWriter: Sendable {
    public let bigEndian: Bool
    public private(set) var bytes: [UInt8] = []
    /// Each interface of the current section: its link type, timestamp resolution and offset in seconds.
    private var interfaces: [(linkType: UInt32, resolution: PcapngReader.TimestampResolution, offsetSeconds: Int64)] = []

    /// Starts the file with a section header.
    public init(bigEndian: Bool = false) {
        self.bigEndian = bigEndian
        startSection()
    }

    /// A new section header: interface ids count from 0 again after it.
    public mutating func startSection() {
        var body = field(PcapngFormat.byteOrderMagic)
        body += field(UInt16(1)) + field(UInt16(0))
        body += [UInt8](repeating: 0xFF, count: 8)  // section length: not given
        append(block: PcapngFormat.sectionHeaderType, body: body)
        interfaces.removeAll()
    }

    /// Describes an interface and returns its id. `tsresol` is the raw
    /// `if_tsresol` byte (6: microseconds, 9: nanoseconds, 0x80 | n: 2^-n s);
    /// `tsoffset` the `if_tsoffset` seconds, left out when 0, which packets' times count from;
    /// `fcslen` the `if_fcslen` byte, left out when 0 (the packets appended then carry their own check bytes).
    @discardableResult
    public mutating func addInterface(
        linkType: UInt32, tsresol: UInt8 = 6, snapLength: UInt32 = 0, tsoffset: Int64 = 0, fcslen: UInt8 = 0
    ) -> Int {
        var body = field(UInt16(truncatingIfNeeded: linkType)) + field(UInt16(0)) + field(snapLength)
        if fcslen != 0 {
            body += field(PcapngFormat.frameCheckLengthOption) + field(UInt16(1)) + [fcslen, 0, 0, 0]
        }
        if tsresol != 6 {
            body += field(PcapngFormat.timestampResolutionOption) + field(UInt16(1)) + [tsresol, 0, 0, 0]
        }
        if tsoffset != 0 {
            let bits = UInt64(bitPattern: tsoffset)
            let (high, low) = (UInt32(bits >> 32), UInt32(bits & 0xFFFF_FFFF))
            body += field(PcapngFormat.timestampOffsetOption) + field(UInt16(8)) + (bigEndian ? field(high) + field(low) : field(low) + field(high))
        }
        body += field(PcapngFormat.endOfOptions) + field(UInt16(0))
        append(block: PcapngFormat.interfaceDescriptionType, body: body)
        let resolution: PcapngReader.TimestampResolution =
            tsresol & 0x80 == 0 ? .decimal(Int(tsresol)) : .binary(Int(tsresol & 0x7F))
        interfaces.append((linkType, resolution, tsoffset))
        return interfaces.count - 1
    }

    /// One advertising report as the interface's link type carries it
    /// (`LinkType.packet(for:)`; an unknown link type gets H4).
    public mutating func append(report: AdvertisingReport, interface: Int, at time: Timestamp) {
        let packet = LinkType(rawValue: interfaces[interface].linkType).map { $0.packet(for: report) }
            ?? LinkType.bluetoothHCIH4.packet(for: report)
        append(packet: packet, interface: interface, at: time)
    }

    /// An enhanced packet block with exactly these bytes.
    public mutating func append(packet: [UInt8], interface: Int, at time: Timestamp) {
        let described = interfaces[interface]
        let ticks = Self.ticks(time.microsecondsSinceEpoch - described.offsetSeconds * 1_000_000, described.resolution)
        var body = field(UInt32(interface)) + field(UInt32(ticks >> 32)) + field(UInt32(ticks & 0xFFFF_FFFF))
        body += field(UInt32(packet.count)) + field(UInt32(packet.count)) + padded(packet)
        append(block: PcapngFormat.enhancedPacketType, body: body)
    }

    /// A simple packet block (interface 0, no time).
    public mutating func append(simplePacket packet: [UInt8]) {
        append(block: PcapngFormat.simplePacketType, body: field(UInt32(packet.count)) + padded(packet))
    }

    /// Any block, with its lengths: readers must skip types they do not know.
    public mutating func append(block type: UInt32, body: [UInt8]) {
        let length = UInt32(PcapngFormat.blockOverhead + padded(body).count)
        bytes += field(type) + field(length) + padded(body) + field(length)
    }

    private static func ticks(_ micros: Int64, _ resolution: PcapngReader.TimestampResolution) -> UInt64 {
        let value = UInt64(max(0, micros))
        return switch resolution {
        case .decimal(let n) where n >= 6: value * (0..<(n - 6)).reduce(1) { v, _ in v * 10 }
        case .decimal(let n): value / (0..<(6 - n)).reduce(1) { v, _ in v * 10 }
        case .binary(let n): UInt64((Double(value) / 1e6 * Double(UInt64(1) << n)).rounded(.up))
        }
    }

    private func padded(_ data: [UInt8]) -> [UInt8] {
        data + [UInt8](repeating: 0, count: (4 - data.count % 4) % 4)
    }

    private func field(_ value: UInt32) -> [UInt8] {
        let b = [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        return bigEndian ? b : b.reversed()
    }

    private func field(_ value: UInt16) -> [UInt8] {
        bigEndian ? [UInt8(value >> 8), UInt8(value & 0xFF)] : [UInt8(value & 0xFF), UInt8(value >> 8)]
    }
}
