@testable import BeaconCore
@testable import BeaconService
import BeacondAPI
import BeaconSources
@testable import DBus
import Foundation
import Testing

private typealias S = EngineTestSupport

/// The service's bounds as plain values on a hand clock: the inbox that puts
/// requests ahead of advertisements, the ledger that paces beacon objects on
/// the bus, and the keeper that retries a failing save with backoff.
@Suite struct ServiceBoundsTests {
    static func advertisement(at time: Timestamp) -> SourceEvent {
        .hciEvent([0x3E, 0x00][...], time: time)
    }

    @Test func theInboxBoundsAdvertisementsCountsDropsAndNeverDropsControl() {
        let mailbox = ServiceMailbox(capacity: 3)
        for n in 0..<5 { mailbox.post(Self.advertisement(at: S.t0 + .milliseconds(Int64(n)))) }
        mailbox.post(.tick)
        mailbox.post(.availability(available: false, reason: "gone"))
        var batch = mailbox.take()
        #expect(batch.advertisements.count == 3)
        #expect(batch.dropped == 2)
        #expect(batch.control.count == 2)
        // Taken means gone; the drop count is since start.
        mailbox.post(Self.advertisement(at: S.t0))
        batch = mailbox.take()
        #expect(batch.advertisements.count == 1 && batch.control.isEmpty && batch.dropped == 2)
    }

    /// The journal hears of the first drop at once, then at most once a
    /// minute with what was dropped since; drops within the minute are said
    /// once it has passed, though the flood has ended.
    @Test func dropsAreSaidAtOnceThenAtMostOnceAMinute() {
        var report = DropReport()
        #expect(report.line(total: 0, now: S.t0) == nil)
        let first = report.line(total: 5, now: S.t0 + .seconds(1))
        #expect(first?.hasPrefix("dropped 5 advertisement(s)") == true && first?.contains("(5 since start)") == true, "\(first ?? "nil")")
        #expect(report.line(total: 9, now: S.t0 + .seconds(30)) == nil)
        #expect(report.line(total: 12, now: S.t0 + .milliseconds(60_999)) == nil)
        let second = report.line(total: 12, now: S.t0 + .seconds(61))
        #expect(second?.hasPrefix("dropped 7 advertisement(s)") == true && second?.contains("(12 since start)") == true, "\(second ?? "nil")")
        // Nothing new: nothing said, however long after.
        #expect(report.line(total: 12, now: S.t0 + .seconds(600)) == nil)
        // A drop after a quiet spell is said at once again.
        let third = report.line(total: 13, now: S.t0 + .seconds(601))
        #expect(third?.hasPrefix("dropped 1 advertisement(s)") == true && third?.contains("(13 since start)") == true, "\(third ?? "nil")")
    }

    /// Beacons whose frames carry no 1 m calibration are named once each, at
    /// most ten a minute; a stranger spraying 50 new identities a second adds
    /// one counting line a minute to the journal, not 50 lines a second.
    @Test func implausiblePowersAreNamedOnceAndAtAPace() {
        var report = ImplausiblePowerReport()
        let beacon = { (minor: Int) in BeaconIdentity(uuid: S.uuid, major: 9, minor: UInt16(minor)) }
        let first = report.admit(beacon(0), now: S.t0)
        let again = report.admit(beacon(0), now: S.t0 + .seconds(1))
        #expect(first && !again, "once a beacon")
        // A spray: 50 a second for two minutes, the first beacon among them again.
        var named = 0
        var summaries: [String] = []
        for step in 0..<6_000 {
            let now = S.t0 + .milliseconds(1_000 + Int64(step) * 20)
            if report.admit(beacon(step % 3_000 == 0 ? 0 : step + 1), now: now) { named += 1 }
            if let line = report.summary(now: now) { summaries.append(line) }
        }
        // Ten a minute: nine more in the first minute (after beacon 0), ten in each of the next two begun.
        #expect(named == 9 + 10 + 10, "\(named) named")
        #expect(summaries.count == 1, "\(summaries)")
        #expect(summaries.first?.hasPrefix("2990 more beacon(s) advertised a measured power that is no 1 m calibration") == true, "\(summaries)")
        let rest = report.summary(now: S.t0 + .seconds(600))
        let nothing = report.summary(now: S.t0 + .seconds(601))
        #expect(rest?.contains(" more beacon(s) ") == true, "the rest, once their minute has passed")
        #expect(nothing == nil)
        // A configured venue's beacon is named whatever the strangers did.
        let venue = report.admit(BeaconIdentity(uuid: S.uuid, major: 1, minor: 1), isVenue: true, now: S.t0 + .seconds(602))
        #expect(venue)
    }

    /// A call from `sender` that nobody hears the answer to.
    static func call(_ member: String, from sender: String) -> DBusMethodCall {
        DBusMethodCall(sender: sender, path: "/org/beacond", interface: "org.beacond.Manager1", member: member, arguments: []) { _ in }
    }

    static func caller(_ sender: String, user: UInt32, _ member: String = "StartMonitoring") -> Caller {
        Caller(call: call(member, from: sender), user: user)
    }

    /// One caller's flood waits behind at most sixteen of its own requests;
    /// another caller's, and what the bus itself says, are not held back.
    @Test func theInboxQueuesAtMostSixteenRequestsPerCallerUntilTaken() {
        let mailbox = ServiceMailbox(capacity: 10)
        func reload(_ sender: String) -> ServiceRequest { .reload(Self.caller(sender, user: 0, "Reload")) }
        let accepted = (0..<20).map { _ in mailbox.post(request: reload(":1.5"), perCaller: 16) }
        #expect(accepted.prefix(16).allSatisfy { $0 } && accepted.suffix(4).allSatisfy { !$0 })
        #expect(mailbox.post(request: reload(":1.6"), perCaller: 16))
        #expect(mailbox.post(request: .clientLeft(":1.5"), perCaller: 16))
        #expect(mailbox.post(request: .reload(nil), perCaller: 16))  // SIGHUP's
        #expect(mailbox.take().control.count == 19)
        #expect(mailbox.post(request: reload(":1.5"), perCaller: 16))  // taken: room again
    }

    /// The bounds on client regions, small: two per client, three per user, four in all.
    @Test func callerBoundsLimitRegionsPerClientPerUserAndInAll() {
        var limits = ServiceLimits()
        (limits.regionsPerClient, limits.regionsPerUser, limits.clientRegions) = (2, 3, 4)
        limits.regionStartInterval = .milliseconds(1)  // not what this test is about
        var bounds = CallerBounds(limits: limits)
        var regions = [RegionDefinition(id: "file", constraint: BeaconConstraint(uuid: S.uuid))]  // beacons.yaml's: not counted
        var now = S.t0
        /// Adds a region for `sender` as `user` a second later unless refused; the refusal's message otherwise.
        func add(_ sender: String, user: UInt32) -> String? {
            now = now + .seconds(1)
            let caller = Self.caller(sender, user: user)
            if let refusal = bounds.refusalToStart(caller, regions: regions, now: now) { return refusal.message }
            regions.append(RegionDefinition(id: "r\(regions.count)", constraint: BeaconConstraint(uuid: S.uuid), owner: sender))
            bounds.started(caller)
            return nil
        }
        #expect(add(":1.1", user: 1000) == nil && add(":1.1", user: 1000) == nil)
        #expect(add(":1.1", user: 1000)?.hasPrefix("a client may monitor at most 2 regions") == true)
        #expect(add(":1.2", user: 1000) == nil)
        #expect(add(":1.2", user: 1000)?.hasPrefix("the clients of user 1000 monitor 3 regions already") == true)
        #expect(add(":1.3", user: 1001) == nil)
        #expect(add(":1.3", user: 1001)?.hasPrefix("clients monitor 4 regions already") == true)
        // :1.1 leaves with its two regions: user 1000 has room for two again.
        regions.removeAll { $0.owner == ":1.1" }
        bounds.forget(":1.1")
        #expect(add(":1.4", user: 1000) == nil && add(":1.4", user: 1000) == nil)
        #expect(add(":1.5", user: 1000)?.hasPrefix("the clients of user 1000") == true)
    }

    /// One user's starts: three in a row, then one a second; another user's are its own.
    @Test func regionStartsArePacedPerUser() {
        var limits = ServiceLimits()
        (limits.regionsPerClient, limits.regionsPerUser, limits.clientRegions) = (100, 3, 100)
        var bounds = CallerBounds(limits: limits)
        func start(_ user: UInt32, at offset: Duration) -> String? {
            bounds.refusalToStart(Self.caller(":1.\(user)", user: user), regions: [], now: S.t0 + offset)?.message
        }
        #expect((0..<3).allSatisfy { _ in start(1000, at: .zero) == nil })
        #expect(start(1000, at: .milliseconds(400)) == "the clients of user 1000 started 3 regions in a row; the next may start in 0.6 s")
        #expect(start(1001, at: .milliseconds(400)) == nil)
        #expect(start(1000, at: .seconds(1)) == nil)
        #expect(start(1000, at: .milliseconds(1500))?.hasSuffix("in 0.5 s") == true)
        #expect(start(1000, at: .seconds(2)) == nil)
        // Quiet for the burst's length, the user has its burst back.
        #expect((0..<3).allSatisfy { _ in start(1000, at: .seconds(5)) == nil })
        #expect(start(1000, at: .seconds(5)) != nil)
        // A start admitted but then refused (RegionExists) is taken back.
        bounds.startRefused(Self.caller(":1.1000", user: 1000))
        #expect(start(1000, at: .seconds(5)) == nil)
        #expect(start(1000, at: .seconds(5)) != nil)
    }

    /// Changes (SetPreferredVenue, Reload) are paced per user on their own:
    /// sixteen in a row, then one a second, whatever the region starts do.
    @Test func changesArePacedPerUserApartFromStarts() {
        var bounds = CallerBounds(limits: ServiceLimits())
        let kiosk = Self.caller(":1.7", user: 1000, "SetPreferredVenue")
        #expect((0..<16).allSatisfy { _ in bounds.refusalToChange(kiosk, now: S.t0) == nil })
        let refusal = bounds.refusalToChange(kiosk, now: S.t0 + .milliseconds(250))
        #expect(refusal?.code == .busy)
        #expect(refusal?.message == "the clients of user 1000 made 16 changes (SetPreferredVenue, Reload) in a row; the next may be made in 0.8 s")
        #expect(bounds.refusalToChange(Self.caller(":1.8", user: 1001, "Reload"), now: S.t0) == nil)
        #expect(bounds.refusalToStart(Self.caller(":1.7", user: 1000), regions: [], now: S.t0) == nil)
        #expect(bounds.refusalToChange(kiosk, now: S.t0 + .seconds(1)) == nil)
    }

    /// A ranged beacon; of `venue`, one of its venue beacons unless `minted` (one more identity under an open venue).
    static func ranged(_ identity: BeaconIdentity, distance: Double, venue: String? = nil, minted: Bool = false) -> RangedBeacon {
        RangedBeacon(
            identity: identity, rssi: -60, filteredRSSI: -60, measuredPower: -59, advertisedPower: -59, distance: distance, accuracy: 0.1,
            proximity: .near, isStationary: false, lastSeen: S.t0, address: BluetoothAddress(0xC0, 0, 0, 0, 0, 1), venueID: venue,
            isVenueBeacon: venue != nil && !minted)
    }

    static func properties(_ beacon: RangedBeacon) -> [(String, DBusValue)] {
        [("Distance", .double(beacon.distance)), ("LastSeen", .uint64(UInt64(beacon.lastSeen.microsecondsSinceEpoch)))]
    }

    @Test func theLedgerPacesObjectsAndPutsVenueBeaconsFirst() {
        var ledger = BeaconObjectLedger(coalescing: .seconds(1), budget: 3, period: .milliseconds(200))
        let strangers = (0..<5).map { Self.ranged(S.identity(1_000, UInt16($0)), distance: 1) }
        let venue = Self.ranged(S.identity(1, 1), distance: 9, venue: "counter-1")
        // Over budget: the venue beacon first, then strangers nearest first, the rest wait.
        var changes = ledger.reconcile(strangers + [venue], now: S.t0, properties: Self.properties)
        #expect(changes.added.map(\.identity) == [venue.identity, strangers[0].identity, strangers[1].identity])
        changes = ledger.reconcile(strangers + [venue], now: S.t0 + .milliseconds(200), properties: Self.properties)
        #expect(changes.added.count == 3 && ledger.exported.count == 6)
        // Gone: each object is removed only once a second has passed since it was announced.
        changes = ledger.reconcile([venue], now: S.t0 + .milliseconds(400), properties: Self.properties)
        #expect(changes.removed.isEmpty)
        changes = ledger.reconcile([venue], now: S.t0 + .milliseconds(1_100), properties: Self.properties)
        #expect(Set(changes.removed) == [strangers[0].identity, strangers[1].identity])
        changes = ledger.reconcile([venue], now: S.t0 + .milliseconds(1_300), properties: Self.properties)
        #expect(changes.removed.count == 3)
        #expect(ledger.exported.keys.sorted() == [venue.identity])
        // Back at once: not before its second away has passed either.
        changes = ledger.reconcile([venue, strangers[4]], now: S.t0 + .milliseconds(1_400), properties: Self.properties)
        #expect(changes.added.isEmpty)
        changes = ledger.reconcile([venue, strangers[4]], now: S.t0 + .milliseconds(2_400), properties: Self.properties)
        #expect(changes.added.map(\.identity) == [strangers[4].identity])
        // Changes: only meaningful ones (5 %), at most once a second; LastSeen alone is none.
        var moved = venue
        moved.distance = 9.1
        moved.lastSeen = S.t0 + .seconds(3)
        changes = ledger.reconcile([moved, strangers[4]], now: S.t0 + .milliseconds(3_000), properties: Self.properties)
        #expect(changes.isEmpty)
        moved.distance = 12
        changes = ledger.reconcile([moved, strangers[4]], now: S.t0 + .milliseconds(3_100), properties: Self.properties)
        #expect(changes.changed.map(\.1) == [["Distance", "LastSeen"]])
        moved.distance = 20
        changes = ledger.reconcile([moved, strangers[4]], now: S.t0 + .milliseconds(3_500), properties: Self.properties)
        #expect(changes.isEmpty)
    }

    /// Identities minted under an open venue (`{uuid, major}`) past its venue
    /// beacons mark that venue but are strangers to the bus: another venue's
    /// beacon goes before them, nearer or not (until 2026-11-27 every beacon
    /// marking a venue did, so a loud flood of them took the budget).
    @Test func identitiesMintedUnderAnOpenVenueDoNotGoBeforeVenueBeacons() {
        var ledger = BeaconObjectLedger(coalescing: .seconds(1), budget: 3, period: .milliseconds(200))
        let minted = (0..<5).map { Self.ranged(S.identity(7, UInt16($0)), distance: 1, venue: "bar", minted: true) }
        let counter = Self.ranged(S.identity(1, 1), distance: 9, venue: "counter-1")
        let changes = ledger.reconcile(minted + [counter], now: S.t0, properties: Self.properties)
        #expect(changes.added.first?.identity == counter.identity, "\(changes.added.map(\.identity))")
        // One of them promoted to a venue beacon (a place freed) with nothing else changed,
        // then gone with the rest: its removal goes before the other strangers'.
        var promoted = minted[0]  // exported above as a stranger
        promoted.isVenueBeacon = true
        let quiet = ledger.reconcile([promoted] + minted.dropFirst() + [counter], now: S.t0 + .milliseconds(200), properties: Self.properties)
        #expect(quiet.changed.isEmpty)
        #expect(ledger.exported[promoted.identity]?.isVenue == true)
        _ = ledger.reconcile([promoted] + minted.dropFirst() + [counter], now: S.t0 + .milliseconds(400), properties: Self.properties)
        let removed = ledger.reconcile([counter], now: S.t0 + .seconds(2), properties: Self.properties).removed
        #expect(removed.first == promoted.identity, "\(removed)")
    }

    /// Region events and answers publish between the engine's ticks: however
    /// often the ledger is reconciled, a period's budget is all it spends.
    @Test func publishingMoreOftenDoesNotRaiseTheBudget() {
        var ledger = BeaconObjectLedger(coalescing: .seconds(1), budget: 20, period: .milliseconds(200))
        let strangers = (0..<500).map { Self.ranged(S.identity(1_000, UInt16($0)), distance: 1) }
        var perPeriod: [Int: Int] = [:]
        for ms in stride(from: 0, to: 2_000, by: 25) {
            let changes = ledger.reconcile(strangers, now: S.t0 + .milliseconds(Int64(ms)), properties: Self.properties)
            perPeriod[ms / 200, default: 0] += changes.added.count
        }
        #expect(perPeriod.count == 10)
        #expect(perPeriod.values.allSatisfy { $0 == 20 }, "\(perPeriod.sorted { $0.key < $1.key })")
        #expect(ledger.exported.count == 200)
    }

    /// A beacon that leaves and comes back, at any moment relative to its
    /// last announcement: its object goes once a second has passed since it
    /// was announced, and comes back as soon as a second has passed since it
    /// went (the per-object limit), never later; in between it is missing.
    @Test func aReturningBeaconIsExportedAgainAsSoonAsItsSecondAllows() {
        let beacon = Self.ranged(S.identity(1, 1), distance: 1, venue: "counter-1")
        for leave in stride(from: 200, through: 2_000, by: 200) {
            for away in stride(from: 200, through: 1_400, by: 200) {
                var ledger = BeaconObjectLedger(coalescing: .seconds(1), budget: 20, period: .milliseconds(200))
                var lastSignal = 0
                var removedAt: Int?
                for ms in stride(from: 0, through: 5_000, by: 200) {
                    let ranged = ms < leave || ms >= leave + away
                    let changes = ledger.reconcile(ranged ? [beacon] : [], now: S.t0 + .milliseconds(Int64(ms)), properties: Self.properties)
                    let context = "left at \(leave) ms for \(away) ms, at \(ms) ms"
                    if !changes.removed.isEmpty {
                        #expect(ms - lastSignal >= 1_000 && !ranged, "\(context)")
                        (lastSignal, removedAt) = (ms, ms)
                    }
                    if !changes.added.isEmpty {
                        #expect(ms == 0 || ms - lastSignal >= 1_000, "\(context)")
                        (lastSignal, removedAt) = (ms, nil)
                    }
                    let exported = ledger.exported[beacon.identity] != nil
                    if ranged && !exported {
                        #expect(removedAt.map { ms - $0 < 1_000 } == true, "missing while ranged: \(context)")
                    }
                }
            }
        }
    }

    /// The beacon GetNearestVenue names is on the bus whenever it is ranged:
    /// back at once after a removal, where any other waits out its second.
    @Test func theNearestVenuesBeaconComesBackAtOnce() {
        let beacon = Self.ranged(S.identity(1, 1), distance: 1, venue: "counter-1")
        for nearest in [beacon.identity, nil] {
            var ledger = BeaconObjectLedger(coalescing: .seconds(1), budget: 20, period: .milliseconds(200))
            _ = ledger.reconcile([beacon], nearest: nearest, now: S.t0, properties: Self.properties)
            let removed = ledger.reconcile([], now: S.t0 + .milliseconds(1_000), properties: Self.properties)
            #expect(removed.removed == [beacon.identity])
            let back = ledger.reconcile([beacon], nearest: nearest, now: S.t0 + .milliseconds(1_200), properties: Self.properties)
            #expect(back.added.map(\.identity) == (nearest == nil ? [] : [beacon.identity]), "nearest: \(String(describing: nearest))")
            #expect((ledger.exported[beacon.identity] != nil) == (nearest != nil))
        }
    }

    /// The budget cannot hold the nearest venue's beacon back either: venue
    /// beacons leaving in numbers take it first, and GetNearestVenue would
    /// name a Beacon1 object not on the bus until the next publication.
    @Test func venueBeaconsLeavingDoNotHoldBackTheNearestVenuesBeacon() {
        var ledger = BeaconObjectLedger(coalescing: .seconds(1), budget: 2, period: .milliseconds(200))
        let leaving = (0..<4).map { Self.ranged(S.identity(1, UInt16($0)), distance: 2, venue: "counter-1") }
        for ms in [0, 200] {
            _ = ledger.reconcile(leaving, now: S.t0 + .milliseconds(Int64(ms)), properties: Self.properties)
        }
        #expect(ledger.exported.count == 4)
        let nearest = Self.ranged(S.identity(2, 1), distance: 1, venue: "counter-2")
        let changes = ledger.reconcile([nearest], nearest: nearest.identity, now: S.t0 + .milliseconds(1_200), properties: Self.properties)
        #expect(changes.added.map(\.identity) == [nearest.identity])
        #expect(ledger.exported[nearest.identity] != nil)
    }

    /// Venue beacons come first for removals too: strangers leaving in
    /// numbers do not take the budget a returning venue beacon needs.
    @Test func strangersLeavingDoNotHoldBackAReturningVenueBeacon() {
        var ledger = BeaconObjectLedger(coalescing: .seconds(1), budget: 3, period: .milliseconds(200))
        let venue = Self.ranged(S.identity(1, 1), distance: 9, venue: "counter-1")
        let strangers = (0..<6).map { Self.ranged(S.identity(1_000, UInt16($0)), distance: 1) }
        for ms in [0, 200, 400] {
            _ = ledger.reconcile([venue] + strangers, now: S.t0 + .milliseconds(Int64(ms)), properties: Self.properties)
        }
        #expect(ledger.exported.count == 7)
        var changes = ledger.reconcile(strangers, now: S.t0 + .milliseconds(1_100), properties: Self.properties)
        #expect(changes.removed == [venue.identity])
        // Back once its second away has passed, as every stranger goes.
        changes = ledger.reconcile([venue], now: S.t0 + .milliseconds(2_100), properties: Self.properties)
        #expect(changes.added.map(\.identity) == [venue.identity])
        #expect(changes.removed.count == 2)
    }

    @Test func theKeeperRetriesWithBackoffAndSaysEachReasonOnce() throws {
        let blocked = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-blocked-\(UUID().uuidString)")
        try Data("a file where the state directory should be".utf8).write(to: blocked)
        var keeper = StateKeeper(store: StateStore(directory: blocked.path), saved: EngineState())
        let changed = EngineState(regions: ["cafe": .inside])
        guard case .failed(_, alreadySaid: false) = keeper.sync(changed, now: S.t0) else {
            Issue.record("the first failure was not reported")
            return
        }
        #expect(keeper.sync(changed, now: S.t0 + .milliseconds(500)) == .pending)
        guard case .failed(_, alreadySaid: true) = keeper.sync(changed, now: S.t0 + .seconds(1)) else {
            Issue.record("the retry after 1 s did not happen")
            return
        }
        #expect(keeper.sync(changed, now: S.t0 + .milliseconds(2_500)) == .pending)  // now 2 s
        // A caller's change is tried at once, whatever the backoff.
        guard case .failed(_, alreadySaid: true) = keeper.sync(changed, now: S.t0 + .milliseconds(2_600), requested: true) else {
            Issue.record("a requested save was not tried")
            return
        }
        // Another reason is said again (a full disk, then a read-only one), once.
        try FileManager.default.removeItem(at: blocked)
        let stuck = blocked.appendingPathComponent("state.json.tmp/kept")
        try FileManager.default.createDirectory(at: stuck, withIntermediateDirectories: true)
        guard case .failed(let error, alreadySaid: false) = keeper.sync(changed, now: S.t0 + .seconds(3), requested: true) else {
            Issue.record("a failure for another reason was not said")
            return
        }
        #expect(error.description.contains("state.json.tmp"), "\(error)")
        guard case .failed(_, alreadySaid: true) = keeper.sync(changed, now: S.t0 + .seconds(4), requested: true) else {
            Issue.record("the same reason was said again")
            return
        }
        try FileManager.default.removeItem(at: blocked)
        #expect(keeper.sync(changed, now: S.t0 + .seconds(60)) == .recovered(since: S.t0))
        #expect(keeper.sync(changed, now: S.t0 + .seconds(61)) == .unchanged)
    }
}
