import BeaconCore

extension Beacond {
    /// `/org/beacond`: the nearest venue, ranged beacons, a client's own regions.
    public enum Manager1 {
        public static let name = "\(busName).Manager1"

        // MARK: Dictionaries

        /// The keys of `venue`.
        public enum VenueKey {
            public static let id = APIDictionary.Key("id", String.self, "The venue's id in beacons.yaml.")
            public static let name = APIDictionary.Key("name", String.self, "Its name, for people.")
            public static let proximity = APIDictionary.Key("proximity", String.self, "`immediate`, `near`, `far` or `unknown`.")
            public static let distance = APIDictionary.Key("distance", Double.self, "Metres to its beacon; -1 when unknown.")
            public static let accuracy = APIDictionary.Key("accuracy", Double.self, "Uncertainty of the distance in metres; -1 when unknown.")
            public static let rssi = APIDictionary.Key("rssi", Double.self, "The beacon's filtered RSSI in dBm.")
            public static let ageMilliseconds = APIDictionary.Key("age_ms", UInt64.self, "Milliseconds since the beacon was last heard.")
            public static let source = APIDictionary.Key(
                "source", String.self, "`ranging`, or `preference` when nothing is in range and the preferred venue answers.")
            public static let beacon = APIDictionary.Key("beacon", ObjectPath.self, "The venue's Beacon1 object, `/` for a preference.")
            public static let runnerUp = APIDictionary.Key("runner_up", String.self, "The next nearest venue's id, or \"\".")
            public static let margin = APIDictionary.Key("margin", Double.self, "How far ahead of the runner-up, 0…1.")
            public static let stationary = APIDictionary.Key(
                "stationary", Bool.self,
                "The listener stands still: the winner's and the runner-up's beacons both say so; never for a preference.")
        }

        public static let venue = APIDictionary(
            "the nearest venue",
            keys: [
                VenueKey.id, VenueKey.name, VenueKey.proximity, VenueKey.distance, VenueKey.accuracy, VenueKey.rssi,
                VenueKey.ageMilliseconds, VenueKey.source, VenueKey.beacon, VenueKey.runnerUp, VenueKey.margin, VenueKey.stationary,
            ])

        /// The keys of `constraint`.
        public enum ConstraintKey {
            public static let uuid = APIDictionary.Key(
                "uuid", String.self, "The proximity UUID, like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 (required unless the whole dictionary is empty).")
            public static let major = APIDictionary.Key("major", UInt16.self, "Only this major (any integer type is accepted).")
            public static let minor = APIDictionary.Key("minor", UInt16.self, "Only this minor; needs a major.")
        }

        public static let constraint = APIDictionary("a beacon constraint", keys: [ConstraintKey.uuid, ConstraintKey.major, ConstraintKey.minor])

        /// The keys of `options`.
        public enum OptionKey {
            public static let notifyOnEntry = APIDictionary.Key("notify_on_entry", Bool.self, "Send RegionEntered (default true).")
            public static let notifyOnExit = APIDictionary.Key("notify_on_exit", Bool.self, "Send RegionExited (default true).")
        }

        public static let monitoringOptions = APIDictionary("monitoring options", keys: [OptionKey.notifyOnEntry, OptionKey.notifyOnExit])

        // MARK: Methods

        /// The bounds the methods' docs state.
        private static let limits = ServiceLimits()

        public static let getNearestVenue = APIMethod(
            "GetNearestVenue", outputs: [.init("venue", .dictionary(venue))], errors: [.noVenue],
            doc: "The nearest venue now: from ranging, or the preferred venue when nothing is in range.")
        public static let requestNearestVenue = APIMethod(
            "RequestNearestVenue", inputs: [.init("timeout_ms", UInt32.self)], outputs: [.init("venue", .dictionary(venue))],
            errors: [.locationUnknown, .invalidArguments, .busy],
            doc: "One answer, like Core Location's requestLocation: at once when a ranged answer exists, else as soon as one does, "
                + "else LocationUnknown when `timeout_ms` (at most \(limits.longestWait)) has passed. Up to \(limits.waitersPerClient) calls of a client, "
                + "\(limits.waitersPerUser) of all clients of one Unix user and \(limits.waiters) in all may wait "
                + "(past that, Busy; a call that wants no reply is not held); none blocks the service.")
        public static let getRangedBeacons = APIMethod(
            "GetRangedBeacons", inputs: [.init("constraint", .dictionary(constraint))],
            outputs: [.init("beacons", .array(.dictionary(Beacon1.dictionary)))], errors: [.invalidArguments],
            doc: "The ranged beacons matching `constraint` (`{}` for all), nearest first, unknown last.")
        public static let requestState = APIMethod(
            "RequestState", inputs: [.init("region_id", String.self)], outputs: [.init("state", String.self)], errors: [.unknownRegion],
            doc: "`inside`, `outside` or `unknown`: the caller's own region of that id first, then beacons.yaml's.")
        public static let startMonitoring = APIMethod(
            "StartMonitoring",
            inputs: [.init("id", String.self), .init("constraint", .dictionary(constraint)), .init("options", .dictionary(monitoringOptions))],
            outputs: [.init("region", ObjectPath.self)], errors: [.invalidArguments, .regionExists, .tooManyRegions, .busy],
            doc: "Monitors a region owned by the caller, at `/org/beacond/client/<owner>/<id>` (each part escaped as Venue1's paths are). "
                + "`id` is \(Identifier.rule); the caller's ids are its own, so they "
                + "never collide with beacons.yaml's or another client's. The region is not saved: it is removed when the caller leaves "
                + "the bus. At most \(limits.regionsPerClient) per client, \(limits.regionsPerUser) for all clients of one Unix user, "
                + "and \(limits.clientRegions) across all clients; one user's clients may start \(limits.regionsPerUser) in a row, then one "
                + "every \(limits.regionStartInterval.seconds.decimals(0)) s (Busy names the wait).")
        public static let stopMonitoring = APIMethod(
            "StopMonitoring", inputs: [.init("id", String.self)], errors: [.unknownRegion, .notOwner, .busy],
            doc: "Stops one of the caller's own regions. Another client's region of the same id is not the caller's: UnknownRegion.")
        public static let setPreferredVenue = APIMethod(
            "SetPreferredVenue", inputs: [.init("id", String.self)], errors: [.unknownVenue, .stateNotSaved, .busy],
            doc: "The venue to answer with when nothing is in range, or \"\" for nearest only. Persisted, and answered only once on disk. "
                + "One user's clients may change it (or Reload) \(limits.changesPerUser) times in a row, then once every "
                + "\(limits.changeInterval.seconds.decimals(0)) s (Busy names the wait); setting the venue it already is is always answered.")
        public static let reload = APIMethod(
            "Reload", errors: [.invalidConfig, .busy],
            doc: "Re-reads beacons.yaml, as SIGHUP does; an invalid file changes nothing. Paced with SetPreferredVenue's changes.")

        // MARK: Properties

        public static let available = APIProperty("Available", Bool.self, doc: "The source delivers advertisements.")
        public static let source = APIProperty(
            "Source", String.self,
            doc: "The source scanning, as `--source` would name it: what `auto` chose and the adapter a bare `hci` or `bluez` found "
                + "(`hci:hci0`, `bluez:hci1`) once it has opened one; as given until then, and for replay and simulate.")
        public static let adapter = APIProperty(
            "Adapter", String.self,
            doc: "The Bluetooth adapter scanning (`hci0`); \"\" for replay and simulate, and until `auto` or a bare `hci` or `bluez` has opened one.")
        public static let nearestVenue = APIProperty("NearestVenue", String.self, doc: "The nearest venue's id, or \"\".")
        public static let preferredVenue = APIProperty("PreferredVenue", String.self, doc: "The preferred venue's id, or \"\".")
        public static let version = APIProperty("Version", String.self, doc: "beacond's version.")
        public static let droppedAdvertisements = APIProperty(
            "DroppedAdvertisements", UInt64.self, doc: "Advertisements dropped since start because \(limits.advertisementQueue) were already waiting for the engine.")
        public static let mqtt = APIProperty(
            "Mqtt", String.self, doc: "`off`, `connecting: …`, `connected: …` or `disconnected: …` (docs/mqtt.md).")

        // MARK: Signals

        public static let regionEntered = APISignal(
            "RegionEntered", [.init("id", String.self), .init("region", ObjectPath.self)],
            doc: "The listener entered a region that asks to be told.")
        public static let regionExited = APISignal(
            "RegionExited", [.init("id", String.self), .init("region", ObjectPath.self)],
            doc: "The listener left a region that asks to be told.")
        public static let nearestVenueChanged = APISignal(
            "NearestVenueChanged", [.init("id", String.self), .init("venue", .dictionary(venue))],
            doc: "The nearest venue changed, or the listener became stationary or moved (`stationary` in `venue`); `id` is \"\" and `venue` empty when it was lost.")
        public static let availabilityChanged = APISignal(
            "AvailabilityChanged", [.init("available", Bool.self), .init("reason", String.self)],
            doc: "The source started or stopped delivering (also when it goes silent).")

        public static let interface = APIInterface(
            name: name, objectPath: root, summary: "the service",
            doc: "The root also implements org.freedesktop.DBus.ObjectManager for every object below it, as BlueZ does.",
            methods: [getNearestVenue, requestNearestVenue, getRangedBeacons, requestState, startMonitoring, stopMonitoring, setPreferredVenue, reload],
            properties: [available, source, adapter, nearestVenue, preferredVenue, version, droppedAdvertisements, mqtt],
            signals: [regionEntered, regionExited, nearestVenueChanged, availabilityChanged])
    }
}
