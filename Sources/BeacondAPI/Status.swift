extension Beacond {
    /// Manager1's properties.
    public struct Status: Sendable, Hashable {
        public var available: Bool
        public var source: String
        public var adapter: String
        public var nearestVenue: String?
        public var preferredVenue: String?
        public var version: String
        public var droppedAdvertisements: UInt64
        /// `off`, `connecting: …`, `connected: …` or `disconnected: …`.
        public var mqtt: String

        public init(
            available: Bool, source: String, adapter: String, nearestVenue: String?, preferredVenue: String?, version: String,
            droppedAdvertisements: UInt64, mqtt: String
        ) {
            self.available = available
            self.source = source
            self.adapter = adapter
            self.nearestVenue = nearestVenue
            self.preferredVenue = preferredVenue
            self.version = version
            self.droppedAdvertisements = droppedAdvertisements
            self.mqtt = mqtt
        }
    }
}
