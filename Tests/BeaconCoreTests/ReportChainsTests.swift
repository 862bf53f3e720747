import Testing

@testable import BeaconCore

/// An extended advertisement reported in pieces is decoded once whole, and
/// one that never becomes whole is counted, not called malformed.
@Suite struct ReportChainsTests {
    static let start = Timestamp(microsecondsSinceEpoch: 1_714_564_800_000_000)
    static let advertiser = BluetoothAddress(0xC0, 0x11, 0x22, 0x33, 0x44, 0x55)

    /// 282 bytes: flags, 250 bytes of service data, then the Estimote iBeacon
    /// (from byte 255), which the pieces cut at 270 split.
    static let longAdvertisement =
        Fixtures.hex("02 01 06") + [0xFB, 0x16, 0xAA, 0xFE] + [UInt8](repeating: 0x5A, count: 248)
        + IBeaconFrameTests.estimoteAD

    /// The advertisement's pieces as a controller reports them: all but the
    /// last "incomplete, more to come" (0x20), the last `lastStatus`.
    static func pieces(
        of data: [UInt8], at cuts: [Int], sid: UInt8? = 3, lastStatus: UInt16 = 0,
        address: BluetoothAddress = advertiser, rssi: Int8 = -61
    ) -> [AdvertisingReport] {
        let bounds = [0] + cuts + [data.count]
        return (0..<(bounds.count - 1)).map { index in
            let status: UInt16 = index == bounds.count - 2 ? lastStatus : 0x20
            return AdvertisingReport(
                kind: .extended(AdvertisingReport.ExtendedType(rawValue: status)),
                addressType: 1, address: address, rssi: rssi - Int8(index), txPower: 4, advertisingSID: sid,
                data: data[bounds[index]..<bounds[index + 1]])
        }
    }

    static func decode(_ reports: [AdvertisingReport], _ decoder: inout AdvertisementDecoder, at time: Timestamp = start)
        -> [BeaconSighting]
    {
        var sightings: [BeaconSighting] = []
        for report in reports {
            decoder.decode(event: HCIEvent.advertisingReportEvent([report])[...], at: time) { sightings.append($0) }
        }
        return sightings
    }

    @Test func piecesWithAnotherAdvertiserBetweenThemAreDecodedOnceWhole() throws {
        var decoder = AdvertisementDecoder()
        let pieces = Self.pieces(of: Self.longAdvertisement, at: [200, 270])
        let stranger = AdvertisingReport(
            kind: .legacy(.advInd), addressType: 0, address: BluetoothAddress(1, 2, 3, 4, 5, 6), rssi: -80,
            data: Fixtures.hex("02 01 06")[...])
        let sightings = Self.decode([pieces[0], stranger, pieces[1], pieces[2]], &decoder)

        let sighting = try #require(sightings.first)
        #expect(sightings.count == 1)
        #expect(sighting.identity.uuid == Fixtures.estimoteUUID)
        #expect(sighting.identity.major == 12345 && sighting.identity.minor == 7)
        #expect(sighting.rssi == -63)  // the last piece's
        #expect(sighting.address == Self.advertiser)
        #expect(decoder.advertisements == 2)  // the stranger's and the whole one
        #expect(decoder.malformed == 0)
        #expect(decoder.incompleteAdvertisements == 0)
        #expect(decoder.chains.pending == 0)
        #expect(decoder.lastProblem == nil)
    }

    @Test func theWholeAdvertisementKeepsTheFirstPiecesTypeAsComplete() throws {
        var chains = ReportChains()
        var pieces = Self.pieces(of: Self.longAdvertisement, at: [229])
        pieces[0].kind = .extended([.scannable, AdvertisingReport.ExtendedType(rawValue: 0x20)])
        #expect(chains.join(pieces[0], at: Self.start) == nil)
        #expect(chains.pending == 1)
        let joined = chains.join(pieces[1], at: Self.start)
        let whole = try #require(joined)
        #expect(whole.kind == .extended([.scannable]))
        #expect(whole.dataStatus == .complete)
        #expect(Array(whole.data) == Self.longAdvertisement)
        #expect(whole.advertisingSID == 3)
    }

    @Test func twoSetsOfOneAdvertiserAreJoinedApart() throws {
        var decoder = AdvertisementDecoder()
        var other = Self.longAdvertisement
        other[other.count - 2] = 0x08  // minor 8
        let first = Self.pieces(of: Self.longAdvertisement, at: [150], sid: 1)
        let second = Self.pieces(of: other, at: [150], sid: 2)
        let sightings = Self.decode([first[0], second[0], second[1], first[1]], &decoder)
        #expect(sightings.map(\.identity.minor) == [8, 7])
        #expect(decoder.malformed == 0)
    }

    @Test func piecesCutShortAreCountedNotCalledMalformed() {
        var decoder = AdvertisementDecoder()
        let truncated: UInt16 = 0x40
        let sightings = Self.decode(Self.pieces(of: Self.longAdvertisement, at: [200], lastStatus: truncated), &decoder)
        #expect(sightings.isEmpty)
        #expect(decoder.incompleteAdvertisements == 1)
        #expect(decoder.malformed == 0)
        #expect(decoder.chains.pending == 0)
        #expect(decoder.lastProblem == "C0:11:22:33:44:55: extended advertisement cut short by the controller after 282 bytes")
    }

    @Test func withoutJoiningThePiecesWouldBeMalformed() {
        // The same pieces, each claiming to be whole: what decoding them one by one meets.
        var decoder = AdvertisementDecoder()
        let alone = Self.pieces(of: Self.longAdvertisement, at: [200, 270]).map { piece in
            var piece = piece
            piece.kind = .extended([])
            return piece
        }
        #expect(Self.decode(alone, &decoder).isEmpty)
        #expect(decoder.malformed >= 1)
    }

    @Test func aChainLongerThanAnAdvertiserCanSendIsGivenUp() {
        var chains = ReportChains()
        let piece = [UInt8](repeating: 0, count: 229)
        var sent = 0
        while sent + piece.count <= ReportChains.mostBytes {
            #expect(chains.join(Self.pieces(of: piece, at: [], lastStatus: 0x20)[0], at: Self.start) == nil)
            sent += piece.count
        }
        #expect(chains.pending == 1)
        #expect(chains.abandoned == 0)
        #expect(chains.join(Self.pieces(of: piece, at: [])[0], at: Self.start) == nil)
        #expect(chains.pending == 0)
        #expect(chains.abandoned == 1)
        #expect(chains.lastAbandoned?.contains("over 1650 bytes") == true)
    }

    @Test func moreAdvertisersInPiecesThanItFollowsGiveUpTheOldest() {
        var chains = ReportChains()
        for index in 0...ReportChains.mostChains {
            let address = BluetoothAddress(0, 0, 0, 0, 0, UInt8(index))
            let first = Self.pieces(of: Self.longAdvertisement, at: [100], address: address)[0]
            #expect(chains.join(first, at: Self.start) == nil)
        }
        #expect(chains.pending == ReportChains.mostChains)
        #expect(chains.abandoned == 1)
        #expect(chains.lastAbandoned?.hasPrefix("00:00:00:00:00:00: ") == true)
        // The newest is still joined.
        let newest = BluetoothAddress(0, 0, 0, 0, 0, UInt8(ReportChains.mostChains))
        let last = Self.pieces(of: Self.longAdvertisement, at: [100], address: newest)[1]
        #expect(chains.join(last, at: Self.start)?.data.count == Self.longAdvertisement.count)
    }

    @Test func aPieceLaterThanAnyAuxPointerCanReachStartsOver() {
        var chains = ReportChains()
        let pieces = Self.pieces(of: Self.longAdvertisement, at: [100])
        #expect(chains.join(pieces[0], at: Self.start) == nil)
        // Within the longest gap, the rest still joins.
        var copy = chains
        #expect(copy.join(pieces[1], at: Self.start + ReportChains.longestGap)?.data.count == 282)
        // Past it the chain is given up, and the late piece stands alone.
        let late = chains.join(pieces[1], at: Self.start + ReportChains.longestGap + .microseconds(1))
        #expect(late?.data.count == 182)
        #expect(chains.abandoned == 1)
        #expect(chains.lastAbandoned == "C0:11:22:33:44:55: extended advertisement left unfinished: no piece for over 2.457 s")
    }

    @Test func legacyReportsPassUntouched() {
        var chains = ReportChains()
        let report = AdvertisingReport(
            kind: .legacy(.advNonconnInd), addressType: 0, address: Self.advertiser, rssi: -70,
            data: IBeaconFrameTests.estimoteAD[...])
        #expect(chains.join(report, at: Self.start) == report)
        #expect(chains.pending == 0)
    }
}
