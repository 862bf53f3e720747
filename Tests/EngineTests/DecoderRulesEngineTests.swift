import BeaconCore
import BeaconService
import BeaconTestSupport
import Foundation
import Testing

/// What the decoder's rules for real beacons mean downstream: a sighting
/// without an RSSI reading is presence but never a distance, and a measured
/// power that is no 1 m calibration is replaced in ranging and announced once.
@Suite struct DecoderRulesEngineTests {
    typealias S = EngineTestSupport

    /// Sightings of one beacon every 100 ms for `seconds`, the engine ticking
    /// every 200 ms; `rssi` and `power` may vary per sighting. Returns every event.
    static func play(
        _ engine: inout BeaconEngine, _ identity: BeaconIdentity, seconds: Int,
        rssi: (Int) -> Int8?, power: (Int) -> Int8 = { _ in -59 }
    ) -> [EngineEvent] {
        var events: [EngineEvent] = []
        for step in 0..<(seconds * 10) {
            let time = S.t0 + .milliseconds(Int64(step) * 100)
            let sighting = BeaconSighting(
                time: time, frame: IBeaconFrame(identity: identity, measuredPower: power(step)), rssi: rssi(step),
                address: BluetoothAddress(0xC0, 0, 0, 0, 0, 1), addressType: 1)
            engine.ingest(sighting, into: &events)
            if step % 2 == 1 { engine.tick(now: time, into: &events) }
        }
        return events
    }

    @Test func sightingsWithoutAReadingEnterTheRegionButStayUnknown() throws {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let events = Self.play(&engine, S.identity(), seconds: 5, rssi: { _ in nil })
        #expect(S.transitions(events).map(\.kind) == [.entered])
        #expect(engine.monitor.state(of: "cafe") == .inside)
        let beacon = try #require(engine.rangedBeacon(S.identity()))
        #expect(beacon.proximity == .unknown)
        #expect(beacon.distance < 0)
        #expect(beacon.rssi == nil)
        #expect(engine.nearestVenue == nil)
    }

    /// Readings of 127 and 0 among real ones, through the decoder as a
    /// source would deliver them: the filter sees only the real ones.
    @Test func noReadingsAmongRealOnesLeaveTheFilterAlone() throws {
        var mixed = BeaconEngine(configuration: S.configuration(), now: S.t0)
        var clean = BeaconEngine(configuration: S.configuration(), now: S.t0)
        var decoder = AdvertisementDecoder()
        let frame = IBeaconFrame(identity: S.identity(), measuredPower: -59)
        var events: [EngineEvent] = []
        for step in 0..<60 {
            let time = S.t0 + .milliseconds(Int64(step) * 100)
            let rssi: Int8 = [127, 0, -65][step % 3]
            let report = AdvertisingReport(
                kind: .legacy(.advNonconnInd), addressType: 1, address: BluetoothAddress(0xC0, 0, 0, 0, 0, 1),
                rssi: rssi, data: frame.advertisingData[...])
            decoder.decode(event: HCIEvent.advertisingReportEvent([report])[...], at: time) { mixed.ingest($0, into: &events) }
            if rssi == -65 {
                clean.ingest(S.sighting(S.identity(), rssi: -65, at: time), into: &events)
            }
        }
        let end = S.t0 + .seconds(6)
        mixed.tick(now: end, into: &events)
        clean.tick(now: end, into: &events)
        let a = try #require(mixed.rangedBeacon(S.identity()))
        let b = try #require(clean.rangedBeacon(S.identity()))
        #expect(decoder.iBeacons == 60)
        #expect(a.filteredRSSI == b.filteredRSSI)
        #expect(abs(a.filteredRSSI - -65) < 0.5)
        #expect(a.distance == b.distance)
        #expect(a.proximity != .unknown)
    }

    @Test(arguments: [Int8(0), -3, 5, -101, -19])
    func implausiblePowerIsReplacedByTheDefaultAndAnnouncedOnce(power: Int8) throws {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let beacon = S.identity(1, 3)  // no venue: no calibration
        let events = Self.play(&engine, beacon, seconds: 5, rssi: { _ in -69 }, power: { _ in power })
        let announcements = events.filter { if case .implausibleMeasuredPower = $0 { true } else { false } }
        #expect(announcements == [.implausibleMeasuredPower(beacon, advertised: power, rangingWith: -59)])
        let ranged = try #require(engine.rangedBeacon(beacon))
        #expect(ranged.measuredPower == -59)
        #expect(abs(ranged.distance - 3.162) < 0.2)  // 10^((−59 + 69) / 20)
        let line = try #require(EventLog.line(announcements[0]))
        #expect(line.contains("\(beacon)"))
        #expect(line.contains("measured power \(power) dBm"))
        #expect(line.contains("-59 dBm"))
    }

    /// A real beacon that sends −3 dBm (Home Assistant's FEASY test vector,
    /// which HA ranges at its 400 m cap): decoded from its bytes, it is
    /// announced once and ranged with the default, 1.6 m at −63 dBm.
    @Test func thePeersFeasyBeaconIsRangedWithTheDefault() throws {
        let vector = try #require(PeerVector.all.first { $0.peer.contains("FEASY_BEACON_SERVICE_INFO_1") })
        let feasy = try #require(UUID(uuidString: "FDA50693-A4E2-4FB1-AFCF-C6EB07647825"))
        var engine = BeaconEngine(
            configuration: S.configuration {
                $0.regions.append(RegionDefinition(id: "feasy", constraint: BeaconConstraint(uuid: feasy)))
            }, now: S.t0)
        var decoder = AdvertisementDecoder()
        var events: [EngineEvent] = []
        for step in 0..<50 {
            let time = S.t0 + .milliseconds(Int64(step) * 100)
            decoder.decode(event: vector.hciEvent[...], at: time) { engine.ingest($0, into: &events) }
            if step % 2 == 1 { engine.tick(now: time, into: &events) }
        }
        let beacon = BeaconIdentity(uuid: feasy, major: 10065, minor: 26049)
        let announcements = events.filter { if case .implausibleMeasuredPower = $0 { true } else { false } }
        #expect(announcements == [.implausibleMeasuredPower(beacon, advertised: -3, rangingWith: -59)])
        let ranged = try #require(engine.rangedBeacon(beacon))
        #expect(ranged.measuredPower == -59)
        #expect(abs(ranged.distance - 1.585) < 0.1)  // 10^((−59 + 63) / 20)
    }

    @Test func theConfiguredDefaultAndTheVenueCalibrationWin() throws {
        var engine = BeaconEngine(
            configuration: S.configuration {
                $0.ranging.defaultMeasuredPower = -69
                $0.venues[0].measuredPower = -65
            }, now: S.t0)
        var events = Self.play(&engine, S.identity(1, 3), seconds: 5, rssi: { _ in -69 }, power: { _ in 0 })
        events += Self.play(&engine, S.identity(1, 1), seconds: 5, rssi: { _ in -69 }, power: { _ in 4 })
        let announcements = events.filter { if case .implausibleMeasuredPower = $0 { true } else { false } }
        #expect(
            announcements == [
                .implausibleMeasuredPower(S.identity(1, 3), advertised: 0, rangingWith: -69),
                .implausibleMeasuredPower(S.identity(1, 1), advertised: 4, rangingWith: -65),
            ])
        let uncalibrated = try #require(engine.rangedBeacon(S.identity(1, 3)))
        let calibrated = try #require(engine.rangedBeacon(S.identity(1, 1)))
        #expect(abs(uncalibrated.distance - 1) < 0.1)
        #expect(calibrated.measuredPower == -65)
    }

    @Test(arguments: [Int8(-100), -20, -59])
    func plausiblePowerIsUsedAndNotAnnounced(power: Int8) throws {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let events = Self.play(&engine, S.identity(1, 3), seconds: 3, rssi: { _ in -69 }, power: { _ in power })
        #expect(!events.contains { if case .implausibleMeasuredPower = $0 { true } else { false } })
        let ranged = try #require(engine.rangedBeacon(S.identity(1, 3)))
        #expect(ranged.measuredPower == power)
    }

    /// A beacon whose byte flips between a real power and a battery level
    /// (0x64 = 100) is announced once; ranging uses the frame's value while it is real.
    @Test func aBeaconThatAlternatesIsAnnouncedOnce() {
        var engine = BeaconEngine(configuration: S.configuration(), now: S.t0)
        let events = Self.play(&engine, S.identity(1, 3), seconds: 5, rssi: { _ in -69 }, power: { $0 % 2 == 0 ? -59 : 100 })
        #expect(events.filter { if case .implausibleMeasuredPower = $0 { true } else { false } }.count == 1)
    }
}
