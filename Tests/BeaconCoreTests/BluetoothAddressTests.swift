import Testing

@testable import BeaconCore

@Suite struct BluetoothAddressTests {
    @Test func parsesEitherCase() {
        let address = BluetoothAddress(0xD0, 0x39, 0x72, 0xC9, 0xC1, 0x58)
        #expect(BluetoothAddress("D0:39:72:C9:C1:58") == address)
        #expect(BluetoothAddress("d0:39:72:c9:c1:58") == address)
        #expect(address.description == "D0:39:72:C9:C1:58")
    }

    @Test(arguments: ["", "D0:39:72:C9:C1", "D0:39:72:C9:C1:58:00", "D0:39:72:C9:C1:5", "D0:39:72:C9:C1:GG", "D0-39-72-C9-C1-58", "D0:39:72:C9::58"])
    func rejects(text: String) {
        #expect(BluetoothAddress(text) == nil)
    }

    /// Each part must be two hex digits; a sign is not a hex digit.
    @Test(arguments: ["D0:39:72:C9:C1:+5", "+0:39:72:C9:C1:58", "D0:39:72:C9:C1:-0"])
    func signedPartsAreRejected(text: String) {
        #expect(BluetoothAddress(text) == nil)
    }

    @Test func hciOrderIsLeastSignificantByteFirst() {
        let address = BluetoothAddress(0xD0, 0x39, 0x72, 0xC9, 0xC1, 0x58)
        #expect(address.littleEndianBytes == [0x58, 0xC1, 0xC9, 0x72, 0x39, 0xD0])
        #expect(BluetoothAddress(littleEndian: Fixtures.raspberryPiIBeaconEvent[...], at: 6) == address)
    }

    @Test func hashableByValue() {
        let set: Set = [BluetoothAddress(1, 2, 3, 4, 5, 6), BluetoothAddress(1, 2, 3, 4, 5, 6), BluetoothAddress(6, 5, 4, 3, 2, 1)]
        #expect(set.count == 2)
    }
}
