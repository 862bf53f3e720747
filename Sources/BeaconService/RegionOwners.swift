import BeaconCore
import BeacondAPI

/// The Unix user behind each client that added regions, so the bounds on
/// client regions hold per client, per user and in all (`ServiceLimits`):
/// one member may open many connections, and counted per connection alone
/// it could take every client region from the others. Kept by the engine's
/// owner beside the regions it counts.
struct RegionOwners: Sendable {
    private var users: [String: UInt32] = [:]

    /// Why `owner`, running as `user`, may not add a region to `regions` now; nil if it may.
    func refusal(owner: String, user: UInt32, regions: [RegionDefinition], limits: ServiceLimits) -> BeacondError? {
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
