/// The service's bounds on what callers and a flood over the air can make it
/// hold or send. The engine's own bounds are `EngineLimits`. Declared with
/// the API because its errors quote them (`BeacondError.Code.meaning`).
public struct ServiceLimits: Sendable {
    /// Regions one bus client may add.
    public var regionsPerClient = 16
    /// Regions all clients of one Unix user may add together: a member may
    /// open many connections, and must not take every client region from
    /// the others.
    public var regionsPerUser = 64
    /// How often one user's clients may start regions once `regionsPerUser`
    /// have started in a row: each start and stop is announced to every
    /// member's clients (InterfacesAdded, InterfacesRemoved, RegionEntered),
    /// and a client starting and stopping in a loop made 530 such signals a
    /// second. A client starts its regions once, as it begins; 64 at once and
    /// one a second after that leaves it all it needs.
    public var regionStartInterval: Duration = .seconds(1)
    /// Changes one user's clients may make in a row (SetPreferredVenue,
    /// Reload), and how often after that: each preferred venue is an fsync
    /// of state.json — on a Pi's SD card, wear, at a thousand a second when
    /// a client alternates two venues — and each Reload reads beacons.yaml
    /// and logs a line. A kiosk changes the venue when a person taps.
    public var changesPerUser = 16
    public var changeInterval: Duration = .seconds(1)
    /// Regions all clients together may add: each costs work for every new beacon heard.
    public var clientRegions = 256
    /// Advertisements waiting for the engine; past this they are dropped and counted.
    /// The engine takes about 2 µs each, so a full queue is 20 ms of work.
    public var advertisementQueue = 10_000
    /// Beacon objects added, removed or changed per `objectChangePeriod`:
    /// at most 100 such signals a second however busy the room, and however
    /// many region events and answers publish between the engine's ticks.
    public var objectChanges = 20
    public var objectChangePeriod: Duration = .milliseconds(200)
    /// The longest a RequestNearestVenue may wait, in milliseconds (5 minutes).
    public var longestWait: UInt32 = 300_000
    /// RequestNearestVenue calls one client may have waiting, and all together:
    /// each holds its message, and libdbus stops reading the bus once the
    /// messages it holds pass its limit, so unbounded waiters would deafen beacond.
    public var waitersPerClient = 16
    /// All clients of one Unix user together: a member with many connections
    /// must not take every place from the others.
    public var waitersPerUser = 256
    public var waiters = 1_024
    /// Requests one client may have queued for the engine (a start, stop,
    /// preference or reload not yet taken): a flood from one client delays
    /// another's by at most this many of its own.
    public var queuedPerClient = 16
    /// Calls of one client that may wait for the bus to say which user the
    /// client runs as (asked once, at its first call): all it may have
    /// outstanding otherwise, a venue's waiters and the engine's queue.
    public var waitingForUserPerClient: Int { waitersPerClient + queuedPerClient }
    /// PropertiesChanged, InterfacesAdded and InterfacesRemoved at most this
    /// often per Beacon1 and Venue1 object (the radio decides how often those
    /// change). Region1's come at every publication: a caller makes them, and
    /// `regionStartInterval` paces that.
    public var coalescing: Duration = .seconds(1)

    public init() {}
}
