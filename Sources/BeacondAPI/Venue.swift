import BeaconCore

extension Beacond {
    /// The nearest venue as the API gives it (Manager1's venue dictionary).
    public struct Venue: Sendable, Hashable {
        public var id: String
        public var name: String
        public var proximity: Proximity
        /// Metres; `nil` when unknown.
        public var distance: Double?
        /// Uncertainty of `distance` in metres; `nil` when unknown.
        public var accuracy: Double?
        public var rssi: Double
        /// Since the beacon was last heard.
        public var age: Duration
        public var source: NearestVenue.Source
        /// The venue's Beacon1 object; `nil` for a preference.
        public var beacon: ObjectPath?
        public var runnerUp: String?
        /// How far ahead of the runner-up, 0…1.
        public var margin: Double
        /// The listener stands still (never for a preference).
        public var isStationary: Bool

        public init(
            id: String, name: String, proximity: Proximity, distance: Double?, accuracy: Double?, rssi: Double, age: Duration,
            source: NearestVenue.Source, beacon: ObjectPath?, runnerUp: String?, margin: Double, isStationary: Bool
        ) {
            self.id = id
            self.name = name
            self.proximity = proximity
            self.distance = distance
            self.accuracy = accuracy
            self.rssi = rssi
            self.age = age
            self.source = source
            self.beacon = beacon
            self.runnerUp = runnerUp
            self.margin = margin
            self.isStationary = isStationary
        }
    }

    /// One element of `nearestVenueUpdates()`, like `CLLocationUpdate`: the
    /// nearest venue, or `nil` when none is known.
    public struct VenueUpdate: Sendable, Hashable {
        public var venue: Venue?
        /// The listener stands still.
        public var isStationary: Bool { venue?.isStationary ?? false }

        public init(venue: Venue?) {
            self.venue = venue
        }
    }
}
