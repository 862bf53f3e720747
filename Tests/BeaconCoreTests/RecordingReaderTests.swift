import Testing

@testable import BeaconCore

/// A recording is recognised by its content: btsnoop (three datalinks) or hcidump text.
@Suite struct RecordingReaderTests {
    static func drain(_ reader: inout RecordingReader) -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        while let event = reader.next() { events.append(event) }
        return events
    }

    @Test(arguments: [
        (BtsnoopFormat.Datalink.monitor, "btsnoop (datalink 2001, BlueZ monitor)"),
        (.h4, "btsnoop (datalink 1002, H4)"),
        (.hci, "btsnoop (datalink 1001, HCI)"),
    ])
    func btsnoopCapturesAreRecognisedAndReadBack(datalink: BtsnoopFormat.Datalink, name: String) throws {
        var reader = try RecordingReader(bytes: BtsnoopReaderTests.capture(datalink))
        #expect(reader.format == .btsnoop(datalink))
        #expect(reader.format.description == name)
        let events = Self.drain(&reader)
        #expect(events.map { Array($0.packet) } == BtsnoopReaderTests.events.map(\.packet))
        #expect(events.map(\.timestamp) == BtsnoopReaderTests.events.map { Optional($0.time) })
        #expect(reader.failure == nil)
        #expect(reader.skippedRecords == 0)
    }

    @Test func hcidumpTextIsRecognised() throws {
        var reader = try RecordingReader(bytes: HCIDumpReaderTests.text(HCIDumpReaderTests.firstThreePackets))
        #expect(reader.format == .hcidump)
        #expect(reader.format.description == "hcidump --raw text")
        #expect(Self.drain(&reader).map { Array($0.packet) } == HCIDumpReaderTests.expectedPackets)
        #expect(reader.failure == nil)
    }

    @Test func damagedTextPacketsAreCountedAsSkipped() throws {
        var lines = HCIDumpReaderTests.firstThreePackets
        lines[4] = "  11 06 DE 74 2D F0 70 13 12 B5 44 4B B1 C5 10 FF 95 A4 02 0A zz"
        var reader = try RecordingReader(bytes: HCIDumpReaderTests.text(lines))
        #expect(Self.drain(&reader).count == 2)
        #expect(reader.skippedRecords == 1)
        #expect(reader.failure == nil)
    }

    @Test func badMagicFallsToTheTextPathAndIsRefused() {
        var bytes = BtsnoopReaderTests.capture(.monitor)
        bytes[7] = 0x01  // "btsnoop\u{01}"
        #expect(throws: RecordingError.unrecognisedFormat) { try RecordingReader(bytes: bytes) }
        bytes = BtsnoopReaderTests.capture(.monitor)
        bytes[0] = UInt8(ascii: "B")
        #expect(throws: RecordingError.unrecognisedFormat) { try RecordingReader(bytes: bytes) }
    }

    @Test func unsupportedHeadersAreSaidSo() {
        #expect(throws: RecordingError.unsupportedVersion(2)) {
            try RecordingReader(bytes: SnoopBytes.header(version: 2, datalink: 2001))
        }
        #expect(throws: RecordingError.unsupportedDatalink(1000)) {
            try RecordingReader(bytes: SnoopBytes.header(datalink: 1000))
        }
    }

    @Test func emptyAndUnknownInputIsRefused() {
        #expect(throws: RecordingError.unrecognisedFormat) { try RecordingReader(bytes: []) }
        #expect(throws: RecordingError.unrecognisedFormat) { try RecordingReader(bytes: Array("shopping list\n".utf8)) }
        #expect(throws: RecordingError.unrecognisedFormat) { try RecordingReader(bytes: [0x00, 0x01, 0x02]) }
    }

    @Test func everyCutOfABtsnoopCapture() throws {
        let bytes = BtsnoopReaderTests.capture(.hci)
        let records = BtsnoopReaderTests.layout(.hci)
        // Inside the 16-byte header: a start of the magic is still a (truncated) btsnoop capture.
        for cut in 1..<16 {
            #expect(throws: RecordingError.truncated(offset: 0, needed: 16, available: cut)) {
                try RecordingReader(bytes: bytes[..<cut])
            }
        }
        for cut in 16...bytes.count {
            var reader = try RecordingReader(bytes: bytes[..<cut])
            let events = Self.drain(&reader)
            let complete = records.filter { $0.start + $0.length <= cut }.count
            #expect(events.map { Array($0.packet) } == BtsnoopReaderTests.events.prefix(complete).map(\.packet))
            if let cutRecord = records.first(where: { $0.start < cut && cut < $0.start + $0.length }) {
                guard case .truncated(let offset, _, let available)? = reader.failure else {
                    Issue.record("cut at \(cut): expected truncated, got \(String(describing: reader.failure))")
                    continue
                }
                #expect(offset == cutRecord.start)
                #expect(available == cut - cutRecord.start)
            } else {
                #expect(reader.failure == nil)
            }
        }
    }
}
