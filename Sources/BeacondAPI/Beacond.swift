/// org.beacond, declared once (SPEC section 6): the bus name, the object
/// paths and the four interfaces. The service dispatches from these
/// declarations, BeaconClient calls through them, and `generate-api` writes
/// `dist/dbus/*.xml` and `docs/api/*.md` from them.
public enum Beacond {
    /// What `beacond --version`, `beaconctl --version` and Manager1's `Version` say
    /// (the package adds its git suffix: scripts/package.sh).
    public static let version = "0.1.0"
    public static let busName = "org.beacond"
    /// The manager's path, the ObjectManager for every object below it.
    public static let root = "/org/beacond"
    /// Where objects live below `root`. The manager's Introspect lists all
    /// four always: anyone may introspect it (the policy), and which of them
    /// hold objects now would tell a stranger that a beacon is being ranged.
    public static let objectPaths = [Beacon1.path, Venue1.path, Region1.configuredPath, Region1.clientPath]

    public static let interfaces: [APIInterface] = [
        Manager1.interface, Region1.interface, Beacon1.interface, Venue1.interface,
    ]
}
