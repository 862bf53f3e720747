import Testing

@testable import BeaconCore

/// The walk over `length, type, data…` structures that every decoder relies on.
@Suite struct ADStructureTests {
    struct Seen: Equatable {
        var type: UInt8
        var data: [UInt8]
        var offset: Int
    }

    static func walk(_ payload: ArraySlice<UInt8>) throws(FrameError) -> [Seen] {
        var seen: [Seen] = []
        try ADStructure.forEach(in: payload) { structure in
            seen.append(Seen(type: structure.type, data: Array(structure.data), offset: structure.offset))
        }
        return seen
    }

    @Test func visitsEveryStructureInOrder() throws {
        let payload = Fixtures.hex("02 01 06  03 03 AA FE  01 09  05 FF 4C 00 10 05")
        #expect(try Self.walk(payload[...]) == [
            Seen(type: 0x01, data: [0x06], offset: 0),
            Seen(type: 0x03, data: [0xAA, 0xFE], offset: 3),
            Seen(type: 0x09, data: [], offset: 7),
            Seen(type: 0xFF, data: [0x4C, 0x00, 0x10, 0x05], offset: 9),
        ])
    }

    @Test func offsetsAreRelativeToThePayloadNotTheBuffer() throws {
        let payload = Fixtures.hex("02 01 06  03 03 AA FE")
        let slice = Fixtures.offsetSlice(payload, by: 20)
        #expect(try Self.walk(slice).map(\.offset) == [0, 3])
        // The data slices point into the buffer, inside the payload.
        try ADStructure.forEach(in: slice) { structure in
            #expect(structure.data.startIndex >= slice.startIndex)
            #expect(structure.data.endIndex <= slice.endIndex)
        }
    }

    @Test func zeroLengthStopsTheWalk() throws {
        let payload = Fixtures.hex("02 01 06  00  1F FF")
        #expect(try Self.walk(payload[...]) == [Seen(type: 0x01, data: [0x06], offset: 0)])
        #expect(try Self.walk(Fixtures.hex("00 02 01 06")[...]).isEmpty)
    }

    @Test func emptyPayloadVisitsNothing() throws {
        #expect(try Self.walk([][...]).isEmpty)
    }

    @Test func lengthPastTheEndThrowsBeforeTheStructureIsSeen() {
        var seen: [UInt8] = []
        let payload = Fixtures.hex("02 01 06  05 09 41 42")
        #expect(throws: FrameError.truncatedStructure(offset: 3, declaredLength: 5, remaining: 3)) {
            try ADStructure.forEach(in: payload[...]) { seen.append($0.type) }
        }
        #expect(seen == [0x01])
        // A lone length byte at the end.
        #expect(throws: FrameError.truncatedStructure(offset: 3, declaredLength: 2, remaining: 0)) {
            try ADStructure.forEach(in: Fixtures.hex("02 01 06 02")[...]) { _ in }
        }
    }

    @Test func errorsFromTheBodyPropagate() {
        #expect(throws: FrameError.manufacturerDataWithoutCompany(offset: 3, length: 9)) {
            try ADStructure.forEach(in: Fixtures.hex("02 01 06  02 0A 00")[...]) { structure throws(FrameError) in
                if structure.type == 0x0A { throw .manufacturerDataWithoutCompany(offset: structure.offset, length: 9) }
            }
        }
    }
}
