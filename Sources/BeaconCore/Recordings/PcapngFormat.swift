/// The pcapng file format (draft-ietf-opsawg-pcapng): facts shared by the
/// reader and the writer.
///
/// A file is a sequence of blocks: type (4), total length (4), body, total
/// length again; lengths are multiples of 4 and every integer is in the
/// byte order of its section, which the section header's magic announces.
public enum PcapngFormat {
    public static let sectionHeaderType: UInt32 = 0x0A0D_0D0A
    static let interfaceDescriptionType: UInt32 = 0x0000_0001
    static let simplePacketType: UInt32 = 0x0000_0003
    static let enhancedPacketType: UInt32 = 0x0000_0006
    static let byteOrderMagic: UInt32 = 0x1A2B_3C4D
    /// Type, length, and the trailing length: the smallest block there is.
    static let blockOverhead = 12
    /// The section header's first 16 bytes: type, length, magic, version.
    static let sectionHeaderPrefix = 16
    /// `if_tsresol`: the interface's timestamp unit (default 10⁻⁶ s).
    static let timestampResolutionOption: UInt16 = 9
    static let endOfOptions: UInt16 = 0

    /// The link types beacond reads (tcpdump's LINKTYPE_ values).
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

    /// Flags of the LE_LL_WITH_PHDR radio header (little-endian u16 at its end).
    enum RadioHeaderFlag {
        static let signalPowerValid: UInt16 = 0x0002
        static let crcChecked: UInt16 = 0x0400
        static let crcValid: UInt16 = 0x0800
    }

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
