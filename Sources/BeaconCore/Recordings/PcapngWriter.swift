/// Writes pcapng captures with any of the link types beacond reads.
///
/// Tests and benchmarks use it to make captures that `tshark` reads too; the
/// bytes are built in memory, in either byte order, and written by the caller.
public struct PcapngWriter: Sendable {
    public let bigEndian: Bool
    public private(set) var bytes: [UInt8] = []
    /// Each interface of the current section: its link type and timestamp resolution.
    private var interfaces: [(linkType: UInt32, resolution: PcapngReader.TimestampResolution)] = []

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
    /// `if_tsresol` byte (6: microseconds, 9: nanoseconds, 0x80 | n: 2^-n s).
    @discardableResult
    public mutating func addInterface(linkType: UInt32, tsresol: UInt8 = 6, snapLength: UInt32 = 0) -> Int {
        var body = field(UInt16(truncatingIfNeeded: linkType)) + field(UInt16(0)) + field(snapLength)
        if tsresol != 6 {
            body += field(PcapngFormat.timestampResolutionOption) + field(UInt16(1)) + [tsresol, 0, 0, 0]
        }
        body += field(PcapngFormat.endOfOptions) + field(UInt16(0))
        append(block: PcapngFormat.interfaceDescriptionType, body: body)
        let resolution: PcapngReader.TimestampResolution =
            tsresol & 0x80 == 0 ? .decimal(Int(tsresol)) : .binary(Int(tsresol & 0x7F))
        interfaces.append((linkType, resolution))
        return interfaces.count - 1
    }

    /// One advertising report as the interface's link type carries it: an
    /// LE Advertising Report event for the HCI types, the packet off the air
    /// (with the sniffer's header and RSSI where the type has one) for the
    /// link-layer types. Legacy reports only for the link-layer types.
    public mutating func append(report: AdvertisingReport, interface: Int, at time: Timestamp) {
        let event = HCIEvent.advertisingReportEvent([report])
        let packet: [UInt8]
        switch PcapngFormat.LinkType(rawValue: interfaces[interface].linkType) {
        case .bluetoothHCIH4, nil:
            packet = [BtsnoopFormat.h4EventType] + event
        case .bluetoothHCIH4WithPHDR:
            packet = [0, 0, 0, 1, BtsnoopFormat.h4EventType] + event  // direction 1: received
        case .bluetoothLinuxMonitor:
            packet = [0, 0, 0, UInt8(BtsnoopFormat.MonitorOpcode.event.rawValue)] + event
        case .bluetoothLELL:
            packet = AdvertisingPDU.packet(for: report)
        case .bluetoothLELLWithPHDR:
            let flags: UInt16 = 0x0001 | 0x0010 | (report.rssi == nil ? 0 : PcapngFormat.RadioHeaderFlag.signalPowerValid)
                | PcapngFormat.RadioHeaderFlag.crcChecked | PcapngFormat.RadioHeaderFlag.crcValid
            let a = AdvertisingPDU.advertisingAccessAddress
            // RF channel 0 (advertising channel 37), signal power, noise power, offenses, reference access address, flags.
            packet = [0, UInt8(bitPattern: report.rssi ?? 0), 0x80, 0, UInt8(a & 0xFF), UInt8(a >> 8 & 0xFF), UInt8(a >> 16 & 0xFF), UInt8(a >> 24)]
                + [UInt8(flags & 0xFF), UInt8(flags >> 8)] + AdvertisingPDU.packet(for: report)
        case .nordicBLE:
            let air = AdvertisingPDU.packet(for: report)
            let payload = 10 + air.count
            // Board 0, payload length, version 3, counter 0, EVENT_PACKET_ADVERTISING; header of 10:
            // flags (CRC OK, 1M PHY), channel 37, RSSI as −dBm, event counter, firmware time.
            packet = [0, UInt8(payload & 0xFF), UInt8(payload >> 8), 3, 0, 0, PcapngFormat.nordicAdvertisingPacket]
                + [10, 0x01, 37, UInt8(clamping: -Int(report.rssi ?? 0)), 0, 0, 0, 0, 0, 0] + air
        }
        append(packet: packet, interface: interface, at: time)
    }

    /// An enhanced packet block with exactly these bytes.
    public mutating func append(packet: [UInt8], interface: Int, at time: Timestamp) {
        let ticks = Self.ticks(time.microsecondsSinceEpoch, interfaces[interface].resolution)
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
