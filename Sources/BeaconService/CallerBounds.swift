import BeaconCore
import BeacondAPI

/// The Unix user behind each client that added regions, so the bounds on
/// client regions hold per client, per user and in all (`ServiceLimits`):
/// one member may open many connections, and counted per connection alone
/// it could take every client region from the others. Kept by the engine's
/// owner beside the regions it counts.
/// Starts are paced per user too (`ServiceLimits.regionStartInterval`).
struct RegionOwners: Sendable {
    private var users: [String: UInt32] = [:]
    private var starts: RatePacer<UInt32>

    init(limits: ServiceLimits) {
        starts = RatePacer(interval: limits.regionStartInterval, burst: limits.regionsPerUser)
    }

    /// Why `owner`, running as `user`, may not add a region to `regions` at
    /// `now`; nil if it may, and then the start is counted against its user's pace.
    mutating func refusal(owner: String, user: UInt32, regions: [RegionDefinition], limits: ServiceLimits, now: Timestamp) -> BeacondError? {
        let owners = regions.compactMap(\.owner)
        if owners.count(where: { $0 == owner }) >= limits.regionsPerClient {
            return .tooManyRegions("a client may monitor at most \(limits.regionsPerClient) regions; stop one first")
        }
        if owners.count(where: { users[$0] == user }) >= limits.regionsPerUser {
            return .tooManyRegions(
                "the clients of user \(user) monitor \(limits.regionsPerUser) regions already, the most one user may; stop one first")
        }
        if owners.count >= limits.clientRegions {
            return .tooManyRegions("clients monitor \(limits.clientRegions) regions already, the most beacond takes; try again later")
        }
        if let wait = starts.admit(user, now: now) {
            return .busy(
                "the clients of user \(user) started \(limits.regionsPerUser) regions in a row; the next may start in \(wait.seconds.decimals(1)) s")
        }
        return nil
    }

    /// `owner` runs as `user` (a client's user cannot change while it is connected).
    mutating func record(_ owner: String, user: UInt32) {
        users[owner] = user
    }

    /// `owner` left the bus, and its regions with it.
    mutating func forget(_ owner: String) {
        users[owner] = nil
    }
}
