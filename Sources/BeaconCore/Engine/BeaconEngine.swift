/// The whole pure pipeline after decoding: sightings in, region transitions,
/// ranged beacons and the nearest venue out. Time comes in with every call.
///
/// Two-stage, as Core Location: a beacon is tracked only if some monitored
/// region's constraint matches it, and ranged (reported, and a candidate for
/// nearest venue) only while one of those regions is `inside`.
public struct BeaconEngine: Sendable {
    /// How often time is let pass (`tick`: exits, staleness, the nearest
    /// venue's dwell): the service's cadence, and `evaluate`'s on a trace.
    public static let tickInterval: Duration = .milliseconds(200)
    public private(set) var configuration: Configuration
    public private(set) var monitor: RegionMonitor
    public private(set) var preferredVenueID: String?
    public var filterParameters = RSSIFilter.Parameters()
    public var limits = EngineLimits()
    /// Beacons forgotten early to stay within `limits.trackedBeacons`, and
    /// new strangers not tracked because only venue beacons were left to evict.
    public private(set) var evictions = 0
    private var ranger: Ranger
    private var selector: VenueSelector
    /// Every tracked beacon, in no order, and where each identity's is: a
    /// sighting looks its identity up once, and everything after (regions,
    /// ranging, the eviction lists) reaches the track by position. Changed
    /// where it lies, never copied out and written back: a copy would share
    /// the track's sample buffers and make the next change copy them (a malloc).
    private var tracks: [BeaconTrack] = []
    private var positions: [BeaconIdentity: Int] = [:]
    private var transitions: [RegionTransition] = []
    /// A region changed state, or the regions or venues changed, since the
    /// last tick: then the tick re-ranges every beacon, as any may have gone
    /// in or out of ranging; otherwise only those whose answer time can change.
    private var regionsChanged = false
    /// The tick's per-region figures and per-venue closest beacons (by
    /// position in `tracks`), kept to spare their allocation.
    private var slowest: [Duration?] = []
    private var strongest: [Double?] = []
    /// Per region, its exit timeout (`exit_after`, its own or the file's), read once a tick.
    private var exitAfters: [Duration] = []
    private var closest: [Int?] = []
    private var candidates: [VenueSelector.Candidate] = []
    /// Tracked beacons by when they were last heard, in the order they are
    /// evicted: strangers (marking no configured venue, or past their open
    /// venue's `venueBeaconsPerVenue`) not ranged, then
    /// ranged strangers (so a flood cannot churn the exported objects), then
    /// venue beacons, which only another venue beacon can push out.
    private var strangers = RecencyList<BeaconIdentity>()
    private var rangedStrangers = RecencyList<BeaconIdentity>()
    private var venueBeacons = RecencyList<BeaconIdentity>()
    /// Per venue, how many of its tracked beacons are venue beacons.
    private var venueBeaconCounts: [Int] = []

    public init(configuration: Configuration, restored: EngineState = EngineState(), now: Timestamp) {
        self.configuration = configuration
        monitor = RegionMonitor(
            regions: configuration.regions, settings: configuration.ranging, restored: restored.regions, now: now)
        ranger = Ranger(settings: configuration.ranging)
        selector = VenueSelector(margin: configuration.ranging.switchMargin, dwell: configuration.ranging.switchDwell)
        venueBeaconCounts = Array(repeating: 0, count: configuration.venues.count)
        if let preferred = restored.preferredVenue, configuration.venues.contains(where: { $0.id == preferred }) {
            preferredVenueID = preferred
        }
    }

    // MARK: Input

    /// Folds one sighting in. Region entries happen here; exits, staleness and
    /// the nearest venue are decided in `tick`.
    public mutating func ingest(_ sighting: BeaconSighting, into events: inout [EngineEvent]) {
        let identity = sighting.identity
        let index: Int
        let previousInterval: Duration?
        if let existing = positions[identity] {
            index = existing
            previousInterval = tracks[index].interval
            let walkingRate = ranger.walkingRate(
                level: tracks[index].filter.estimate, measuredPower: tracks[index].measuredPower)
            tracks[index].observe(sighting, isFirst: false, walkingRate: walkingRate, enterWindow: configuration.ranging.enterWindow)
        } else {
            let indices = monitor.indices(matching: identity)
            guard !indices.isEmpty else { return }
            let venue = venueIndex(for: identity)
            guard makeRoom(forVenueBeacon: hasPlace(for: venue), into: &events) else { return }
            var track = BeaconTrack(
                sighting: sighting, filter: filterParameters, regionIndices: indices, venueIndex: venue,
                calibratedPower: venue.flatMap { configuration.venues[$0].measuredPower },
                defaultPower: configuration.ranging.defaultMeasuredPower)
            previousInterval = nil
            track.observe(
                sighting, isFirst: true,
                walkingRate: ranger.walkingRate(level: track.filter.estimate, measuredPower: track.measuredPower),
                enterWindow: configuration.ranging.enterWindow)
            index = tracks.count
            tracks.append(track)
            positions[identity] = index
            takePlace(index)
        }
        if !sighting.frame.hasPlausibleMeasuredPower, !tracks[index].announcedImplausiblePower {
            tracks[index].announcedImplausiblePower = true
            events.append(
                .implausibleMeasuredPower(
                    identity, advertised: sighting.frame.measuredPower, rangingWith: tracks[index].measuredPower))
        }
        let estimate = tracks[index].filter.estimate
        monitor.observe(
            rssi: sighting.rssi, filteredRSSI: estimate.isFinite ? estimate : nil,
            at: sighting.time, interval: previousInterval, indices: tracks[index].regionIndices, identity: identity,
            into: &transitions)
        // Recency to the second is enough to choose whom to evict, and spares
        // a beacon at 10 Hz nine list updates in ten.
        let relist = tracks[index].listedAt.map { sighting.time - $0 >= .seconds(1) } ?? true
        if relist { tracks[index].listedAt = sighting.time }
        flushTransitions(into: &events)
        rangeAndPublish(index, now: sighting.time, into: &events)
        if relist { list(index) }
    }

    /// The source lost or regained the radio. While it is down, beacons go
    /// `unknown` as they would in silence (nothing is known of them), but no
    /// region exits for want of sightings: absence of evidence is not evidence
    /// of absence. Once it is back, each region's exit timeout starts afresh.
    public mutating func radio(available: Bool, now: Timestamp) {
        if available {
            if monitor.isSuspended { monitor.resume(now: now) }
        } else {
            monitor.suspend()
        }
    }

    /// Lets time pass: stale beacons go unknown, forgotten ones disappear,
    /// regions exit, and the nearest venue is decided.
    public mutating func tick(now: Timestamp, into events: inout [EngineEvent]) {
        slowest.removeAll(keepingCapacity: true)
        slowest.append(contentsOf: repeatElement(nil, count: monitor.regions.count))
        strongest.removeAll(keepingCapacity: true)
        strongest.append(contentsOf: repeatElement(nil, count: monitor.regions.count))
        exitAfters.removeAll(keepingCapacity: true)
        for region in monitor.regions.indices { exitAfters.append(monitor.regions[region].exitAfter) }
        // Fields are read one by one: a method called on `tracks[index]` here
        // copied the whole track (and the engine) for every beacon at every tick.
        let staleAfter = ranger.staleAfter
        var index = 0
        while index < tracks.count {
            let silence = now - tracks[index].lastSeen
            let interval = tracks[index].interval
            let tripled = (interval ?? .zero).tripled
            // Forgotten after as long as its regions would take to exit without
            // it; one heard once, its interval unknown, is kept for three of
            // Bluetooth's longest intervals so that a slow beacon can be learnt.
            var longest = (interval ?? RegionMonitor.longestAdvertisingInterval).tripled
            for region in tracks[index].regionIndices { longest = max(longest, exitAfters[region]) }
            if silence > longest {
                forget(at: index, into: &events)  // the last track moves here
                continue
            }
            // A beacon's level speaks for a region while the region would not
            // have exited for want of it (its exit_after, or three of the
            // beacon's intervals), stale or not: a strong one silent for a few
            // seconds left a weak one heard alone to decide, and the region exited.
            let level = tracks[index].filter.estimate
            for region in tracks[index].regionIndices {
                if let interval { slowest[region] = max(slowest[region] ?? .zero, interval) }
                if level.isFinite, silence <= max(exitAfters[region], tripled) {
                    strongest[region] = max(strongest[region] ?? -.infinity, level)
                }
            }
            index += 1
        }
        let (slowest, strongest) = (slowest, strongest)
        monitor.tick(
            now: now, slowestInterval: { slowest[$0] }, strongestRSSI: { strongest[$0] }, into: &transitions)
        flushTransitions(into: &events)
        // Ranging again changes nothing for a beacon that was fresh and is,
        // or was stale and is, while no region changed: it only repeats the
        // last sighting's answer. (A stranger refused at the cap may find room.)
        for index in tracks.indices {
            let fresh = BeaconTrack.isFresh(
                lastSample: tracks[index].lastSample, interval: tracks[index].interval, at: now, minimum: staleAfter)
            if regionsChanged || fresh != tracks[index].wasFresh || tracks[index].isRefused {
                rangeAndPublish(index, now: now, into: &events)
            }
        }
        regionsChanged = false
        decideNearestVenue(now: now, into: &events)
    }

    // MARK: Output

    /// Ranged beacons, nearest first, unknown last; all of them, or those matching `constraint`.
    public func rangedBeacons(matching constraint: BeaconConstraint? = nil) -> [RangedBeacon] {
        tracks.compactMap { track in
            track.isRanged && (constraint?.matches(track.identity) ?? true) ? rangedBeacon(track) : nil
        }.sorted(by: RangedBeacon.rangingOrder)
    }

    public func rangedBeacon(_ identity: BeaconIdentity) -> RangedBeacon? {
        positions[identity].flatMap { tracks[$0].isRanged ? rangedBeacon(tracks[$0]) : nil }
    }

    private func rangedBeacon(_ track: BeaconTrack) -> RangedBeacon {
        Ranger.beacon(track, venueID: track.venueIndex.map { configuration.venues[$0].id })
    }

    public var nearestVenue: NearestVenue? { selector.current }

    /// How many beacons the engine holds now (at most `limits.trackedBeacons`).
    public var trackedBeacons: Int { tracks.count }

    /// What is saved: beacons.yaml's regions and the preferred venue. One
    /// pass over the regions (the service builds it after every batch).
    public var state: EngineState {
        EngineState(
            regions: Dictionary(
                monitor.regions.lazy.filter { $0.definition.owner == nil }.map { ($0.definition.id, $0.state) },
                uniquingKeysWith: { first, _ in first }),
            preferredVenue: preferredVenueID)
    }

    // MARK: Requests

    /// A venue id, or `nil` for "nearest to me". Takes effect at the next tick.
    public mutating func setPreferredVenue(_ id: String?) throws(EngineError) {
        if let id, !configuration.venues.contains(where: { $0.id == id }) { throw .unknownVenue(id) }
        preferredVenueID = id
    }

    public mutating func startMonitoring(_ region: RegionDefinition, now: Timestamp) throws(EngineError) {
        guard monitor.state(of: region.key) == nil else { throw .regionExists(region.id) }
        monitor.add(region, now: now)
        reindexTracks()
    }

    /// Stops monitoring the region with this key (`RegionDefinition.key`).
    public mutating func stopMonitoring(key: String, into events: inout [EngineEvent]) throws(EngineError) {
        guard monitor.remove(key: key) else { throw .unknownRegion(key) }
        regionsRemoved(into: &events)
    }

    /// Stops monitoring every region of a client that left the bus; returns their keys.
    public mutating func stopMonitoring(owner: String, into events: inout [EngineEvent]) -> [String] {
        let keys = monitor.definitions.filter { $0.owner == owner }.map(\.key)
        guard !keys.isEmpty else { return [] }
        for key in keys { _ = monitor.remove(key: key) }
        regionsRemoved(into: &events)
        return keys
    }

    /// Tracks are indexed once for the regions left, and those in none are forgotten.
    private mutating func regionsRemoved(into events: inout [EngineEvent]) {
        reindexTracks()
        var index = 0
        while index < tracks.count {
            if tracks[index].regionIndices.isEmpty { forget(at: index, into: &events) } else { index += 1 }
        }
    }

    /// Applies a new configuration, keeping what still holds: the state of
    /// every region whose id is kept, clients' regions, the preferred venue
    /// if it still exists, and the incumbent nearest venue (an incumbent the
    /// new file removes is announced as lost). A region whose constraint
    /// changed keeps its state as after a restart: no second enter while it
    /// is still occupied, and an exit, announced, if none of its new beacons
    /// is heard within its exit timeout; one whose constraint is unchanged
    /// also keeps when it was last seen. Beacons in no region now are
    /// forgotten, as when a client's regions go: kept, one still heard was
    /// never forgotten, and could hold a venue beacon's place.
    @discardableResult
    public mutating func reconfigure(_ new: Configuration, now: Timestamp, into events: inout [EngineEvent]) -> Reconfiguration {
        let old = Dictionary(monitor.definitions.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        let states = monitor.states
        var restored: [String: RegionState] = [:]
        for region in new.regions where old[region.key] != nil {
            restored[region.id] = states[region.key]
        }
        var next = RegionMonitor(regions: new.regions, settings: new.ranging, restored: restored, now: now)
        for client in monitor.definitions where client.owner != nil {
            next.add(client, restoredState: states[client.key], now: now)
        }
        next.carryOver(from: monitor)
        let currentVenue = selector.current?.venueID
        let removedRegions = Set(configuration.regions.map(\.id)).subtracting(new.regions.map(\.id)).sorted()
        let droppedPreference = preferredVenueID.flatMap { preferred in new.venues.contains { $0.id == preferred } ? nil : preferred }
        configuration = new
        monitor = next
        ranger = Ranger(settings: new.ranging)
        selector.margin = new.ranging.switchMargin
        selector.dwell = new.ranging.switchDwell
        let currentIndex = currentVenue.flatMap { id in new.venues.firstIndex { $0.id == id } }
        selector.retarget(currentIndex: currentIndex)
        if currentVenue != nil, currentIndex == nil { events.append(.nearestVenueChanged(nil)) }
        if droppedPreference != nil { preferredVenueID = nil }
        regionsRemoved(into: &events)
        return Reconfiguration(removedRegions: removedRegions, droppedPreferredVenue: droppedPreference)
    }

    // MARK: Internals

    /// Whether a beacon of `venue` tracked now would be one of its venue beacons.
    private func hasPlace(for venue: Int?) -> Bool {
        venue.map { venueBeaconCounts[$0] < limits.venueBeaconsPerVenue } ?? false
    }

    /// Makes the track at `index` one of its venue's venue beacons, if a place is free.
    private mutating func takePlace(_ index: Int) {
        guard let venue = tracks[index].venueIndex, hasPlace(for: venue) else { return }
        tracks[index].isVenueBeacon = true
        venueBeaconCounts[venue] += 1
    }

    private func venueIndex(for identity: BeaconIdentity) -> Int? {
        configuration.venues.firstIndex { $0.constraint.matches(identity) }
    }

    /// After regions or venues changed: each track's regions, venue and
    /// calibration, its venue's venue beacons (those tracked longest), and
    /// the eviction lists rebuilt in order of last sighting.
    private mutating func reindexTracks() {
        venueBeaconCounts = Array(repeating: 0, count: configuration.venues.count)
        for index in tracks.indices.sorted(by: { tracks[$0].precedes(tracks[$1]) }) {
            let venue = venueIndex(for: tracks[index].identity)
            tracks[index].regionIndices = monitor.indices(matching: tracks[index].identity)
            tracks[index].calibratedPower = venue.flatMap { configuration.venues[$0].measuredPower }
            tracks[index].defaultPower = configuration.ranging.defaultMeasuredPower
            tracks[index].venueIndex = venue
            tracks[index].isVenueBeacon = false
            takePlace(index)
        }
        regionsChanged = true
        strangers = RecencyList()
        rangedStrangers = RecencyList()
        venueBeacons = RecencyList()
        for index in tracks.indices.sorted(by: { tracks[$0].lastSeen < tracks[$1].lastSeen }) { list(index) }
    }

    /// Puts a beacon on the eviction list it belongs to now, as the most recently heard there.
    private mutating func list(_ index: Int) {
        let identity = tracks[index].identity
        if tracks[index].isVenueBeacon {
            venueBeacons.touch(identity)
        } else if tracks[index].isRanged {
            strangers.remove(identity)
            rangedStrangers.touch(identity)
        } else {
            rangedStrangers.remove(identity)
            strangers.touch(identity)
        }
    }

    /// Makes room for one more track within `limits.trackedBeacons`, taking
    /// the first of the eviction lists' least recently heard; a venue beacon
    /// only to make room for another. Returns false when a stranger finds no room.
    private mutating func makeRoom(forVenueBeacon isVenueBeacon: Bool, into events: inout [EngineEvent]) -> Bool {
        guard tracks.count >= limits.trackedBeacons else { return true }
        evictions += 1
        guard let victim = strangers.oldest ?? rangedStrangers.oldest ?? (isVenueBeacon ? venueBeacons.oldest : nil),
            let index = positions[victim]
        else {
            return false
        }
        forget(at: index, into: &events)
        return true
    }

    /// Drops the track at `index`; the last track takes its place. A venue
    /// beacon's place goes to its venue's longest tracked stranger, if any.
    private mutating func forget(at index: Int, into events: inout [EngineEvent]) {
        let identity = tracks[index].identity
        let wasRanged = tracks[index].isRanged
        let freed = tracks[index].isVenueBeacon ? tracks[index].venueIndex : nil
        positions[identity] = nil
        strangers.remove(identity)
        rangedStrangers.remove(identity)
        venueBeacons.remove(identity)
        let last = tracks.count - 1
        if index != last {
            tracks.swapAt(index, last)
            positions[tracks[index].identity] = index
        }
        tracks.removeLast()
        if wasRanged { events.append(.beaconDisappeared(identity)) }
        if let freed {
            venueBeaconCounts[freed] -= 1
            var heir: Int?
            for candidate in tracks.indices where tracks[candidate].venueIndex == freed && !tracks[candidate].isVenueBeacon {
                if let found = heir, tracks[found].precedes(tracks[candidate]) { continue }
                heir = candidate
            }
            if let heir {
                takePlace(heir)
                // Off the strangers' lists it was on, onto the venue beacons'.
                strangers.remove(tracks[heir].identity)
                rangedStrangers.remove(tracks[heir].identity)
                list(heir)
            }
        }
    }

    /// Whether `identity` is tracked as one of its venue's venue beacons
    /// (the service says such a beacon's implausible power at once).
    public func isVenueBeacon(_ identity: BeaconIdentity) -> Bool {
        positions[identity].map { tracks[$0].isVenueBeacon } ?? false
    }

    private mutating func flushTransitions(into events: inout [EngineEvent]) {
        guard !transitions.isEmpty else { return }
        regionsChanged = true
        events.append(contentsOf: transitions.map(EngineEvent.region))
        transitions.removeAll(keepingCapacity: true)
    }

    /// Re-ranges one beacon and publishes it while one of its regions is
    /// inside and it has shown entry evidence of its own; strangers only while
    /// fewer than `limits.rangedStrangers` are ranged.
    private mutating func rangeAndPublish(_ index: Int, now: Timestamp, into events: inout [EngineEvent]) {
        let inside =
            tracks[index].confirmed
            && tracks[index].regionIndices.contains { monitor.regions[$0].state == .inside }
        ranger.range(&tracks[index], now: now)
        tracks[index].isRefused = false
        if inside {
            if !tracks[index].isRanged {
                if !tracks[index].isVenueBeacon, rangedStrangers.count >= limits.rangedStrangers {
                    tracks[index].isRefused = true
                } else {
                    tracks[index].isRanged = true
                    events.append(.beaconAppeared(tracks[index].identity))
                    list(index)
                }
            }
        } else if tracks[index].isRanged {
            tracks[index].isRanged = false
            events.append(.beaconDisappeared(tracks[index].identity))
            list(index)
        }
    }

    private mutating func decideNearestVenue(now: Timestamp, into events: inout [EngineEvent]) {
        closest.removeAll(keepingCapacity: true)
        closest.append(contentsOf: repeatElement(nil, count: configuration.venues.count))
        // Read in place: through the array's subscript this loop copied every
        // track (2 kB) at every tick.
        tracks.withUnsafeBufferPointer { tracks in
            for index in tracks.indices where tracks[index].isRanged && tracks[index].proximity != .unknown {
                guard let venueIndex = tracks[index].venueIndex, let distance = tracks[index].distance?.median else { continue }
                if !selector.reaches(distance, limit: configuration.maxDistance(of: configuration.venues[venueIndex])) { continue }
                if let existing = closest[venueIndex],
                    (tracks[existing].distance!.median, tracks[existing].identity) <= (distance, tracks[index].identity)
                {
                    continue
                }
                closest[venueIndex] = index
            }
        }
        candidates.removeAll(keepingCapacity: true)
        for case let (venueIndex, index?) in closest.enumerated() {
            candidates.append(
                VenueSelector.Candidate(
                    venueIndex: venueIndex,
                    beacon: Ranger.beacon(tracks[index], venueID: configuration.venues[venueIndex].id, solvingAccuracy: false),
                    limit: configuration.maxDistance(of: configuration.venues[venueIndex]),
                    unsolved: tracks[index].distance))
        }
        let preferred = preferredVenueID.flatMap { id in configuration.venues.firstIndex { $0.id == id } }
        if selector.update(candidates: candidates, venues: configuration.venues, preferred: preferred, now: now) {
            events.append(.nearestVenueChanged(selector.current))
        }
    }
}
