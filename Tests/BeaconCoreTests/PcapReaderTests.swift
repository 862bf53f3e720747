import Testing

@testable import BeaconCore

/// Classic pcap captures (libpcap's savefile format), written here byte by
/// byte from the format rather than by any writer of beacond's: both byte
/// orders, micro- and nanosecond timestamps, every link type beacond reads,
/// and files that end early, lie about a length, or carry a foreign link type.
/// (`TsharkCrossCheckTests` reads the pcap files Wireshark's `editcap` writes.)
@Suite struct PcapReaderTests {
    typealias P = PcapngReaderTests

    /// A pcap file with one packet per report, `P.time(index)` apart.
    static func capture(
        _ linkType: UInt32, bigEndian: Bool = false, nanoseconds: Bool = false, packets: [[UInt8]]
    ) -> [UInt8] {
        func u32(_ value: UInt32) -> [UInt8] {
            let b = SnoopBytes.be32(value)
            return bigEndian ? b : b.reversed()
        }
        func u16(_ value: UInt16) -> [UInt8] {
            bigEndian ? [UInt8(value >> 8), UInt8(value & 0xFF)] : [UInt8(value & 0xFF), UInt8(value >> 8)]
        }
        var bytes = u32(nanoseconds ? 0xA1B2_3C4D : 0xA1B2_C3D4) + u16(2) + u16(4) + u32(0) + u32(0) + u32(65_535) + u32(linkType)
        for (index, packet) in packets.enumerated() {
            let micros = P.time(index).microsecondsSinceEpoch
            let fraction = UInt32(micros % 1_000_000) * (nanoseconds ? 1_000 : 1)
            bytes += u32(UInt32(micros / 1_000_000)) + u32(fraction) + u32(UInt32(packet.count)) + u32(UInt32(packet.count)) + packet
        }
        return bytes
    }

    static func capture(_ linkType: LinkType, bigEndian: Bool = false, nanoseconds: Bool = false) -> [UInt8] {
        capture(linkType.rawValue, bigEndian: bigEndian, nanoseconds: nanoseconds, packets: P.reports.map(linkType.packet(for:)))
    }

    @Test(arguments: LinkType.allCases, [false, true])
    func everyLinkTypeInBothByteOrders(linkType: LinkType, bigEndian: Bool) throws {
        for nanoseconds in [false, true] {
            let (read, times, reader) = try P.decode(Self.capture(linkType, bigEndian: bigEndian, nanoseconds: nanoseconds))
            #expect(reader.format == .pcap(linkType: linkType.rawValue))
            #expect(reader.failure == nil)
            #expect(reader.skippedRecords == 0)
            P.expectSame(read, rssi: linkType != .bluetoothLELL)
            #expect(times == P.reports.indices.map { Optional(P.time($0)) })
        }
    }

    @Test func readsWhatThePcapngCaptureOfTheSamePacketsReads() throws {
        for linkType in LinkType.allCases {
            let pcap = try P.decode(Self.capture(linkType))
            let pcapng = try P.decode(P.capture(linkType))
            #expect(pcap.reports.map(\.data) == pcapng.reports.map(\.data))
            #expect(pcap.reports.map(\.rssi) == pcapng.reports.map(\.rssi))
            #expect(pcap.times == pcapng.times)
        }
    }

    /// libpcap's `LT_LINKTYPE` and `LT_FCS_LENGTH`: the bits above 26 are no
    /// part of the link type; they say that every packet ends in a frame check
    /// sequence (here 4 words, 8 bytes), which is no part of the packet.
    @Test func aFrameCheckSequenceTheHeaderAnnouncesIsLeftOut() throws {
        let type = LinkType.bluetoothHCIH4
        let fcs: [UInt8] = [0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x02, 0x03, 0x04]
        let withFCS = Self.capture(0x4400_0000 | type.rawValue, packets: P.reports.map { type.packet(for: $0) + fcs })
        let (read, _, reader) = try P.decode(withFCS)
        #expect(reader.format == .pcap(linkType: type.rawValue))
        P.expectSame(read, rssi: true)
        #expect(reader.skippedRecords == 0)
        // Without the flag (bit 26) the top bits say nothing: the same bytes are the packet, and here damage it.
        var unflagged = try RecordingReader(bytes: Self.capture(0x4000_0000 | type.rawValue, packets: P.reports.map { type.packet(for: $0) + fcs }))
        #expect(unflagged.next().map { Array($0.packet.suffix(fcs.count)) } == fcs)
        // A packet shorter than the sequence is skipped and counted.
        let (short, _, shortReader) = try P.decode(Self.capture(0x4400_0000 | type.rawValue, packets: [[0x04, 0x3E]]))
        #expect(short.isEmpty && shortReader.skippedRecords == 1 && shortReader.failure == nil)
    }

    /// A fraction of a second of a second or more is no time: the record is corrupt.
    @Test(arguments: [false, true]) func aFractionOfASecondOrMoreIsCorrupt(nanoseconds: Bool) throws {
        var bytes = Self.capture(.bluetoothHCIH4, nanoseconds: nanoseconds)
        let second = PcapFormat.headerSize + PcapFormat.recordHeaderSize + LinkType.bluetoothHCIH4.packet(for: P.reports[0]).count
        bytes.replaceSubrange((second + 4)..<(second + 8), with: [0xFF, 0xFF, 0xFF, 0xFF])
        let (read, times, reader) = try P.decode(bytes)
        #expect(read.count == 1 && times == [P.time(0)])
        #expect(reader.failure.map { if case .corruptRecord(second, _) = $0 { true } else { false } } == true)
        #expect(reader.failure?.description.contains("not under a second") == true)
    }

    @Test func aForeignLinkTypeIsRefusedNamingIt() {
        let ethernet = Self.capture(1, packets: [[1, 2, 3]])
        #expect(throws: RecordingError.unsupportedLinkType(1)) { try RecordingReader(bytes: ethernet) }
        #expect(RecordingError.unsupportedLinkType(1).description.hasPrefix("link type 1 (ETHERNET) is not supported; beacond reads 187"))
    }

    @Test func badHeadersAreRefused() {
        var version = Self.capture(.bluetoothHCIH4)
        version[4] = 3  // major version 3
        let error = #expect(throws: RecordingError.self) { try RecordingReader(bytes: version) }
        #expect(error?.description.contains("pcap major version 3") == true)
        let cut = Array(Self.capture(.bluetoothHCIH4).prefix(20))
        #expect(throws: RecordingError.truncated(offset: 0, needed: 24, available: 20)) { try RecordingReader(bytes: cut) }
    }

    @Test(arguments: [false, true])
    func aCaptureCutAnywhereKeepsWhatWasReadAndSaysWhere(bigEndian: Bool) throws {
        let bytes = Self.capture(.nordicBLE, bigEndian: bigEndian)
        var recordStarts = [0, PcapFormat.headerSize]
        for report in P.reports {
            recordStarts.append(recordStarts.last! + PcapFormat.recordHeaderSize + LinkType.nordicBLE.packet(for: report).count)
        }
        // Cut after the file header, which is checked up front.
        try P.expectEveryCut(of: bytes, from: PcapFormat.headerSize, recordStarts: recordStarts, recordsBeforePackets: 1)
    }

    /// A captured length no capture can hold stops the reading at once, before
    /// anything is read past the file's end or allocated for it.
    @Test func anImpossibleLengthIsCorrupt() throws {
        var bytes = Self.capture(.bluetoothHCIH4)
        let second = PcapFormat.headerSize + PcapFormat.recordHeaderSize + LinkType.bluetoothHCIH4.packet(for: P.reports[0]).count
        bytes.replaceSubrange((second + 8)..<(second + 12), with: [0xFF, 0xFF, 0xFF, 0x7F])
        let (read, _, reader) = try P.decode(bytes)
        #expect(read.count == 1)
        #expect(reader.failure.map { if case .corruptRecord(second, _) = $0 { true } else { false } } == true)
        #expect(reader.failure?.description.contains("more than any capture holds (262144)") == true)
    }

    /// A sniffer's damaged packet is skipped and counted, as in pcapng.
    @Test func damagedLinkLayerPacketsAreSkippedAndCounted() throws {
        var packets = P.reports.map(LinkType.bluetoothLELL.packet(for:))
        packets[1][packets[1].count - 1] ^= 0xFF  // its CRC
        let (read, _, reader) = try P.decode(Self.capture(LinkType.bluetoothLELL.rawValue, packets: packets))
        #expect(read.count == P.reports.count - 1)
        #expect(reader.skippedRecords == 1)
        #expect(reader.lastSkipReason?.contains("CRC") == true)
    }
}
