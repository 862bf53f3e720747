import PropertyBased
import Testing

@testable import BeaconCore

/// btsnoop captures (PLATFORM-NOTES "btsnoop"): the header, the three datalinks,
/// and captures that end early or lie about their lengths.
@Suite struct BtsnoopReaderTests {
    static let unixTime: Int64 = 1_714_564_800_250_000  // 2024-05-01T12:00:00.25Z

    /// Events of several shapes, with times; one is not an advertising report at all.
    static let events: [(packet: [UInt8], time: Timestamp)] = [
        (Fixtures.raspberryPiIBeaconEvent, Timestamp(microsecondsSinceEpoch: unixTime)),
        (Fixtures.raspberryPiScanResponseEvent, Timestamp(microsecondsSinceEpoch: unixTime + 12_500)),
        (HCIEvent.advertisingReportEvent(HCIEventTests.threeLegacyReports), Timestamp(microsecondsSinceEpoch: unixTime + 1_000_000)),
        (Fixtures.hex("3E 1A 0D 01") + HCIEventTests.extendedEmptyReport, Timestamp(microsecondsSinceEpoch: unixTime + 1_000_001)),
        (Fixtures.hex("0E 04 01 0C 20 00"), Timestamp(microsecondsSinceEpoch: unixTime + 2_000_000)),
    ]

    static func drain(_ reader: inout BtsnoopReader) -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        while let event = reader.next() { events.append(event) }
        return events
    }

    static func capture(_ datalink: BtsnoopFormat.Datalink) -> [UInt8] {
        var writer = BtsnoopWriter(datalink: datalink)
        for event in events { writer.append(event: event.packet, at: event.time) }
        return writer.bytes
    }

    // MARK: Reading back what the writer wrote

    @Test(arguments: [BtsnoopFormat.Datalink.monitor, .h4, .hci])
    func writerToReaderRoundTrip(datalink: BtsnoopFormat.Datalink) throws {
        let bytes = Self.capture(datalink)
        var reader = try BtsnoopReader(bytes: bytes[...])
        #expect(reader.datalink == datalink)
        let read = Self.drain(&reader)
        #expect(read.map { Array($0.packet) } == Self.events.map(\.packet))
        #expect(read.map(\.timestamp) == Self.events.map { Optional($0.time) })
        #expect(reader.failure == nil)
        #expect(reader.bytesRead == bytes.count)
        // btmon's controller announcement (datalink 2001) is a record too, but not an event.
        #expect(reader.recordsRead == Self.events.count + (datalink == .monitor ? 1 : 0))
    }

    @Test func datalinkValuesAreTheOnesOnDisk() {
        #expect(BtsnoopFormat.Datalink.hci.rawValue == 1001)
        #expect(BtsnoopFormat.Datalink.h4.rawValue == 1002)
        #expect(BtsnoopFormat.Datalink.monitor.rawValue == 2001)
    }

    // MARK: Hand-written captures

    @Test func handWrittenH4CaptureSkipsCommandsAndACL() throws {
        let bytes = SnoopBytes.header(datalink: 1002)
            + SnoopBytes.record(Fixtures.hex("01 0C 20 02 01 00"), flags: 0b00, unixMicroseconds: Self.unixTime - 10)
            + SnoopBytes.record([0x04] + Fixtures.hex("0E 04 01 0C 20 00"), flags: 0b11, unixMicroseconds: Self.unixTime - 5)
            + SnoopBytes.record([0x04] + Fixtures.raspberryPiIBeaconEvent, flags: 0b11, unixMicroseconds: Self.unixTime)
            + SnoopBytes.record(Fixtures.hex("02 40 20 05 00 01 00 04 00 0A"), flags: 0b01, unixMicroseconds: Self.unixTime + 1)
        var reader = try BtsnoopReader(bytes: bytes[...])
        #expect(reader.datalink == .h4)
        let read = Self.drain(&reader)
        // The H4 byte is removed: packets start with the event code.
        #expect(read.map { Array($0.packet) } == [Fixtures.hex("0E 04 01 0C 20 00"), Fixtures.raspberryPiIBeaconEvent])
        #expect(read.map(\.timestamp?.microsecondsSinceEpoch) == [Self.unixTime - 5, Self.unixTime])
        #expect(reader.recordsRead == 4)
        #expect(reader.failure == nil)
    }

    @Test func handWrittenHCICaptureSkipsSentCommandsAndACL() throws {
        let bytes = SnoopBytes.header(datalink: 1001)
            + SnoopBytes.record(Fixtures.hex("0C 20 02 01 00"), flags: 0b10, unixMicroseconds: 1)  // command, sent
            + SnoopBytes.record(Fixtures.raspberryPiIBeaconEvent, flags: 0b11, unixMicroseconds: Self.unixTime)
            + SnoopBytes.record(Fixtures.hex("40 20 05 00 01 00 04 00 0A"), flags: 0b01, unixMicroseconds: 2)  // ACL received
            + SnoopBytes.record(Fixtures.hex("40 20 05 00 01 00 04 00 0A"), flags: 0b00, unixMicroseconds: 3)  // ACL sent
            + SnoopBytes.record(Fixtures.raspberryPiScanResponseEvent, flags: 0b11, unixMicroseconds: Self.unixTime + 7)
        var reader = try BtsnoopReader(bytes: bytes[...])
        #expect(reader.datalink == .hci)
        let read = Self.drain(&reader)
        #expect(read.map { Array($0.packet) } == [Fixtures.raspberryPiIBeaconEvent, Fixtures.raspberryPiScanResponseEvent])
        #expect(read.map(\.timestamp?.microsecondsSinceEpoch) == [Self.unixTime, Self.unixTime + 7])
        #expect(reader.recordsRead == 5)
    }

    @Test func handWrittenMonitorCaptureReadsEventsOfEveryIndex() throws {
        let newIndex = Fixtures.hex("00 00  00 00 00 00 00 00") + Array("hci0".utf8) + [0, 0, 0, 0]
        let note = Array("Bluetooth monitor ver 5.66".utf8) + [0]
        let bytes = SnoopBytes.header(datalink: 2001)
            + SnoopBytes.record(newIndex, flags: SnoopBytes.monitorFlags(opcode: 0), unixMicroseconds: 0)
            + SnoopBytes.record(note, flags: SnoopBytes.monitorFlags(index: 0xFFFF, opcode: 12), unixMicroseconds: 0)
            + SnoopBytes.record(Fixtures.hex("0C 20 02 01 00"), flags: SnoopBytes.monitorFlags(opcode: 2), unixMicroseconds: 5)
            + SnoopBytes.record(Fixtures.hex("06 00"), flags: SnoopBytes.monitorFlags(opcode: 8), unixMicroseconds: 6)
            + SnoopBytes.record(Fixtures.raspberryPiIBeaconEvent, flags: SnoopBytes.monitorFlags(opcode: 3), unixMicroseconds: Self.unixTime)
            + SnoopBytes.record(Fixtures.hex("40 20 05 00"), flags: SnoopBytes.monitorFlags(opcode: 5), unixMicroseconds: 8)
            + SnoopBytes.record(
                Fixtures.raspberryPiScanResponseEvent, flags: SnoopBytes.monitorFlags(index: 1, opcode: 3),
                unixMicroseconds: Self.unixTime + 100)
        var reader = try BtsnoopReader(bytes: bytes[...])
        #expect(reader.datalink == .monitor)
        let read = Self.drain(&reader)
        #expect(read.map { Array($0.packet) } == [Fixtures.raspberryPiIBeaconEvent, Fixtures.raspberryPiScanResponseEvent])
        #expect(read.map(\.timestamp?.microsecondsSinceEpoch) == [Self.unixTime, Self.unixTime + 100])
        #expect(reader.recordsRead == 7)
        #expect(reader.failure == nil)
    }

    @Test func timestampsBeforeTheUnixEpoch() throws {
        let bytes = SnoopBytes.header(datalink: 1001)
            + SnoopBytes.record(Fixtures.raspberryPiIBeaconEvent, flags: 0b11, unixMicroseconds: -2_208_988_800_000_000)
        var reader = try BtsnoopReader(bytes: bytes[...])
        let next = reader.next()
        let event = try #require(next)
        #expect(event.timestamp?.description == "1900-01-01T00:00:00.000000Z")
    }

    // MARK: Headers that are not ours

    @Test func badMagic() {
        var bytes = SnoopBytes.header(datalink: 2001)
        bytes[6] = UInt8(ascii: "q")
        #expect(throws: RecordingError.unrecognisedFormat) { try BtsnoopReader(bytes: bytes[...]) }
    }

    @Test func versionTwo() {
        #expect(throws: RecordingError.unsupportedVersion(2)) {
            try BtsnoopReader(bytes: SnoopBytes.header(version: 2, datalink: 2001)[...])
        }
    }

    @Test(arguments: [UInt32(1000), 1003, 2000, 2002, 0])
    func unknownDatalink(datalink: UInt32) {
        #expect(throws: RecordingError.unsupportedDatalink(datalink)) {
            try BtsnoopReader(bytes: SnoopBytes.header(datalink: datalink)[...])
        }
    }

    @Test func headerOnlyIsAnEmptyCapture() throws {
        var reader = try BtsnoopReader(bytes: SnoopBytes.header(datalink: 1002)[...])
        #expect(reader.next() == nil)
        #expect(reader.failure == nil)
        #expect(reader.recordsRead == 0)
    }

    @Test func shortHeaderIsTruncated() {
        let header = SnoopBytes.header(datalink: 2001)
        for cut in 0..<16 {
            #expect(throws: RecordingError.truncated(offset: 0, needed: 16, available: cut)) {
                try BtsnoopReader(bytes: header[..<cut])
            }
        }
    }

    // MARK: Captures cut short or corrupt

    /// Where each record starts and how long it is, from the format, not from the reader.
    static func layout(_ datalink: BtsnoopFormat.Datalink) -> [(start: Int, length: Int, isEvent: Bool)] {
        var records: [(start: Int, length: Int, isEvent: Bool)] = []
        var start = 16
        if datalink == .monitor {
            records.append((start, 24 + 16, false))  // new index: type, bus, address, name[8]
            start += 40
        }
        for event in events {
            let length = 24 + event.packet.count + (datalink == .h4 ? 1 : 0)
            records.append((start, length, true))
            start += length
        }
        return records
    }

    @Test(arguments: [BtsnoopFormat.Datalink.monitor, .h4, .hci])
    func everyCutKeepsTheCompleteRecordsAndSaysWhere(datalink: BtsnoopFormat.Datalink) throws {
        let bytes = Self.capture(datalink)
        let records = Self.layout(datalink)
        #expect(records.last.map { $0.start + $0.length } == bytes.count)
        for cut in 16...bytes.count {
            var reader = try BtsnoopReader(bytes: bytes[..<cut])
            let read = Self.drain(&reader)
            let complete = records.filter { $0.isEvent && $0.start + $0.length <= cut }.count
            #expect(read.count == complete, "cut at \(cut)")
            #expect(read.map { Array($0.packet) } == Self.events.prefix(complete).map(\.packet))
            #expect(read.map(\.timestamp) == Self.events.prefix(complete).map { Optional($0.time) })
            if let cutRecord = records.first(where: { $0.start < cut && cut < $0.start + $0.length }) {
                let available = cut - cutRecord.start
                let needed = available < 24 ? 24 : cutRecord.length
                #expect(
                    reader.failure == .truncated(offset: cutRecord.start, needed: needed, available: available),
                    "cut at \(cut)")
            } else {
                #expect(reader.failure == nil, "cut at \(cut), a record boundary")
            }
            // Once stopped, it stays stopped.
            #expect(reader.next() == nil)
        }
    }

    @Test func includedLongerThanOriginalIsCorrupt() throws {
        let first = SnoopBytes.record(Fixtures.raspberryPiIBeaconEvent, flags: 0b11, unixMicroseconds: Self.unixTime)
        let bad = SnoopBytes.record(
            Fixtures.raspberryPiScanResponseEvent, flags: 0b11, unixMicroseconds: Self.unixTime + 1,
            originalLength: UInt32(Fixtures.raspberryPiScanResponseEvent.count - 1))
        let after = SnoopBytes.record(Fixtures.raspberryPiIBeaconEvent, flags: 0b11, unixMicroseconds: Self.unixTime + 2)
        let bytes = SnoopBytes.header(datalink: 1001) + first + bad + after
        var reader = try BtsnoopReader(bytes: bytes[...])
        let read = Self.drain(&reader)
        #expect(read.count == 1)
        guard case .corruptRecord(let offset, let reason)? = reader.failure else {
            Issue.record("expected corruptRecord, got \(String(describing: reader.failure))")
            return
        }
        #expect(offset == 16 + first.count)
        #expect(reason.contains("\(Fixtures.raspberryPiScanResponseEvent.count)"))
    }

    @Test func absurdlyLargeRecordIsCorruptNotTruncated() throws {
        let bytes = SnoopBytes.header(datalink: 1002)
            + SnoopBytes.record([0x04, 0x0E], flags: 0b11, unixMicroseconds: 0, originalLength: 0x0100_0000, includedLength: 0x0100_0000)
        var reader = try BtsnoopReader(bytes: bytes[...])
        #expect(reader.next() == nil)
        guard case .corruptRecord(let offset, _)? = reader.failure else {
            Issue.record("expected corruptRecord, got \(String(describing: reader.failure))")
            return
        }
        #expect(offset == 16)
    }

    @Test func partialRecordsAreAllowed() throws {
        // included < original (snap length): the record is read with what was kept.
        let bytes = SnoopBytes.header(datalink: 1001)
            + SnoopBytes.record(Fixtures.raspberryPiIBeaconEvent, flags: 0b11, unixMicroseconds: 0, originalLength: 200)
        var reader = try BtsnoopReader(bytes: bytes[...])
        let next = reader.next()
        let event = try #require(next)
        #expect(Array(event.packet) == Fixtures.raspberryPiIBeaconEvent)
        #expect(reader.failure == nil)
    }

    @Test func readsACaptureThatIsASliceOfALargerBuffer() throws {
        let slice = Fixtures.offsetSlice(Self.capture(.h4), by: 5)
        var reader = try BtsnoopReader(bytes: slice)
        let read = Self.drain(&reader)
        #expect(read.map { Array($0.packet) } == Self.events.map(\.packet))
        #expect(reader.bytesRead == slice.count)
    }

    @Test func errorDescriptions() {
        #expect(RecordingError.unsupportedDatalink(1000).description.contains("1000"))
        #expect(RecordingError.truncated(offset: 96, needed: 24, available: 3).description.contains("96"))
        #expect(RecordingError.unrecognisedFormat.description.contains("not a recording beacond knows"))
    }
}

// MARK: Writer and reader, both ways

extension BtsnoopReaderTests {
    @Test func anyEventsAndTimesRoundTripThroughEveryDatalink() async {
        let event = zip(Gen.uint8().array(of: 0...300), Gen.int64(in: -100_000_000_000_000_000...100_000_000_000_000_000))
        await propertyCheck(count: 100, input: Gen.int(in: 0...2), event.array(of: 0...8)) { which, events in
            let datalink = [BtsnoopFormat.Datalink.monitor, .h4, .hci][which]
            var writer = BtsnoopWriter(datalink: datalink)
            for (packet, micros) in events {
                writer.append(event: packet, at: Timestamp(microsecondsSinceEpoch: micros))
            }
            // Size from PLATFORM-NOTES: header, 24 bytes per record, the H4 byte, btmon's new-index record.
            let h4 = datalink == .h4 ? 1 : 0
            let announcement = datalink == .monitor ? 24 + 16 : 0
            #expect(writer.bytes.count == 16 + announcement + events.reduce(0) { $0 + 24 + h4 + $1.0.count })
            var reader = try RecordingReader(bytes: writer.bytes)
            #expect(reader.format == .btsnoop(datalink))
            var read: [RecordedEvent] = []
            while let next = reader.next() { read.append(next) }
            #expect(read.map { Array($0.packet) } == events.map(\.0))
            #expect(read.map(\.timestamp?.microsecondsSinceEpoch) == events.map(\.1))
            #expect(reader.failure == nil)
        }
    }
}
