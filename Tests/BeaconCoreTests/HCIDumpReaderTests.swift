import Testing

@testable import BeaconCore

/// `hcidump --raw` text logs, as Raspberry Pi users have them.
@Suite struct HCIDumpReaderTests {
    /// The first three packets of `rpi-hcidump-ibeacon.raw`, byte for byte
    /// (hcidump ends every line with a space).
    static let firstThreePackets = [
        "> 04 3E 27 02 01 00 00 58 C1 C9 72 39 D0 1B 1A FF 4C 00 02 15 ",
        "  A4 95 DE AD C5 B1 4B 44 B5 12 13 70 F0 2D 74 DE 30 39 FF FF ",
        "  C5 BC ",
        "> 04 3E 27 02 01 04 00 58 C1 C9 72 39 D0 1B 05 09 4C 69 67 74 ",
        "  11 06 DE 74 2D F0 70 13 12 B5 44 4B B1 C5 10 FF 95 A4 02 0A ",
        "  04 C5 ",
        "> 04 3E 27 02 01 00 00 58 C1 C9 72 39 D0 1B 1A FF 4C 00 02 15 ",
        "  A4 95 DE AD C5 B1 4B 44 B5 12 13 70 F0 2D 74 DE 30 39 FF FF ",
        "  C5 BF ",
    ]

    static var expectedPackets: [[UInt8]] {
        var third = Fixtures.raspberryPiIBeaconEvent
        third[third.count - 1] = 0xBF  // RSSI -65
        return [Fixtures.raspberryPiIBeaconEvent, Fixtures.raspberryPiScanResponseEvent, third]
    }

    static func text(_ lines: [String], separator: String = "\n") -> [UInt8] {
        Array((lines.joined(separator: separator) + separator).utf8)
    }

    static func readAll(_ bytes: [UInt8]) throws -> (events: [RecordedEvent], reader: HCIDumpReader) {
        var reader = try HCIDumpReader(bytes: bytes[...])
        var events: [RecordedEvent] = []
        while let event = reader.next() { events.append(event) }
        return (events, reader)
    }

    @Test func firstThreePacketsOfTheRealLog() throws {
        let (events, reader) = try Self.readAll(Self.text(Self.firstThreePackets))
        #expect(events.map { Array($0.packet) } == Self.expectedPackets)
        #expect(events.allSatisfy { $0.timestamp == nil })
        #expect(reader.packetsRead == 3)
        #expect(reader.malformedPackets == 0)
        #expect(reader.failure == nil)
    }

    /// A packet holds at most the longest H4 packet (ACL data, 65,540
    /// bytes) over all its lines; a longer one is malformed, refused at the
    /// limit rather than held whole, and a long ACL packet within it is not.
    @Test func aLineLongerThanAnyPacketIsMalformed() throws {
        let acl = "< 02 01 20 2C 01 " + Array(repeating: "AB", count: 300).joined(separator: " ")
        let huge = "> 04 " + Array(repeating: "3E", count: HCIDumpReader.longestPacket).joined(separator: " ")
        let (events, reader) = try Self.readAll(Self.text([acl, huge] + Self.firstThreePackets))
        #expect(events.map { Array($0.packet) } == Self.expectedPackets)
        #expect(reader.packetsRead == 5)
        #expect(reader.malformedPackets == 1)
        // Exactly the longest packet, over continuation lines, is read; one more byte is not.
        let longest = ["< 02 01 20"] + Array(repeating: " " + Array(repeating: "AB", count: 1_000).joined(separator: " "), count: 65)
            + [" " + Array(repeating: "CD", count: HCIDumpReader.longestPacket - 3 - 65_000).joined(separator: " ")]
        #expect(try Self.readAll(Self.text(longest)).reader.malformedPackets == 0)
        #expect(try Self.readAll(Self.text(longest + [" EF"])).reader.malformedPackets == 1)
        let tokens = try Self.readAll(Self.text(["> 04 3E 3", "> 04 3E 3EF", "> 04 3E zz"]))
        #expect(tokens.reader.malformedPackets == 3, "a pair is two hex digits, no more, no fewer")
    }

    @Test func withoutATrailingNewline() throws {
        let bytes = Array(Self.firstThreePackets.joined(separator: "\n").utf8)
        let (events, _) = try Self.readAll(bytes)
        #expect(events.map { Array($0.packet) } == Self.expectedPackets)
    }

    @Test func crlfLineEndings() throws {
        let (events, reader) = try Self.readAll(Self.text(Self.firstThreePackets, separator: "\r\n"))
        #expect(events.map { Array($0.packet) } == Self.expectedPackets)
        #expect(reader.malformedPackets == 0)
    }

    @Test func commentLineBetweenPacketsIsSkipped() throws {
        var lines = Self.firstThreePackets
        lines.insert("// Gimbal", at: 3)
        lines.insert("# a shell comment", at: 0)
        lines.insert("", at: 8)
        let (events, reader) = try Self.readAll(Self.text(lines))
        #expect(events.map { Array($0.packet) } == Self.expectedPackets)
        #expect(reader.malformedPackets == 0)
    }

    @Test func bannerLinesAreSkipped() throws {
        let lines = [
            "HCI sniffer - Bluetooth packet analyzer ver 5.66",
            "device: hci0 snap_len: 1500 filter: 0xffffffffffffffff",
        ] + Self.firstThreePackets
        let (events, reader) = try Self.readAll(Self.text(lines))
        #expect(events.map { Array($0.packet) } == Self.expectedPackets)
        #expect(reader.malformedPackets == 0)
    }

    @Test func commandPacketsAreSkipped() throws {
        let lines = [
            "< 01 0B 20 07 00 10 00 10 00 00 00 ",  // LE Set Scan Parameters
            "> 04 0E 04 01 0B 20 00 ",  // its Command Complete: an event, kept
            "< 01 0C 20 02 01 00 ",  // LE Set Scan Enable
        ] + Self.firstThreePackets
        let (events, reader) = try Self.readAll(Self.text(lines))
        #expect(events.map { Array($0.packet) } == [Fixtures.hex("0E 04 01 0B 20 00")] + Self.expectedPackets)
        #expect(reader.packetsRead == 6)
        #expect(reader.malformedPackets == 0)
    }

    @Test func receivedNonEventPacketsAreSkipped() throws {
        // ACL data (H4 type 02) received: not an event.
        let lines = ["> 02 40 20 05 00 01 00 04 00 0A "] + Self.firstThreePackets
        let (events, reader) = try Self.readAll(Self.text(lines))
        #expect(events.map { Array($0.packet) } == Self.expectedPackets)
        #expect(reader.malformedPackets == 0)
    }

    @Test func damagedPacketIsCountedAndTheNextOneRead() throws {
        var lines = Self.firstThreePackets
        lines[1] = "  A4 95 DE AD C5 B1 4B 44 B5 12 1? 70 F0 2D 74 DE 30 39 FF FF "  // a non-hex token
        let (events, reader) = try Self.readAll(Self.text(lines))
        #expect(events.map { Array($0.packet) } == Array(Self.expectedPackets.dropFirst()))
        #expect(reader.malformedPackets == 1)
        #expect(reader.failure == nil)
        // Where to look: the packet's first line, though the damage is on its second.
        #expect(reader.lastSkipReason == "the packet at line 1: not hex bytes, or longer than 65540 bytes")
    }

    @Test func damagedFirstLineIsCountedAndTheNextOneRead() throws {
        var lines = Self.firstThreePackets
        lines[3] = "> 04 3E 27 02 01 04 00 58 C1 C9 72 39 D0 1B 05 09 4C 69 6 74 "  // a one-digit token
        let (events, reader) = try Self.readAll(Self.text(lines))
        #expect(events.map { Array($0.packet) } == [Self.expectedPackets[0], Self.expectedPackets[2]])
        #expect(reader.malformedPackets == 1)
        #expect(reader.lastSkipReason == "the packet at line 4: not hex bytes, or longer than 65540 bytes")
    }

    @Test func strayLineIsCountedAndTheNextOneRead() throws {
        var lines = Self.firstThreePackets
        lines.insert("garbage from a half-written log", at: 3)
        let (events, reader) = try Self.readAll(Self.text(lines))
        #expect(events.map { Array($0.packet) } == Self.expectedPackets)
        #expect(reader.malformedPackets == 1)
        #expect(reader.lastSkipReason == "line 4: neither a packet (> or <, after an hcidump -t time or not) nor a comment")
    }

    @Test func isoTimestampPrefix() throws {
        let lines = [
            "2024-05-01 12:00:00.250000 > 04 3E 27 02 01 00 00 58 C1 C9 72 39 D0 1B 1A FF 4C 00 02 15 ",
            Self.firstThreePackets[1], Self.firstThreePackets[2],
            "2000-03-01 00:00:00.000001 > 04 0E 04 01 0B 20 00",
        ]
        let (events, _) = try Self.readAll(Self.text(lines))
        #expect(events.map { Array($0.packet) } == [Fixtures.raspberryPiIBeaconEvent, Fixtures.hex("0E 04 01 0B 20 00")])
        // 2024-05-01 is day 19844 of the Unix epoch: 19844 × 86400 s + 12 h, and 250 ms.
        #expect(events.first?.timestamp?.microsecondsSinceEpoch == 1_714_564_800_250_000)
        let may1: Int64 = (19844 * 86400 + 12 * 3600) * 1_000_000 + 250_000
        #expect(events.first?.timestamp?.microsecondsSinceEpoch == may1)
        // 2000-03-01 (the day after a century leap day): 11017 days.
        let march1: Int64 = 11017 * 86_400_000_000 + 1
        #expect(events.last?.timestamp?.microsecondsSinceEpoch == march1)
    }

    @Test func epochSecondsTimestampPrefix() throws {
        let lines = [
            "1714564800.250000 > 04 3E 27 02 01 00 00 58 C1 C9 72 39 D0 1B 1A FF 4C 00 02 15 ",
            Self.firstThreePackets[1], Self.firstThreePackets[2],
            "1714564801.25 > 04 0E 04 01 0B 20 00",
        ]
        let (events, _) = try Self.readAll(Self.text(lines))
        #expect(events.map { Array($0.packet) } == [Fixtures.raspberryPiIBeaconEvent, Fixtures.hex("0E 04 01 0B 20 00")])
        #expect(events.map(\.timestamp?.microsecondsSinceEpoch) == [1_714_564_800_250_000, 1_714_564_801_250_000])
    }

    @Test func timestampedCommandsAreSkippedToo() throws {
        let lines = [
            "1714564800.000000 < 01 0C 20 02 01 00",
            "1714564800.250000 > 04 0E 04 01 0C 20 00",
        ]
        let (events, reader) = try Self.readAll(Self.text(lines))
        #expect(events.map { Array($0.packet) } == [Fixtures.hex("0E 04 01 0C 20 00")])
        #expect(reader.packetsRead == 2)
    }

    @Test func lowerCaseHex() throws {
        let (events, _) = try Self.readAll(Self.text(["> 04 0e 04 01 0c 20 00"]))
        #expect(events.map { Array($0.packet) } == [Fixtures.hex("0E 04 01 0C 20 00")])
    }

    @Test(arguments: [
        "", "\n\n", "// only a comment\n", "shopping list\n", "  A4 95 DE AD\n",
        "HCI sniffer - Bluetooth packet analyzer ver 5.66\n",
    ])
    func notAnHCIDumpLog(text: String) {
        #expect(throws: RecordingError.unrecognisedFormat) { try HCIDumpReader(bytes: Array(text.utf8)[...]) }
    }

    @Test func readsTextThatIsASliceOfALargerBuffer() throws {
        var reader = try HCIDumpReader(bytes: Fixtures.offsetSlice(Self.text(Self.firstThreePackets), by: 9))
        var packets: [[UInt8]] = []
        while let event = reader.next() { packets.append(Array(event.packet)) }
        #expect(packets == Self.expectedPackets)
    }
}

// MARK: Where the reader is, and the brief's inline examples

extension HCIDumpReaderTests {
    /// `line` is "the 1-based line number of the last line read".
    @Test func lineNumberOfTheLastLineRead() throws {
        var lines = Self.firstThreePackets
        lines.insert("// Gimbal", at: 3)
        var reader = try HCIDumpReader(bytes: Self.text(lines)[...])
        _ = reader.next()
        #expect(reader.line == 3, "the first packet is lines 1-3")
        _ = reader.next()
        #expect(reader.line == 7, "a comment, then the second packet on lines 5-7")
        _ = reader.next()
        #expect(reader.line == 10)
        #expect(reader.next() == nil)
        #expect(reader.line == lines.count)
    }

    /// A single-line log in the `hcidump -t` forms, decoded down to the report.
    @Test(arguments: [
        "2024-05-01 12:00:00.250000 > 04 3E 27 02 01 00 00 58 C1 C9 72 39 D0 1B 1A FF 4C 00 02 15 A4 95 DE AD C5 B1 4B 44 B5 12 13 70 F0 2D 74 DE 30 39 FF FF C5 BC",
        "1714564800.250000 > 04 3E 27 02 01 00 00 58 C1 C9 72 39 D0 1B 1A FF 4C 00 02 15 A4 95 DE AD C5 B1 4B 44 B5 12 13 70 F0 2D 74 DE 30 39 FF FF C5 BC",
        "1714564800.25 > 04 3E 27 02 01 00 00 58 C1 C9 72 39 D0 1B 1A FF 4C 00 02 15 A4 95 DE AD C5 B1 4B 44 B5 12 13 70 F0 2D 74 DE 30 39 FF FF C5 BC",
    ])
    func timestampedOneLinePacket(line: String) throws {
        let (events, reader) = try Self.readAll(Self.text([line], separator: "\r\n"))
        let event = try #require(events.first)
        #expect(events.count == 1)
        #expect(event.timestamp == Timestamp(microsecondsSinceEpoch: 1_714_564_800_250_000))
        #expect(Array(event.packet) == Fixtures.raspberryPiIBeaconEvent)
        #expect(reader.malformedPackets == 0)
        var addresses: [BluetoothAddress] = []
        try HCIEvent.forEachAdvertisingReport(in: event.packet) { addresses.append($0.address) }
        #expect(addresses == [Fixtures.raspberryPiAddress])
    }

    /// Everything a Pi user's log can hold, in one file: banner, comments, commands,
    /// a damaged packet, timestamps, CRLF.
    @Test func aMixedLog() throws {
        let lines = [
            "HCI sniffer - Bluetooth packet analyzer ver 5.66",
            "device: hci0 snap_len: 1500 filter: 0xffffffffffffffff",
            "< 01 0C 20 02 01 00 ",
            "> 04 0E 04 01 0C 20 00 ",
            "// Gimbal",
            "> 04 3E 27 02 01 00 00 58 C1 C9 72 39 D0 1B 1A FF 4C 00 02 15 ",
            "  A4 95 DE AD C5 B1 4B 44 B5 12 13 70 F0 2D 74 DE 30 39 FF FF ",
            "  C5 G5 ",  // damaged
            "> 04 3E 27 02 01 04 00 58 C1 C9 72 39 D0 1B 05 09 4C 69 67 74 ",
            "  11 06 DE 74 2D F0 70 13 12 B5 44 4B B1 C5 10 FF 95 A4 02 0A ",
            "  04 C5 ",
        ]
        let (events, reader) = try Self.readAll(Self.text(lines, separator: "\r\n"))
        #expect(events.map { Array($0.packet) } == [Fixtures.hex("0E 04 01 0C 20 00"), Fixtures.raspberryPiScanResponseEvent])
        #expect(reader.malformedPackets == 1)
        #expect(reader.packetsRead == 4)
        #expect(reader.failure == nil)
    }
}

extension HCIDumpReaderTests {
    /// A packet whose first line lost its `>` is one damaged packet: its indented
    /// continuation lines belong to it and are not further packets.
    @Test func packetWithoutItsMarkerIsOneMalformedPacket() throws {
        var lines = Self.firstThreePackets
        lines[3] = String(lines[3].dropFirst(2))  // "04 3E 27 02 01 04 …", the "> " lost
        let (events, reader) = try Self.readAll(Self.text(lines))
        #expect(events.map { Array($0.packet) } == [Self.expectedPackets[0], Self.expectedPackets[2]])
        #expect(reader.malformedPackets == 1, "one damaged packet of three lines")
    }
}

/// Found by the fuzzer: a "date" with a nine-digit year overflowed the time arithmetic.
@Test func hugeYearInATimePrefixIsNotATime() throws {
    let text = Array("> 04 0E 01 00\n148002024-05-01 12:00:00.250000 > 04 0E 01 00\n".utf8)
    var reader = try RecordingReader(bytes: text)
    var events = 0
    while reader.next() != nil { events += 1 }
    #expect(events == 1)
    #expect(reader.skippedRecords == 1)
}
