import BeaconCore

extension Beacond {
    /// A ranged beacon as the API gives it (Beacon1's properties).
    public struct Beacon: Sendable, Hashable {
        public var identity: BeaconIdentity
        /// The last advertisement's RSSI; `nil` when none is recent.
        public var rssi: Int16?
        public var filteredRSSI: Double
        /// The power at 1 m ranging uses (`Beacon1.MeasuredPower`).
        public var measuredPower: Int16
        /// The measured power the frame carries, as sent (`Beacon1.AdvertisedPower`).
        public var advertisedPower: Int16
        /// `advertisedPower` can be a 1 m calibration (`Beacon1.AdvertisedPowerPlausible`).
        public var isAdvertisedPowerPlausible: Bool
        /// Metres; `nil` when unknown.
        public var distance: Double?
        public var accuracy: Double?
        public var proximity: Proximity
        public var isStationary: Bool
        /// Unix milliseconds.
        public var lastSeen: UInt64
        public var address: String
        /// The venue's id, if the beacon is a venue's.
        public var venue: String?

        public init(
            identity: BeaconIdentity, rssi: Int16?, filteredRSSI: Double, measuredPower: Int16, advertisedPower: Int16, isAdvertisedPowerPlausible: Bool,
            distance: Double?, accuracy: Double?,
            proximity: Proximity, isStationary: Bool, lastSeen: UInt64, address: String, venue: String?
        ) {
            self.identity = identity
            self.rssi = rssi
            self.filteredRSSI = filteredRSSI
            self.measuredPower = measuredPower
            self.advertisedPower = advertisedPower
            self.isAdvertisedPowerPlausible = isAdvertisedPowerPlausible
            self.distance = distance
            self.accuracy = accuracy
            self.proximity = proximity
            self.isStationary = isStationary
            self.lastSeen = lastSeen
            self.address = address
            self.venue = venue
        }
    }
}
