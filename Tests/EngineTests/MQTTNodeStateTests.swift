@testable import BeaconCore
import BeaconMQTT
@testable import BeaconService
import Testing

private typealias S = EngineTestSupport
private typealias D = EngineDriver

/// What the service hands MQTT from a snapshot: beacons.yaml's, never a D-Bus client's.
@Suite struct MQTTNodeStateTests {
    /// A beacon ranged only for a client's own region (StartMonitoring) is
    /// not published with `publish_beacons`: anyone who reads the broker
    /// would learn what that client watches, and where the listener stands
    /// from it (an audit of 2026-11-28; docs/mqtt.md promised it).
    @Test func beaconsRangedOnlyForAClientsRegionAreNotPublished() throws {
        var configuration = S.configuration()
        configuration.regions = [RegionDefinition(id: "cafe", constraint: BeaconConstraint(uuid: S.uuid, major: 1))]
        var engine = BeaconEngine(configuration: configuration, now: S.t0)
        try engine.startMonitoring(RegionDefinition(id: "mine", constraint: BeaconConstraint(uuid: S.uuid), owner: ":1.42"), now: S.t0)
        let (cafes, clients) = (S.identity(1, 1), S.identity(2, 5))
        let beacons = [cafes, clients].map { TestBeacon(identity: $0, interval: .milliseconds(100), rssi: -60) }
        D.play(&engine, beacons, from: S.t0, until: S.t0 + .seconds(10))
        let snapshot = ServiceSnapshot(
            time: S.t0 + .seconds(10), engine: engine, available: true, availabilityReason: "", source: .simulate(scenario: nil))
        #expect(Set(snapshot.ranged.map(\.identity)) == [cafes, clients], "both ranged")
        #expect(MQTTNodeState(snapshot).beacons.map(\.identity) == [cafes])
        #expect(MQTTNodeState(snapshot).regions == ["cafe": .inside])
    }

    /// The same when a configured region covers the beacon but is not
    /// inside (its own `enter_rssi` not reached): the beacon is ranged for
    /// the client's region only (the review of 2026-11-28).
    @Test func aBeaconInAConfiguredRegionThatIsOutsideIsNotPublished() throws {
        var configuration = S.configuration()
        configuration.regions = [RegionDefinition(id: "cafe", constraint: BeaconConstraint(uuid: S.uuid), enterRSSI: -60)]
        var engine = BeaconEngine(configuration: configuration, now: S.t0)
        try engine.startMonitoring(RegionDefinition(id: "mine", constraint: BeaconConstraint(uuid: S.uuid), owner: ":1.42"), now: S.t0)
        D.play(&engine, [TestBeacon(identity: S.identity(1, 1), interval: .milliseconds(100), rssi: -75)], from: S.t0, until: S.t0 + .seconds(10))
        let snapshot = ServiceSnapshot(
            time: S.t0 + .seconds(10), engine: engine, available: true, availabilityReason: "", source: .simulate(scenario: nil))
        #expect(snapshot.ranged.map(\.identity) == [S.identity(1, 1)], "ranged for the client's region")
        #expect(MQTTNodeState(snapshot).regions["cafe"] != .inside)
        #expect(MQTTNodeState(snapshot).beacons.isEmpty)
    }
}
