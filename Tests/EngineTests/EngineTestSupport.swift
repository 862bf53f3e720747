import BeaconCore
import Foundation

/// Sightings and a hand-driven clock for engine tests: no sleeping, no wall clock.
enum EngineTestSupport {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let t0 = Timestamp.milliseconds(1_000_000)

    static func identity(_ major: UInt16 = 1, _ minor: UInt16 = 1) -> BeaconIdentity {
        BeaconIdentity(uuid: uuid, major: major, minor: minor)
    }

    /// `rssi` nil: heard, but the controller measured no signal (HCI's 127).
    static func sighting(_ identity: BeaconIdentity, rssi: Int8?, at time: Timestamp, power: Int8 = -59) -> BeaconSighting {
        BeaconSighting(
            time: time, frame: IBeaconFrame(identity: identity, measuredPower: power), rssi: rssi,
            address: BluetoothAddress(0xC0, 0, 0, 0, 0, 1), addressType: 1)
    }

    /// A café: one region over the UUID, a venue per beacon of major 1 (minors 1, 2).
    static func configuration(_ change: (inout Configuration) -> Void = { _ in }) -> Configuration {
        var configuration = Configuration(
            regions: [RegionDefinition(id: "cafe", constraint: BeaconConstraint(uuid: uuid))],
            venues: [
                VenueDefinition(id: "counter-1", name: "Counter 1", constraint: BeaconConstraint(uuid: uuid, major: 1, minor: 1)),
                VenueDefinition(id: "counter-2", name: "Counter 2", constraint: BeaconConstraint(uuid: uuid, major: 1, minor: 2)),
            ])
        change(&configuration)
        return configuration
    }

    /// Feeds beacons from `start` for `duration`, each at its interval with
    /// its RSSI: `EngineDriver.play` with the beacons written as tuples.
    @discardableResult
    static func feed(
        _ engine: inout BeaconEngine, _ beacons: [(BeaconIdentity, Int8, Duration)], from start: Timestamp,
        for duration: Duration
    ) -> [EngineEvent] {
        EngineDriver.play(
            &engine, beacons.map { TestBeacon(identity: $0.0, interval: $0.2, rssi: $0.1) }, from: start,
            until: start + duration)
    }

    static func transitions(_ events: [EngineEvent]) -> [RegionTransition] {
        events.compactMap { if case .region(let transition) = $0 { transition } else { nil } }
    }

    /// The venues announced, in order, each once however often it is
    /// announced again in a row (the listener settling or moving on).
    static func venueChanges(_ events: [EngineEvent]) -> [String?] {
        let announced = events.compactMap { if case .nearestVenueChanged(let venue) = $0 { .some(venue?.venueID) } else { nil } }
        return announced.enumerated().filter { $0.offset == 0 || announced[$0.offset - 1] != $0.element }.map(\.element)
    }
}
