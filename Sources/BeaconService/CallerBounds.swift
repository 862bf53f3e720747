import BeaconCore
import BeacondAPI

/// What each client and each Unix user may still ask of the engine
/// (`ServiceLimits`), checked by the engine's owner where the regions and
/// the state live, so pipelined calls cannot race past it:
/// - client regions, per client, per user and in all: one member may open
///   many connections, and counted per connection alone it could take every
///   client region from the others;
/// - the pace of region starts per user: each is announced to every member;
/// - the pace of changes per user (SetPreferredVenue, Reload): each is a
///   write of state.json to an SD card, or a read of beacons.yaml and a log line.
struct CallerBounds: Sendable {
    private let limits: ServiceLimits
    /// The user behind each client that added regions.
    private var users: [String: UInt32] = [:]
    private var starts: RatePacer<UInt32>
    private var changes: RatePacer<UInt32>

    init(limits: ServiceLimits) {
        self.limits = limits
        starts = RatePacer(interval: limits.regionStartInterval, burst: limits.regionsPerUser)
        changes = RatePacer(interval: limits.changeInterval, burst: limits.changesPerUser)
    }

    /// Why `caller` may not add a region to `regions` at `now`; nil if it
    /// may, and then the start is counted against its user's pace.
    mutating func refusalToStart(_ caller: Caller, regions: [RegionDefinition], now: Timestamp) -> BeacondError? {
        let owners = regions.compactMap(\.owner)
        if owners.count(where: { $0 == caller.call.sender }) >= limits.regionsPerClient {
            return .tooManyRegions("a client may monitor at most \(limits.regionsPerClient) regions; stop one first")
        }
        if owners.count(where: { users[$0] == caller.user }) >= limits.regionsPerUser {
            return .tooManyRegions(
                "the clients of user \(caller.user) monitor \(limits.regionsPerUser) regions already, the most one user may; stop one first")
        }
        if owners.count >= limits.clientRegions {
            return .tooManyRegions("clients monitor \(limits.clientRegions) regions already, the most beacond takes; try again later")
        }
        if let wait = starts.admit(caller.user, now: now) {
            return .busy(
                "the clients of user \(caller.user) started \(limits.regionsPerUser) regions in a row; the next may start in \(wait.seconds.decimals(1)) s")
        }
        return nil
    }

    /// Why `caller` may not make a change (SetPreferredVenue, Reload) at
    /// `now`; nil if it may, and then the change is counted against its user's pace.
    mutating func refusalToChange(_ caller: Caller, now: Timestamp) -> BeacondError? {
        guard let wait = changes.admit(caller.user, now: now) else { return nil }
        return .busy(
            "the clients of user \(caller.user) made \(limits.changesPerUser) changes (SetPreferredVenue, Reload) in a row; "
                + "the next may be made in \(wait.seconds.decimals(1)) s")
    }

    /// `caller`'s start, admitted, was refused after all (an id it uses
    /// already): it does not count against its user's pace.
    mutating func startRefused(_ caller: Caller) {
        starts.refund(caller.user)
    }

    /// `caller`'s change, admitted, was refused after all for a venue that
    /// does not exist: it changed and cost nothing, so it does not count
    /// against its user's pace. A change refused because the state could not
    /// be saved does count: each was an attempt to write the disk.
    mutating func changeRefused(_ caller: Caller) {
        changes.refund(caller.user)
    }

    /// `caller` added a region (a client's user cannot change while it is connected).
    mutating func started(_ caller: Caller) {
        users[caller.call.sender] = caller.user
    }

    /// `client` left the bus, and its regions with it.
    mutating func forget(_ client: String) {
        users[client] = nil
    }
}
