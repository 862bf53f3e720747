import Testing

@testable import BeaconCore

/// The writer's bytes, compared with captures built by hand from PLATFORM-NOTES.
@Suite struct BtsnoopWriterTests {
    static let time = Timestamp(microsecondsSinceEpoch: 1_714_564_800_250_000)

    @Test func hciDatalinkBytes() {
        var writer = BtsnoopWriter(datalink: .hci)
        writer.append(event: Fixtures.raspberryPiIBeaconEvent, at: Self.time)
        #expect(writer.bytes == SnoopBytes.header(datalink: 1001)
            + SnoopBytes.record(Fixtures.raspberryPiIBeaconEvent, flags: 0b11, unixMicroseconds: Self.time.microsecondsSinceEpoch))
    }

    @Test func h4DatalinkBytesStartWithTheEventType() {
        var writer = BtsnoopWriter(datalink: .h4)
        writer.append(event: Fixtures.raspberryPiIBeaconEvent, at: Self.time)
        #expect(writer.bytes == SnoopBytes.header(datalink: 1002)
            + SnoopBytes.record([0x04] + Fixtures.raspberryPiIBeaconEvent, flags: 0b11, unixMicroseconds: Self.time.microsecondsSinceEpoch))
    }

    @Test func monitorDatalinkAnnouncesTheControllerFirst() {
        var writer = BtsnoopWriter(datalink: .monitor)
        writer.append(event: Fixtures.raspberryPiIBeaconEvent, at: Self.time)
        let newIndex = [0x00, 0x00] + [UInt8](repeating: 0, count: 6) + Array("hci0".utf8) + [0, 0, 0, 0]
        #expect(writer.bytes == SnoopBytes.header(datalink: 2001)
            + SnoopBytes.record(newIndex, flags: SnoopBytes.monitorFlags(opcode: 0), unixMicroseconds: 0)
            + SnoopBytes.record(Fixtures.raspberryPiIBeaconEvent, flags: SnoopBytes.monitorFlags(opcode: 3),
                                unixMicroseconds: Self.time.microsecondsSinceEpoch))
    }

    @Test func timestampIsMicrosecondsSinceYearZero() {
        var writer = BtsnoopWriter(datalink: .hci)
        writer.append(event: Fixtures.hex("0E 04 01 0C 20 00"), at: Timestamp(microsecondsSinceEpoch: 0))
        // The record header's last 8 bytes: the Unix epoch in btsnoop's count.
        #expect(Array(writer.bytes[(16 + 16)..<(16 + 24)]) == Fixtures.hex("00 DC DD B3 0F 2F 80 00"))
        #expect(BtsnoopFormat.epochOffset == SnoopBytes.unixEpoch)
    }
}
