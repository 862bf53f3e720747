import BeaconCore
import BeaconSources
import BeacondAPI
import BeacondBus

/// The engine's values as the API gives them.
extension Beacond.Venue {
    init(_ venue: NearestVenue, now: Timestamp) {
        let beacon = venue.beacon
        self.init(
            id: venue.venueID, name: venue.name, proximity: venue.proximity, distance: venue.distance < 0 ? nil : venue.distance,
            accuracy: beacon.map(\.accuracy).flatMap { $0 < 0 ? nil : $0 }, rssi: beacon?.filteredRSSI ?? 0,
            age: .microseconds(max(0, beacon.map { (now - $0.lastSeen).microseconds } ?? 0)), source: venue.source,
            beacon: beacon.map { ObjectPath(BusPaths.beacon($0.identity)) }, runnerUp: venue.runnerUpID, margin: venue.margin,
            isStationary: venue.isStationary)
    }
}

extension Beacond.Beacon {
    /// `LastSeen` is on the wall clock: the engine's time of the sighting (a
    /// replay's at @max runs ahead of the service's) taken to the service
    /// clock through the snapshot's shown offset.
    init(_ beacon: RangedBeacon, in snapshot: ServiceSnapshot) {
        let seen = beacon.lastSeen + snapshot.shownOffset
        self.init(
            identity: beacon.identity, rssi: beacon.rssi.map(Int16.init), filteredRSSI: beacon.filteredRSSI,
            measuredPower: Int16(beacon.measuredPower), advertisedPower: Int16(beacon.advertisedPower),
            isAdvertisedPowerPlausible: IBeaconFrame.plausibleMeasuredPower.contains(beacon.advertisedPower), distance: beacon.distance < 0 ? nil : beacon.distance,
            accuracy: beacon.accuracy < 0 ? nil : beacon.accuracy, proximity: beacon.proximity, isStationary: beacon.isStationary,
            lastSeen: UInt64(max(0, ServiceClock.system.wallTime(of: seen).millisecondsSinceEpoch)),
            address: beacon.address.description, venue: beacon.venueID)
    }
}
