import Testing

@testable import BeaconCore

/// pcapng captures (draft-ietf-opsawg-pcapng): both byte orders, every link
/// type beacond reads, several interfaces and sections, blocks it does not
/// know, timestamp resolutions, and files that end early or lie.
@Suite struct PcapngReaderTests {
    static let unixTime: Int64 = 1_714_564_800_250_000  // 2024-05-01T12:00:00.25Z
    static let beaconAddress = BluetoothAddress(0xC3, 0x12, 0x34, 0x56, 0x78, 0x9A)

    /// An iBeacon (random address), another company's data, and a scan response with a name.
    static let reports: [AdvertisingReport] = [
        AdvertisingReport(
            kind: .legacy(.advNonconnInd), addressType: 1, address: beaconAddress, rssi: -67,
            data: (Fixtures.hex("02 01 06") + IBeaconFrameTests.estimoteAD)[...]),
        AdvertisingReport(
            kind: .legacy(.advInd), addressType: 0, address: Fixtures.raspberryPiAddress, rssi: -80,
            data: Fixtures.hex("02 01 06 07 FF 59 00 01 02 03 04")[...]),
        AdvertisingReport(
            kind: .legacy(.scanResponse), addressType: 0, address: Fixtures.raspberryPiAddress, rssi: -59,
            data: Fixtures.hex("05 09 4C 69 67 74 02 0A 04")[...]),
        AdvertisingReport(
            kind: .legacy(.advScanInd), addressType: 1, address: beaconAddress, rssi: -45,
            data: (Fixtures.hex("1B") + IBeaconFrameTests.estimoteAD.dropFirst() + [0x64])[...]),  // Jaalee
    ]

    static func time(_ index: Int) -> Timestamp {
        Timestamp(microsecondsSinceEpoch: unixTime + Int64(index) * 102_400)
    }

    static func capture(_ linkType: LinkType, bigEndian: Bool = false, tsresol: UInt8 = 6) -> [UInt8] {
        var writer = PcapngWriter(bigEndian: bigEndian)
        let interface = writer.addInterface(linkType: linkType.rawValue, tsresol: tsresol)
        for (index, report) in reports.enumerated() { writer.append(report: report, interface: interface, at: time(index)) }
        return writer.bytes
    }

    /// Every event of a capture through the pipeline's decoder: the reports it yields, with their times.
    static func decode(_ bytes: [UInt8]) throws -> (reports: [AdvertisingReport], times: [Timestamp?], reader: RecordingReader) {
        var reader = try RecordingReader(bytes: bytes)
        var reports: [AdvertisingReport] = []
        var times: [Timestamp?] = []
        var events = 0
        while let event = reader.next() {
            events += 1
            try HCIEvent.forEachAdvertisingReport(in: event.packet) { report in
                reports.append(report)
                times.append(event.timestamp)
            }
            if events > bytes.count { break }
        }
        return (reports, times, reader)
    }

    /// What a report keeps through any link type: address, its type, PDU type, data; RSSI where the type carries one.
    static func expectSame(_ read: [AdvertisingReport], rssi: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(read.count == reports.count, sourceLocation: sourceLocation)
        for (got, sent) in zip(read, reports) {
            #expect(got.address == sent.address, sourceLocation: sourceLocation)
            #expect(got.addressType == sent.addressType, sourceLocation: sourceLocation)
            #expect(got.kind == sent.kind, sourceLocation: sourceLocation)
            #expect(Array(got.data) == Array(sent.data), sourceLocation: sourceLocation)
            #expect(got.rssi == (rssi ? sent.rssi : nil), sourceLocation: sourceLocation)
        }
    }

    // MARK: Every link type, both byte orders

    @Test(arguments: LinkType.allCases, [false, true])
    func everyLinkTypeRoundTrips(linkType: LinkType, bigEndian: Bool) throws {
        let bytes = Self.capture(linkType, bigEndian: bigEndian)
        let (read, times, reader) = try Self.decode(bytes)
        Self.expectSame(read, rssi: linkType != .bluetoothLELL)
        #expect(times == Self.reports.indices.map { Optional(Self.time($0)) })
        #expect(reader.failure == nil)
        #expect(reader.skippedRecords == 0)
        #expect(reader.format == .pcapng(linkTypes: [linkType.rawValue]))
        #expect(reader.format.description.contains("\(linkType.rawValue) (\(linkType.name))"))
    }

    @Test func linkTypeNumbersAreTcpdumps() {
        #expect(LinkType.allCases.map(\.rawValue) == [187, 201, 251, 254, 256, 272])
        #expect(LinkType.nordicBLE.name == "NORDIC_BLE")
        #expect(LinkType.bluetoothLELLWithPHDR.name == "BLUETOOTH_LE_LL_WITH_PHDR")
    }

    /// Written by hand from the spec, not by `PcapngWriter`: a big-endian
    /// section, one H4_WITH_PHDR interface, the Raspberry Pi's event received
    /// (direction 1) and a command sent (direction 0), which is not an event.
    @Test func handWrittenBigEndianH4WithPHDR() throws {
        func be32(_ v: UInt32) -> [UInt8] { SnoopBytes.be32(v) }
        let shb = be32(0x0A0D_0D0A) + be32(28) + be32(0x1A2B_3C4D) + [0, 1, 0, 0] + [UInt8](repeating: 0xFF, count: 8) + be32(28)
        let idb = be32(1) + be32(20) + [0, 201, 0, 0] + be32(0) + be32(20)
        func epb(_ data: [UInt8], micros: Int64) -> [UInt8] {
            let padded = data + [UInt8](repeating: 0, count: (4 - data.count % 4) % 4)
            let length = UInt32(32 + padded.count)
            return be32(6) + be32(length) + be32(0) + be32(UInt32(micros >> 32)) + be32(UInt32(micros & 0xFFFF_FFFF))
                + be32(UInt32(data.count)) + be32(UInt32(data.count)) + padded + be32(length)
        }
        let command = be32(0) + Fixtures.hex("01 0C 20 02 01 00")
        let event = be32(1) + [0x04] + Fixtures.raspberryPiIBeaconEvent
        let bytes = shb + idb + epb(command, micros: Self.unixTime - 5) + epb(event, micros: Self.unixTime)
        var reader = try RecordingReader(bytes: bytes)
        let next = reader.next()
        let first = try #require(next)
        #expect(Array(first.packet) == Fixtures.raspberryPiIBeaconEvent)
        #expect(first.timestamp == Timestamp(microsecondsSinceEpoch: Self.unixTime))
        #expect(reader.next() == nil)
        #expect(reader.failure == nil)
        #expect(reader.format == .pcapng(linkTypes: [201]))
    }

    // MARK: Interfaces, sections, blocks

    @Test func severalInterfacesAndSections() throws {
        var writer = PcapngWriter()
        let ethernet = writer.addInterface(linkType: 1)
        let sniffer = writer.addInterface(linkType: LinkType.bluetoothLELLWithPHDR.rawValue)
        writer.append(packet: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], interface: ethernet, at: Self.time(0))
        writer.append(report: Self.reports[0], interface: sniffer, at: Self.time(0))
        writer.append(report: Self.reports[1], interface: sniffer, at: Self.time(1))
        // A second section in the other byte order can only follow whole blocks: build it apart and join.
        var second = PcapngWriter(bigEndian: true)
        let nordic = second.addInterface(linkType: LinkType.nordicBLE.rawValue, tsresol: 9)
        second.append(report: Self.reports[2], interface: nordic, at: Self.time(2))
        second.append(report: Self.reports[3], interface: nordic, at: Self.time(3))
        let (read, times, reader) = try Self.decode(writer.bytes + second.bytes)
        Self.expectSame(read, rssi: true)
        #expect(times == Self.reports.indices.map { Optional(Self.time($0)) })
        #expect(reader.skippedRecords == 1)  // the Ethernet frame
        #expect(reader.failure == nil)
        #expect(reader.format == .pcapng(linkTypes: [1, 256, 272]))
    }

    @Test func interfaceIdsStartAgainInEachSection() throws {
        var writer = PcapngWriter()
        writer.addInterface(linkType: LinkType.bluetoothHCIH4.rawValue)
        writer.startSection()
        let ethernet = writer.addInterface(linkType: 1)
        writer.append(report: Self.reports[0], interface: ethernet, at: Self.time(0))  // interface 0 is Ethernet now
        let (read, _, reader) = try Self.decode(writer.bytes)
        #expect(read.isEmpty)
        #expect(reader.skippedRecords == 1)
    }

    @Test func unknownBlocksAreSkippedByTheirLength() throws {
        var writer = PcapngWriter()
        let interface = writer.addInterface(linkType: LinkType.bluetoothLinuxMonitor.rawValue)
        writer.append(block: 0x0000_0004, body: [0, 0, 0, 0])  // name resolution: end of records
        writer.append(report: Self.reports[0], interface: interface, at: Self.time(0))
        writer.append(block: 0x0000_0005, body: [UInt8](repeating: 0x0A, count: 24))  // interface statistics
        writer.append(block: 0x0000_0BAD, body: Array(Fixtures.raspberryPiIBeaconEvent.prefix(13)))  // a custom block
        writer.append(report: Self.reports[1], interface: interface, at: Self.time(1))
        let (read, _, reader) = try Self.decode(writer.bytes)
        #expect(read.map(\.address) == [Self.reports[0].address, Self.reports[1].address])
        #expect(reader.failure == nil)
        #expect(reader.skippedRecords == 0)
    }

    @Test func simplePacketBlocksHaveNoTimeAndObeyTheSnapLength() throws {
        var writer = PcapngWriter()
        writer.addInterface(linkType: LinkType.bluetoothHCIH4.rawValue)
        writer.append(simplePacket: [0x04] + Fixtures.raspberryPiIBeaconEvent)
        var reader = try RecordingReader(bytes: writer.bytes)
        let next = reader.next()
        let event = try #require(next)
        #expect(Array(event.packet) == Fixtures.raspberryPiIBeaconEvent)
        #expect(event.timestamp == nil)

        var short = PcapngWriter()
        short.addInterface(linkType: LinkType.bluetoothHCIH4.rawValue, snapLength: 20)
        short.append(simplePacket: [0x04] + Fixtures.raspberryPiIBeaconEvent)
        var cut = try RecordingReader(bytes: short.bytes)
        let truncated = cut.next()
        #expect(truncated?.packet.count == 19)  // 20 captured, less the H4 byte
    }

    // MARK: Time

    @Test(arguments: [UInt8(3), 6, 9])
    func decimalResolutions(tsresol: UInt8) throws {
        // Times on whole milliseconds survive any decimal resolution.
        var writer = PcapngWriter()
        let interface = writer.addInterface(linkType: LinkType.bluetoothHCIH4.rawValue, tsresol: tsresol)
        writer.append(report: Self.reports[0], interface: interface, at: Timestamp(microsecondsSinceEpoch: 1_714_564_800_250_000))
        let (_, times, _) = try Self.decode(writer.bytes)
        #expect(times == [Timestamp(microsecondsSinceEpoch: 1_714_564_800_250_000)])
    }

    /// `if_tsoffset` (option 14) is added to each packet's time, as the
    /// pcapng draft says and Wireshark does: a positive and a negative offset,
    /// in both byte orders, and the sum held at Int64's ends.
    @Test(arguments: [false, true])
    func theInterfacesTimeOffsetIsAdded(bigEndian: Bool) throws {
        let times = [Timestamp(microsecondsSinceEpoch: 1_714_564_800_250_000), Timestamp(microsecondsSinceEpoch: 1_714_564_801_000_000)]
        var writer = PcapngWriter(bigEndian: bigEndian)
        let later = writer.addInterface(linkType: LinkType.bluetoothHCIH4.rawValue, tsoffset: 1_714_564_000)
        let earlier = writer.addInterface(linkType: LinkType.bluetoothHCIH4.rawValue, tsoffset: -3_600)
        writer.append(report: Self.reports[0], interface: later, at: times[0])
        writer.append(report: Self.reports[1], interface: earlier, at: times[1])
        let option: [UInt8] = bigEndian ? [0, 14, 0, 8] : [14, 0, 8, 0]
        #expect(Self.offset(of: option, in: writer.bytes) != nil)
        // The first packet's ticks are its 800.25 s past the offset, not its time since 1970.
        let ticks = [UInt32(0), 800_250_000].flatMap { bigEndian ? SnoopBytes.be32($0) : SnoopBytes.be32($0).reversed() }
        #expect(Self.offset(of: ticks, in: writer.bytes) != nil)
        let (_, read, _) = try Self.decode(writer.bytes)
        #expect(read == times)

        #expect(PcapngReader.adding(seconds: 10, to: -1) == 9_999_999)
        #expect(PcapngReader.adding(seconds: .max, to: 0) == .max)
        #expect(PcapngReader.adding(seconds: .min, to: 0) == .min)
        #expect(PcapngReader.adding(seconds: 9_223_372_036_854, to: 775_808) == .max)
    }

    /// `if_fcslen` (option 13): each packet of that interface ends in a frame
    /// check sequence, left out as Wireshark leaves it out; of a packet cut
    /// by the snap length only what was captured of it. Before, the H4
    /// event's length disagreed and every packet was skipped.
    @Test(arguments: [false, true])
    func theInterfacesFrameCheckSequenceIsLeftOut(bigEndian: Bool) throws {
        var writer = PcapngWriter(bigEndian: bigEndian)
        let checked = writer.addInterface(linkType: LinkType.bluetoothHCIH4.rawValue, fcslen: 4)
        let plain = writer.addInterface(linkType: LinkType.bluetoothHCIH4.rawValue)
        let packet = LinkType.bluetoothHCIH4.packet(for: Self.reports[0])
        writer.append(packet: packet + [0xDE, 0xAD, 0xBE, 0xEF], interface: checked, at: Self.time(0))
        writer.append(packet: LinkType.bluetoothHCIH4.packet(for: Self.reports[1]), interface: plain, at: Self.time(1))
        let option: [UInt8] = bigEndian ? [0, 13, 0, 1, 4] : [13, 0, 1, 0, 4]
        #expect(Self.offset(of: option, in: writer.bytes) != nil)
        let (reports, _, reader) = try Self.decode(writer.bytes)
        #expect(reports == [Self.reports[0], Self.reports[1]])
        #expect(reader.skippedRecords == 0)

        let interface = PcapngReader.Interface(linkType: 201, snapLength: 0, resolution: .decimal(6), frameCheckLength: 4)
        let bytes: ArraySlice<UInt8> = [1, 2, 3, 4, 5, 6, 7, 8]
        #expect(Array(interface.withoutFrameCheck(bytes, originalLength: 8)) == [1, 2, 3, 4])
        #expect(Array(interface.withoutFrameCheck(bytes, originalLength: 10)) == [1, 2, 3, 4, 5, 6])  // two check bytes not captured
        #expect(Array(interface.withoutFrameCheck(bytes, originalLength: 20)) == Array(bytes))
        #expect(interface.withoutFrameCheck(bytes.prefix(2), originalLength: 2).isEmpty)
    }

    @Test func binaryAndExtremeResolutions() {
        let ticks: UInt64 = 1_714_564_800 << 20 | 1 << 19  // …800.5 s in 2^-20 s
        #expect(PcapngReader.microseconds(ticks, .binary(20)) == 1_714_564_800_500_000)
        #expect(PcapngReader.microseconds(3, .binary(0)) == 3_000_000)
        #expect(PcapngReader.microseconds(1_500, .decimal(3)) == 1_500_000)
        #expect(PcapngReader.microseconds(1_500_000_000, .decimal(9)) == 1_500_000)
        // Nothing overflows or traps, whatever the resolution byte says.
        #expect(PcapngReader.microseconds(.max, .decimal(0)) == .max)
        #expect(PcapngReader.microseconds(.max, .decimal(127)) == 0)
        #expect(PcapngReader.microseconds(.max, .binary(127)) == 0)
        #expect(PcapngReader.microseconds(.max, .binary(63)) == 1_000_000 + 999_999)
        #expect(PcapngReader.microseconds(.max, .binary(1)) == .max)
        // Whole seconds that just fit, plus the fraction, do not wrap round to 1970 (an audit of 2026-11-28).
        #expect(PcapngReader.microseconds(73_786_976_294_839, .binary(2)) == .max)
    }

    // MARK: Link-layer packets

    static func llCapture(_ linkType: LinkType, _ packets: [[UInt8]]) -> [UInt8] {
        var writer = PcapngWriter()
        let interface = writer.addInterface(linkType: linkType.rawValue)
        for packet in packets { writer.append(packet: packet, interface: interface, at: Self.time(0)) }
        return writer.bytes
    }

    @Test func onlyAdvertisingPDUsWithAdvDataBecomeReports() throws {
        let good = AdvertisingPDU.packet(for: Self.reports[0])
        var dataChannel = good
        dataChannel[0] = 0x12  // another access address: a connection's packet
        var direct = good
        direct[4] = direct[4] & 0xF0 | 0x1  // ADV_DIRECT_IND: no AdvData
        var extended = good
        extended[4] = extended[4] & 0xF0 | 0x7  // ADV_EXT_IND
        let (read, _, reader) = try Self.decode(Self.llCapture(.bluetoothLELL, [dataChannel, direct, extended, good]))
        #expect(read.map(\.address) == [Self.beaconAddress])
        #expect(reader.skippedRecords == 0)  // not advertisements, not damage
    }

    /// A vector Wireshark 4.0.17 (`btle.crc`, link type 251) accepts, and whose zeroed CRC it calls incorrect.
    @Test func crcIsTheOneWiresharkChecks() {
        let pdu = Fixtures.hex("02 24 58 C1 C9 72 39 D0 02 01 06 1A FF 4C 00 02 15 E2 C5 6D B5 DF FB 48 D2 B0 60 D0 F5 A7 10 96 E0 00 01 00 2A C5")
        #expect(AdvertisingPDU.crc(pdu[...]) == [0xD1, 0x17, 0x5B])
    }

    @Test func damagedLinkLayerPacketsAreCountedAndSkipped() throws {
        let good = AdvertisingPDU.packet(for: Self.reports[0])
        var badCRC = good
        badCRC[badCRC.count - 1] ^= 0x01
        var flipped = good
        flipped[20] ^= 0x80  // a bit of AdvData: the CRC no longer matches
        var long = good
        long[5] = 60  // more than a legacy PDU carries
        var overrun = good
        overrun[5] = 37  // more than was captured
        var reader = try RecordingReader(bytes: Self.llCapture(.bluetoothLELL, [badCRC, flipped, long, overrun, Array(good.prefix(5)), good]))
        var events = 0
        while reader.next() != nil { events += 1 }
        #expect(events == 1)
        #expect(reader.skippedRecords == 5)
        #expect(reader.lastSkipReason == "5 bytes, too short for a link-layer header")  // the last of them
        #expect(reader.failure == nil)
    }

    @Test func theRadioHeaderSaysWhetherThereIsAnRSSIAndWhetherTheCRCIsGood() throws {
        var writer = PcapngWriter()
        let interface = writer.addInterface(linkType: LinkType.bluetoothLELLWithPHDR.rawValue)
        var noReading = Self.reports[0]
        noReading.rssi = nil
        writer.append(report: noReading, interface: interface, at: Self.time(0))
        let (read, _, _) = try Self.decode(writer.bytes)
        #expect(read.count == 1)
        #expect(read.first?.rssi == nil)
        // Flags 0x0400 (CRC checked) without 0x0800 (CRC valid): the sniffer says the CRC is bad.
        var bytes = Self.capture(.bluetoothLELLWithPHDR)
        let flagsOffset = try #require(Self.offset(of: [0x80, 0, 0xD6, 0xBE, 0x89, 0x8E], in: bytes)) + 6
        bytes[flagsOffset + 1] &= ~0x08
        let (rest, _, reader) = try Self.decode(bytes)
        #expect(rest.map(\.address) == Self.reports.dropFirst().map(\.address))
        #expect(reader.skippedRecords == 1)
    }

    @Test func nordicSnifferRSSIAndCRCFlag() throws {
        var zero = Self.reports[0]
        zero.rssi = 0  // no reading: the decoder drops it later, the reader passes it on as is
        var writer = PcapngWriter()
        let interface = writer.addInterface(linkType: LinkType.nordicBLE.rawValue)
        writer.append(report: zero, interface: interface, at: Self.time(0))
        let (read, _, _) = try Self.decode(writer.bytes)
        #expect(read.first?.rssi == 0)
        var decoder = AdvertisementDecoder()
        let decoded = decoder.decode(Advertisement(time: Self.time(0), report: try #require(read.first)))
        let sighting = try #require(decoded)
        #expect(sighting.rssi == nil)

        // Flags bit 0 clear: the sniffer's CRC check failed.
        var bad = Self.capture(.nordicBLE)
        let header = try #require(Self.offset(of: [0x0A, 0x01, 37], in: bad))
        bad[header + 1] = 0x00
        let (rest, _, reader) = try Self.decode(bad)
        #expect(rest.count == Self.reports.count - 1)
        #expect(reader.skippedRecords == 1)
    }

    /// Legacy advertising is sent on LE 1M only: a packet the sniffer heard on
    /// LE 2M or LE Coded is extended advertising, passed over, not counted
    /// as damage. On Coded a Coding Indicator (here 00) precedes the PDU
    /// header; read as the header, this ADV_EXT_IND would be an ADV_IND from 05:20:01:18:06:07.
    @Test func packetsHeardOnLE2MOrCodedAreNotLegacyAdvertisements() throws {
        let coded = Fixtures.hex("00 C4 80 00 D6 BE 89 8E 13 8C  D6 BE 89 8E 00 07 07 06 18 01 20 05 0A 40 00 00 00")
        var twoM = LinkType.bluetoothLELLWithPHDR.packet(for: Self.reports[0])
        twoM[9] |= 0x40
        var nordicCoded = LinkType.nordicBLE.packet(for: Self.reports[0])
        nordicCoded[8] |= 0x20
        for (type, packets) in [(LinkType.bluetoothLELLWithPHDR, [coded, twoM]), (.nordicBLE, [nordicCoded])] {
            let oneM = type.packet(for: Self.reports[1])
            let (read, _, reader) = try Self.decode(Self.llCapture(type, packets + [oneM]))
            #expect(read.map(\.address) == [Self.reports[1].address], "\(type)")
            #expect(reader.skippedRecords == 0, "\(type)")
        }
    }

    @Test func nordicSnifferVersionsAndLengths() throws {
        let air = AdvertisingPDU.packet(for: Self.reports[0])
        let header: [UInt8] = [10, 0x01, 37, 67, 0, 0, 0, 0, 0, 0]
        let payload = header.count + air.count
        let version2 = [0, UInt8(payload), 0, 2, 1, 0, 0x06] + header + air
        let version1 = [0, 6, UInt8(payload), 1, 1, 0, 0x06] + header + air
        let legacy = [0xBE, 0xEF, 0x06, 0, 0, 0, 0, UInt8(payload)] + header + air
        let lying = [0, UInt8(payload + 1), 0, 3, 1, 0, 0x02] + header + air
        let (read, _, reader) = try Self.decode(Self.llCapture(.nordicBLE, [version2, version1, legacy, lying]))
        #expect(read.map(\.rssi) == [-67, -67])
        #expect(reader.skippedRecords == 2)
    }

    // MARK: Refused, truncated, corrupt

    @Test func aCaptureOfNothingBeacondReadsIsRefusedNamingItsLinkType() {
        var ethernet = PcapngWriter()
        ethernet.addInterface(linkType: 1)
        ethernet.append(packet: [1, 2, 3], interface: 0, at: Self.time(0))
        #expect(throws: RecordingError.unsupportedLinkType(1)) { try RecordingReader(bytes: ethernet.bytes) }
        let message = RecordingError.unsupportedLinkType(1).description
        #expect(message.contains("1 (ETHERNET)"))
        #expect(message.contains("256 (BLUETOOTH_LE_LL_WITH_PHDR)"))
        #expect(message.contains("272 (NORDIC_BLE)"))
        var strange = PcapngWriter()
        strange.addInterface(linkType: 4242)
        #expect(throws: RecordingError.unsupportedLinkType(4242)) { try RecordingReader(bytes: strange.bytes) }
        #expect(RecordingError.unsupportedLinkType(4242).description.contains("link type 4242 is not supported"))
    }

    /// A file of tiny interface descriptions is refused before anything is
    /// read, naming the limit; one of many link types, one per section, is
    /// summed up rather than listed whole.
    @Test func interfacesAreBoundedPerSectionAndTheirLinkTypesSummedUp() throws {
        var writer = PcapngWriter()
        for _ in 0..<PcapngReader.mostInterfaces { writer.addInterface(linkType: LinkType.bluetoothHCIH4.rawValue) }
        #expect(throws: Never.self) { try RecordingReader(bytes: writer.bytes) }
        writer.addInterface(linkType: LinkType.bluetoothHCIH4.rawValue)
        #expect {
            try RecordingReader(bytes: writer.bytes)
        } throws: { error in
            guard case .corruptRecord(_, let reason) = error as? RecordingError else { return false }
            return reason.contains("more than \(PcapngReader.mostInterfaces) interface descriptions in one section")
        }

        var sections = PcapngWriter()
        for type in 0..<UInt32(20) {
            if type > 0 { sections.startSection() }
            sections.addInterface(linkType: type == 0 ? LinkType.bluetoothHCIH4.rawValue : 1_000 + type)
        }
        let reader = try RecordingReader(bytes: sections.bytes)
        let summary = reader.format.description
        #expect(summary.hasPrefix("pcapng, link types 187 (BLUETOOTH_HCI_H4), 1001, ") && summary.hasSuffix(", 1007 and 12 more"), "\(summary)")
    }

    @Test func aSectionHeaderAloneIsAnEmptyCapture() throws {
        var reader = try RecordingReader(bytes: PcapngWriter().bytes)
        #expect(reader.next() == nil)
        #expect(reader.failure == nil)
        #expect(reader.format == .pcapng(linkTypes: []))
    }

    @Test func badSectionHeadersAreRefused() {
        var bytes = PcapngWriter().bytes
        bytes[8] = 0x00  // byte-order magic
        #expect(throws: RecordingError.self) { try RecordingReader(bytes: bytes) }
        var version = PcapngWriter().bytes
        version[12] = 2  // major version 2 (little-endian u16)
        let error = #expect(throws: RecordingError.self) { try RecordingReader(bytes: version) }
        #expect(error?.description.contains("major version 2") == true)
        #expect(throws: RecordingError.self) { try RecordingReader(bytes: Array(PcapngWriter().bytes.prefix(10))) }
    }

    @Test(arguments: [false, true])
    func aCaptureCutAnywhereKeepsWhatWasReadAndSaysWhere(bigEndian: Bool) throws {
        let bytes = Self.capture(.bluetoothLELLWithPHDR, bigEndian: bigEndian)
        // Where each block starts: the section header (28), the interface (20), then the packets.
        var blockStarts = [0]
        var position = 0
        while position < bytes.count {
            position += Int(bytes[...].uint32(at: position + 4, bigEndian: bigEndian))
            blockStarts.append(position)
        }
        // Cut after the section header, which is checked up front; the interface block holds no packet.
        try Self.expectEveryCut(of: bytes, from: 28, recordStarts: blockStarts, recordsBeforePackets: 2)
    }

    /// Cuts `bytes` at every offset from `first` on: the whole records
    /// (starting at `recordStarts`) before the cut are read, and the reading
    /// says it was truncated where the cut record starts, or nothing at a boundary.
    static func expectEveryCut(of bytes: [UInt8], from first: Int, recordStarts: [Int], recordsBeforePackets: Int) throws {
        let whole = try decode(bytes).reports
        for cut in first..<bytes.count {
            let (read, _, reader) = try decode(Array(bytes.prefix(cut)))
            let wholeRecords = recordStarts.filter { $0 <= cut }.count - 1
            #expect(read.count == max(0, wholeRecords - recordsBeforePackets))
            #expect(read.map(\.address) == whole.prefix(read.count).map(\.address))
            let start = try #require(recordStarts.last { $0 <= cut })
            if cut == start {
                #expect(reader.failure == nil)
            } else {
                guard case .truncated(let offset, _, let available)? = reader.failure else {
                    Issue.record("cut at \(cut): expected truncated, got \(String(describing: reader.failure))")
                    continue
                }
                #expect(offset == start)
                #expect(available == cut - start)
            }
        }
    }

    @Test func corruptBlocksStopTheReadingWithTheirOffset() throws {
        var writer = PcapngWriter()
        let interface = writer.addInterface(linkType: LinkType.bluetoothHCIH4.rawValue)
        writer.append(report: Self.reports[0], interface: interface, at: Self.time(0))
        let secondBlock = writer.bytes.count
        writer.append(report: Self.reports[1], interface: interface, at: Self.time(1))
        let good = writer.bytes

        func failure(_ patch: (inout [UInt8]) -> Void) throws -> (Int, RecordingError?) {
            var bytes = good
            patch(&bytes)
            let (read, _, reader) = try Self.decode(bytes)
            return (read.count, reader.failure)
        }
        // Length not a multiple of 4.
        let (a, notAligned) = try failure { $0[secondBlock + 4] &+= 1 }
        #expect(a == 1)
        #expect(notAligned.map { if case .corruptRecord(secondBlock, _) = $0 { true } else { false } } == true)
        // Trailing length disagrees.
        let (b, trailing) = try failure { $0[$0.count - 4] &+= 4 }
        #expect(b == 1)
        #expect(trailing?.description.contains("at its end") == true)
        // Interface 5 of 1.
        let (c, interfaceError) = try failure { $0[secondBlock + 8] = 5 }
        #expect(c == 1)
        #expect(interfaceError?.description.contains("interface 5") == true)
        // A captured length larger than the block.
        let (d, captured) = try failure { $0[secondBlock + 20] = 0xF0 }
        #expect(d == 1)
        #expect(captured?.description.contains("captured bytes") == true)
        // A length larger than the file: truncated, not corrupt.
        let (e, huge) = try failure { $0[secondBlock + 7] = 0x10 }
        #expect(e == 1)
        #expect(huge.map { if case .truncated(secondBlock, _, _) = $0 { true } else { false } } == true)
    }

    static func offset(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
