extension Beacond {
    /// A venue of beacons.yaml.
    public enum Venue1 {
        public static let name = "\(busName).Venue1"
        public static let path = "\(root)/venue"

        public static let id = APIProperty("Id", String.self, doc: "The venue's id.")
        public static let venueName = APIProperty("Name", String.self, doc: "Its name, for people.")
        public static let proximity = APIProperty("Proximity", String.self, doc: "Of its closest beacon: `immediate`, `near`, `far` or `unknown`.")
        public static let distance = APIProperty("Distance", Double.self, doc: "Metres to its closest beacon; -1 when unknown.")
        public static let nearest = APIProperty("Nearest", Bool.self, doc: "It is the nearest venue.")

        /// The bounds the interface's doc states.
        private static let limits = ServiceLimits()

        public static let interface = APIInterface(
            name: name, objectPath: "\(path)/<id>", summary: "a venue of beacons.yaml",
            doc: "Path elements are escaped as D-Bus requires (`counter-1` → `counter_2d1`). PropertiesChanged is sent at once "
                + "when `Nearest` or `Proximity` changes (a kiosk wants them); a change of `Distance` alone (by more than 5%) at most "
                + "once every \(limits.coalescing.seconds.decimals(0)) s per venue, and for at most \(limits.objectChanges) venues "
                + "every \(limits.objectChangePeriod.seconds.decimals(1)) s in all, those waiting longest first: a file may list "
                + "a thousand venues, and anyone in radio range may send their beacons' identities.",
            properties: [id, venueName, proximity, distance, nearest])
    }
}
