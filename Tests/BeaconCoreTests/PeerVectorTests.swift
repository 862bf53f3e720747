import BeaconCore
import BeaconTestSupport
import Foundation
import Testing

/// beacond's decoder on the vectors other iBeacon decoders test theirs with
/// (ble_monitor, ibeacon-ble, Home Assistant): the same bytes must give what
/// their tests assert. Sources and licences: `Tests/Data/README.md`.
@Suite struct PeerVectorTests {
    /// The reports and sightings one vector's event gives.
    static func decode(_ vector: PeerVector) throws -> (reports: [AdvertisingReport], sightings: [BeaconSighting], decoder: AdvertisementDecoder) {
        let event = vector.hciEvent
        var reports: [AdvertisingReport] = []
        try HCIEvent.forEachAdvertisingReport(in: event[...]) { reports.append($0) }
        var decoder = AdvertisementDecoder()
        var sightings: [BeaconSighting] = []
        decoder.decode(event: event[...], at: .milliseconds(0)) { sightings.append($0) }
        return (reports, sightings, decoder)
    }

    /// The test of Home Assistant's whose vector is an Apple `02 15` and seven bytes.
    static let truncated = "test_ignore_not_ibeacons"

    /// The peer's `round(x, 2)`.
    static func hundredths(_ value: Double) -> Double { (value * 100).rounded() / 100 }

    @Test(arguments: PeerVector.all)
    func decodesAsThePeersTestSays(vector: PeerVector) throws {
        let (reports, sightings, decoder) = try Self.decode(vector)
        let report = try #require(reports.count == 1 ? reports.first : nil, "one report per vector")
        #expect(decoder.malformedEvents == 0)
        if let address = vector.address {
            #expect(report.address.description.replacingOccurrences(of: ":", with: "") == address)
        }
        if let rssi = vector.rssi { #expect(report.rssi.map(Int.init) == rssi) }

        // Only the truncated iBeacon is malformed (aTruncatedIBeaconPeersIgnoreIsCountedMalformed).
        #expect(decoder.malformedFrames == (vector.peer.contains(Self.truncated) ? 1 : 0))
        if case .noIBeacon = vector.verdict {
            #expect(sightings.isEmpty)
            return
        }
        let sighting = try #require(sightings.count == 1 ? sightings.first : nil, "one iBeacon")
        #expect(sighting.rssi == report.rssi)
        #expect(sighting.address == report.address)
        let identity = sighting.identity
        switch vector.verdict {
        case .iBeacon(let uuid, let major, let minor, let power):
            #expect(identity.uuid == UUID(uuidString: uuid))
            #expect(Int(identity.major) == major)
            #expect(Int(identity.minor) == minor)
            #expect(Int(sighting.frame.measuredPower) == power)
        case .jaalee(let temperature, let humidity, let battery):
            #expect(Self.hundredths(175 * Double(identity.major) / 65535 - 45) == temperature)
            #expect(Self.hundredths(100 * Double(identity.minor) / 65535) == humidity)
            // The battery is the byte after the 21 the iBeacon's 0x15 announces,
            // which beacond ignores: it must be there, and be what the peer reads.
            let apple = try #require(try Self.appleManufacturerData(report.data))
            #expect(apple.count == 4 + 0x15 + 1)
            #expect(apple.last.map(Int.init) == battery)
        case .tilt(let uuid, let temperature, let gravity):
            #expect(identity.uuid == UUID(uuidString: uuid))
            #expect((Double(identity.major) - 32) * 5 / 9 == temperature)
            #expect(Double(identity.minor) / 1000 == gravity)
        case .noIBeacon:
            Issue.record("handled above")
        }
    }

    /// Home Assistant ignores an Apple `02 15` followed by seven bytes; beacond
    /// drops it too, and counts it as malformed rather than losing it silently.
    @Test func aTruncatedIBeaconPeersIgnoreIsCountedMalformed() throws {
        let vector = try #require(PeerVector.all.first { $0.peer.contains(Self.truncated) })
        let (_, sightings, decoder) = try Self.decode(vector)
        #expect(sightings.isEmpty)
        #expect(decoder.malformedFrames == 1)
        #expect(decoder.lastProblem?.contains("length byte 0x15 and 7 payload bytes") == true)
    }

    /// Home Assistant ranges the FEASY beacon that sends −3 dBm at 400 m (its
    /// cap); beacond decodes the −3 as sent and flags it as no calibration.
    @Test func theFeasyBeaconsPowerIsReportedAsSentAndFlagged() throws {
        let powers = try PeerVector.all.filter { $0.peer.contains("FEASY") }.map { vector throws in
            try #require(try Self.decode(vector).sightings.first).frame
        }
        #expect(powers.map(\.measuredPower) == [-3, -75])
        #expect(powers.map(\.hasPlausibleMeasuredPower) == [false, true])
    }

    /// The Apple manufacturer data of a payload (after `FF`), if any.
    static func appleManufacturerData(_ payload: ArraySlice<UInt8>) throws -> ArraySlice<UInt8>? {
        var found: ArraySlice<UInt8>?
        try ADStructure.forEach(in: payload) { structure in
            if structure.type == ADStructure.manufacturerSpecificData, structure.data.prefix(2).elementsEqual([0x4C, 0x00]) {
                found = structure.data
            }
        }
        return found
    }
}
