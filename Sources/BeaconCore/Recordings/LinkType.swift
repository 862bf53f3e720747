/// The link types beacond reads, as tcpdump's LINKTYPE_ values: pcap and
/// pcapng captures name them the same way, and their packets read the same.
public enum LinkType: UInt32, Sendable, CaseIterable {
    /// H4: the packet type byte, then the HCI packet.
    case bluetoothHCIH4 = 187
    /// A 4-byte big-endian direction, then H4.
    case bluetoothHCIH4WithPHDR = 201
    /// Access address, PDU header, payload, CRC: what a sniffer hears.
    case bluetoothLELL = 251
    /// BlueZ's monitor channel: adapter id and opcode (2 bytes each, big-endian), then the packet.
    case bluetoothLinuxMonitor = 254
    /// A 10-byte radio header (channel, signal power, flags …), then the link-layer packet.
    case bluetoothLELLWithPHDR = 256
    /// Nordic's nRF Sniffer: board id, UART header, packet header with RSSI, then the link-layer packet.
    case nordicBLE = 272

    public var name: String { Self.names[rawValue] ?? "?" }

    /// tcpdump's names of these and of the link types people most often
    /// bring by mistake, for messages.
    static let names: [UInt32: String] = [
        0: "NULL", 1: "ETHERNET", 101: "RAW", 105: "IEEE802_11", 113: "LINUX_SLL", 127: "IEEE802_11_RADIOTAP",
        187: "BLUETOOTH_HCI_H4", 189: "USB_LINUX", 195: "IEEE802_15_4_WITHFCS", 201: "BLUETOOTH_HCI_H4_WITH_PHDR",
        220: "USB_LINUX_MMAPPED", 249: "USBPCAP", 251: "BLUETOOTH_LE_LL", 254: "BLUETOOTH_LINUX_MONITOR",
        255: "BLUETOOTH_BREDR_BB", 256: "BLUETOOTH_LE_LL_WITH_PHDR", 272: "NORDIC_BLE", 276: "LINUX_SLL2",
    ]

    /// `256 (BLUETOOTH_LE_LL_WITH_PHDR)`, or the number alone for a type without a known name.
    public static func describe(_ value: UInt32) -> String {
        names[value].map { "\(value) (\($0))" } ?? "\(value)"
    }
}

/// The headers these link types put before a packet.
extension LinkType {
    /// Flags of the LE_LL_WITH_PHDR radio header (little-endian u16 at its end).
    enum RadioHeaderFlag {
        static let signalPowerValid: UInt16 = 0x0002
        static let crcChecked: UInt16 = 0x0400
        static let crcValid: UInt16 = 0x0800
        /// Bits 14–15: 0 LE 1M, 1 LE 2M, 2 LE Coded.
        static let phy: UInt16 = 0xC000
    }

    /// The nRF Sniffer's PHY bits in its packet header's flags (0 LE 1M, 1 LE 2M, 2 LE Coded).
    static let nordicPHY: UInt8 = 0x70

    static let radioHeaderSize = 10
    /// Board id, payload length (2), protocol version, packet counter (2), packet id.
    static let nordicHeaderSize = 7
    /// The nRF Sniffer's packet ids for a received advertising PDU (version 3)
    /// and any received PDU (versions 1 and 2).
    static let nordicAdvertisingPacket: UInt8 = 0x02
    static let nordicAnyPacket: UInt8 = 0x06
    static let monitorHeaderSize = 4
    static let directionHeaderSize = 4
}

/// How a capture of each link type carries one advertising report.
extension LinkType {
    /// An LE Advertising Report event for the HCI types; the packet off the
    /// air (with the sniffer's header and RSSI where the type has one) for
    /// the link-layer types, which carry legacy advertisements only. Tests
    /// and benchmarks write captures with it.
    public func packet(for report: AdvertisingReport) -> [UInt8] {
        let event = HCIEvent.advertisingReportEvent([report])
        switch self {
        case .bluetoothHCIH4:
            return [BtsnoopFormat.h4EventType] + event
        case .bluetoothHCIH4WithPHDR:
            return [0, 0, 0, 1, BtsnoopFormat.h4EventType] + event  // direction 1: received
        case .bluetoothLinuxMonitor:
            return [0, 0, 0, UInt8(BtsnoopFormat.MonitorOpcode.event.rawValue)] + event
        case .bluetoothLELL:
            return AdvertisingPDU.packet(for: report)
        case .bluetoothLELLWithPHDR:
            let flags: UInt16 = 0x0001 | 0x0010 | (report.rssi == nil ? 0 : LinkType.RadioHeaderFlag.signalPowerValid)
                | LinkType.RadioHeaderFlag.crcChecked | LinkType.RadioHeaderFlag.crcValid
            let a = AdvertisingPDU.advertisingAccessAddress
            // RF channel 0 (advertising channel 37), signal power, noise power, offenses, reference access address, flags.
            return [0, UInt8(bitPattern: report.rssi ?? 0), 0x80, 0, UInt8(a & 0xFF), UInt8(a >> 8 & 0xFF), UInt8(a >> 16 & 0xFF), UInt8(a >> 24)]
                + [UInt8(flags & 0xFF), UInt8(flags >> 8)] + AdvertisingPDU.packet(for: report)
        case .nordicBLE:
            let air = AdvertisingPDU.packet(for: report)
            let payload = 10 + air.count
            // Board 0, payload length, version 3, counter 0, EVENT_PACKET_ADVERTISING; header of 10:
            // flags (CRC OK, 1M PHY), channel 37, RSSI as −dBm, event counter, firmware time.
            return [0, UInt8(payload & 0xFF), UInt8(payload >> 8), 3, 0, 0, LinkType.nordicAdvertisingPacket]
                + [10, 0x01, 37, UInt8(clamping: -Int(report.rssi ?? 0)), 0, 0, 0, 0, 0, 0] + air
        }
    }
}
