extension Beacond {
    /// A monitored region: beacons.yaml's, or a client's own.
    public enum Region1 {
        public static let name = "\(busName).Region1"
        /// beacons.yaml's regions are below this path.
        public static let configuredPath = "\(root)/region"
        /// A client's regions are below this path, under the client's bus name.
        public static let clientPath = "\(root)/client"
        /// What `Owner` says for a region of beacons.yaml.
        public static let configurationOwner = "config"

        public static let id = APIProperty("Id", String.self, doc: "The region's id.")
        public static let uuid = APIProperty("Uuid", String.self, doc: "The proximity UUID it takes.")
        public static let major = APIProperty("Major", UInt16.self, doc: "The major it takes; absent when it takes any.")
        public static let minor = APIProperty("Minor", UInt16.self, doc: "The minor it takes; absent when it takes any.")
        public static let state = APIProperty("State", String.self, doc: "`inside`, `outside` or `unknown`.")
        public static let notifyOnEntry = APIProperty("NotifyOnEntry", Bool.self, doc: "RegionEntered is sent for it.")
        public static let notifyOnExit = APIProperty("NotifyOnExit", Bool.self, doc: "RegionExited is sent for it.")
        public static let owner = APIProperty("Owner", String.self, doc: "`config`, or the bus name of the client that monitors it.")

        public static let interface = APIInterface(
            name: name, objectPath: "\(configuredPath)/<id>, \(clientPath)/<owner>/<id>", summary: "a monitored region",
            doc: "Path elements are escaped as D-Bus requires (`caffe-macs` → `caffe_2dmacs`, a client's `:1.42` → `_3a1_2e42`). "
                + "Major and Minor are absent when the region takes any. A client's regions go away when it leaves the bus.",
            properties: [id, uuid, major, minor, state, notifyOnEntry, notifyOnExit, owner])
    }
}
