import BeaconCore

extension Beacond {
    /// A ranged beacon; objects appear and go (InterfacesAdded/Removed) with ranging.
    public enum Beacon1 {
        public static let name = "\(busName).Beacon1"
        public static let path = "\(root)/beacon"

        public static let uuid = APIProperty("Uuid", String.self, doc: "Proximity UUID.")
        public static let major = APIProperty("Major", UInt16.self, doc: "Major.")
        public static let minor = APIProperty("Minor", UInt16.self, doc: "Minor.")
        public static let rssi = APIProperty("Rssi", Int16.self, doc: "The last advertisement's RSSI in dBm; 127 when none is recent.")
        public static let filteredRssi = APIProperty("FilteredRssi", Double.self, doc: "The filtered RSSI in dBm.")
        public static let measuredPower = APIProperty(
            "MeasuredPower", Int16.self,
            doc: "RSSI at 1 m that ranging uses: the venue's `measured_power`, else `AdvertisedPower` when plausible, else `ranging.default_measured_power`.")
        public static let advertisedPower = APIProperty(
            "AdvertisedPower", Int16.self,
            doc: "The measured power the beacon's frame carries, as sent, plausible or not.")
        public static let advertisedPowerPlausible = APIProperty(
            "AdvertisedPowerPlausible", Bool.self,
            doc: "`AdvertisedPower` can be a 1 m calibration (\(IBeaconFrame.plausibleMeasuredPower.lowerBound)…\(IBeaconFrame.plausibleMeasuredPower.upperBound) dBm); "
                + "some trackers send 0, -3 or a positive battery level there.")
        public static let distance = APIProperty("Distance", Double.self, doc: "Estimated metres; -1 when unknown.")
        public static let accuracy = APIProperty("Accuracy", Double.self, doc: "Uncertainty of the distance in metres; -1 when unknown.")
        public static let proximity = APIProperty("Proximity", String.self, doc: "`immediate`, `near`, `far` or `unknown`.")
        public static let stationary = APIProperty("Stationary", Bool.self, doc: "Its level has stopped moving: the listener stands still.")
        public static let lastSeen = APIProperty("LastSeen", UInt64.self, doc: "When it was last heard, in Unix milliseconds.")
        public static let address = APIProperty("Address", String.self, doc: "The advertiser's Bluetooth address.")
        public static let venue = APIProperty("Venue", ObjectPath.self, doc: "Its venue's Venue1 object, or `/`.")

        /// The bounds the interface's doc states.
        private static let limits = ServiceLimits()

        public static let interface = APIInterface(
            name: name, objectPath: "\(path)/<uuid hex>_<major>_<minor>", summary: "a ranged beacon",
            doc: "At most \(limits.objectChanges) objects are added, removed or changed every \(limits.objectChangePeriod.seconds.decimals(1)) s "
                + "(\((Double(limits.objectChanges) / limits.objectChangePeriod.seconds).decimals(0)) a second, however often region events publish), "
                + "venue beacons first, "
                + "so a room full of strangers cannot flood the bus. PropertiesChanged is coalesced: at most once every "
                + "\(limits.coalescing.seconds.decimals(0)) s per object, and only when a value changed meaningfully (a number by more than 5%).",
            properties: [
                uuid, major, minor, rssi, filteredRssi, measuredPower, advertisedPower, advertisedPowerPlausible, distance, accuracy, proximity, stationary, lastSeen, address, venue])

        /// GetRangedBeacons' entries: the properties, as a dictionary.
        public static let dictionary = APIDictionary(
            "a ranged beacon (Beacon1's properties)", keys: interface.properties.map { APIDictionary.Key($0) })
    }
}

extension APIDictionary.Key {
    /// A key carrying a property's name, type and meaning.
    init(_ property: APIProperty) {
        name = property.name
        type = property.type
        doc = property.doc
    }
}
