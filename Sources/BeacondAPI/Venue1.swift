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

        public static let interface = APIInterface(
            name: name, objectPath: "\(path)/<id>", summary: "a venue of beacons.yaml",
            doc: "Path elements are escaped as D-Bus requires (`counter-1` → `counter_2d1`). PropertiesChanged is sent whenever "
                + "a value changes, up to five times a second: venues are few, and a kiosk wants `Nearest` at once.",
            properties: [id, venueName, proximity, distance, nearest])
    }
}
