/// The whole pure pipeline after decoding: sightings in, region transitions,
/// ranged beacons and the nearest venue out. Time comes in with every call.
///
/// Two-stage, as Core Location: a beacon is tracked only if some monitored
/// region's constraint matches it, and ranged (reported, and a candidate for
/// nearest venue) only while one of those regions is `inside`.
public struct BeaconEngine: Sendable {
    public private(set) var configuration: Configuration
    public private(set) var monitor: RegionMonitor
    public private(set) var preferredVenueID: String?
    /// When the last advertisement of any kind arrived: the service flags a silent source from it.
    public private(set) var lastSighting: Timestamp?
    public var filterParameters = RSSIFilter.Parameters()
    public var limits = EngineLimits()
    /// Beacons forgotten early to stay within `limits.trackedBeacons`, and
    /// new strangers not tracked because only venue beacons were left to evict.
    public private(set) var evictions = 0
    private var ranger: Ranger
    private var selector: VenueSelector
    private var tracks: [BeaconIdentity: BeaconTrack] = [:]
    private var ranged: [BeaconIdentity: RangedBeacon] = [:]
    private var transitions: [RegionTransition] = []
    /// Tracked beacons by when they were last heard, in the order they are
    /// evicted: strangers (marking no configured venue) not ranged, then
    /// ranged strangers (so a flood cannot churn the exported objects), then
    /// venue beacons, which only another venue beacon can push out.
    private var strangers = RecencyList<BeaconIdentity>()
    private var rangedStrangers = RecencyList<BeaconIdentity>()
    private var venueBeacons = RecencyList<BeaconIdentity>()

    public init(configuration: Configuration, restored: EngineState = EngineState(), now: Timestamp) {
        self.configuration = configuration
        monitor = RegionMonitor(
            regions: configuration.regions, settings: configuration.ranging, restored: restored.regions, now: now)
        ranger = Ranger(settings: configuration.ranging)
        selector = VenueSelector(margin: configuration.ranging.switchMargin, dwell: configuration.ranging.switchDwell)
        if let preferred = restored.preferredVenue, configuration.venues.contains(where: { $0.id == preferred }) {
            preferredVenueID = preferred
        }
    }

    // MARK: Input

    /// Folds one sighting in. Region entries happen here; exits, staleness and
    /// the nearest venue are decided in `tick`.
    public mutating func ingest(_ sighting: BeaconSighting, into events: inout [EngineEvent]) {
        lastSighting = max(lastSighting ?? sighting.time, sighting.time)
        let identity = sighting.identity
        // The track is changed where it lies in `tracks` (through its index),
        // never copied out and written back: a copy would share the track's
        // sample buffers and make every sighting copy them (a malloc each).
        let index: [BeaconIdentity: BeaconTrack].Index
        let previousInterval: Duration?
        if let existing = tracks.index(forKey: identity) {
            index = existing
            previousInterval = tracks.values[index].interval
            let walkingRate = ranger.walkingRate(tracks.values[index])
            tracks.values[index].observe(sighting, isFirst: false, walkingRate: walkingRate)
        } else {
            let indices = monitor.indices(matching: identity)
            guard !indices.isEmpty else { return }
            let venue = venueIndex(for: identity)
            guard makeRoom(forVenueBeacon: venue != nil, into: &events) else { return }
            var track = BeaconTrack(
                sighting: sighting, filter: filterParameters, regionIndices: indices, venueIndex: venue,
                calibratedPower: venue.flatMap { configuration.venues[$0].measuredPower },
                defaultPower: configuration.ranging.defaultMeasuredPower)
            previousInterval = nil
            track.observe(sighting, isFirst: true, walkingRate: ranger.walkingRate(track))
            tracks[identity] = track
            index = tracks.index(forKey: identity)!
        }
        if !sighting.frame.hasPlausibleMeasuredPower, !tracks.values[index].announcedImplausiblePower {
            tracks.values[index].announcedImplausiblePower = true
            events.append(
                .implausibleMeasuredPower(
                    identity, advertised: sighting.frame.measuredPower, rangingWith: tracks.values[index].measuredPower))
        }
        let estimate = tracks.values[index].filter.estimate
        monitor.observe(
            rssi: sighting.rssi, filteredRSSI: estimate.isFinite ? estimate : nil,
            at: sighting.time, interval: previousInterval, indices: tracks.values[index].regionIndices, identity: identity,
            into: &transitions)
        // Recency to the second is enough to choose whom to evict, and spares
        // a beacon at 10 Hz nine list updates in ten.
        let relist = tracks.values[index].listedAt.map { sighting.time - $0 >= .seconds(1) } ?? true
        if relist { tracks.values[index].listedAt = sighting.time }
        flushTransitions(into: &events)
        rangeAndPublish(identity, now: sighting.time, into: &events)
        if relist { list(identity) }
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
        var slowest: [Int: Duration] = [:]
        var strongest: [Int: Double] = [:]
        for (identity, track) in tracks {
            if now - track.lastSeen > forgetAfter(track) {
                forget(identity, into: &events)
                continue
            }
            let fresh = now - track.lastSeen <= track.staleAfter(minimum: ranger.staleAfter)
            for index in track.regionIndices {
                if let interval = track.interval { slowest[index] = max(slowest[index] ?? .zero, interval) }
                if fresh, track.filter.estimate.isFinite {
                    strongest[index] = max(strongest[index] ?? -.infinity, track.filter.estimate)
                }
            }
        }
        monitor.tick(
            now: now, slowestInterval: { slowest[$0] }, strongestRSSI: { strongest[$0] }, into: &transitions)
        flushTransitions(into: &events)
        for identity in Array(tracks.keys) { rangeAndPublish(identity, now: now, into: &events) }
        decideNearestVenue(now: now, into: &events)
    }

    // MARK: Output

    /// Ranged beacons, nearest first, unknown last; all of them, or those matching `constraint`.
    public func rangedBeacons(matching constraint: BeaconConstraint? = nil) -> [RangedBeacon] {
        ranged.values.filter { constraint?.matches($0.identity) ?? true }.sorted(by: RangedBeacon.rangingOrder)
    }

    public func rangedBeacon(_ identity: BeaconIdentity) -> RangedBeacon? { ranged[identity] }

    public var nearestVenue: NearestVenue? { selector.current }

    /// How many beacons the engine holds now (at most `limits.trackedBeacons`).
    public var trackedBeacons: Int { tracks.count }

    public var state: EngineState {
        EngineState(
            regions: Dictionary(
                monitor.definitions.filter { $0.owner == nil }.compactMap { definition in
                    monitor.state(of: definition.id).map { (definition.id, $0) }
                },
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
        reindexTracks()
        for (identity, track) in tracks where track.regionIndices.isEmpty {
            forget(identity, into: &events)
        }
    }

    /// Applies a new configuration, keeping what still holds: the state of
    /// every region whose id and constraint are unchanged, clients' regions,
    /// the preferred venue if it still exists, and the incumbent nearest venue
    /// (an incumbent the new file removes is announced as lost).
    public mutating func reconfigure(_ new: Configuration, now: Timestamp, into events: inout [EngineEvent]) {
        let old = Dictionary(monitor.definitions.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        var restored: [String: RegionState] = [:]
        for region in new.regions where old[region.key]?.constraint == region.constraint {
            restored[region.id] = monitor.state(of: region.key)
        }
        var next = RegionMonitor(regions: new.regions, settings: new.ranging, restored: restored, now: now)
        for client in monitor.definitions where client.owner != nil {
            next.add(client, restoredState: monitor.state(of: client.key), now: now)
        }
        next.carryOver(from: monitor)
        let currentVenue = selector.current?.venueID
        configuration = new
        monitor = next
        ranger = Ranger(settings: new.ranging)
        selector.margin = new.ranging.switchMargin
        selector.dwell = new.ranging.switchDwell
        let currentIndex = currentVenue.flatMap { id in new.venues.firstIndex { $0.id == id } }
        selector.retarget(currentIndex: currentIndex)
        if currentVenue != nil, currentIndex == nil { events.append(.nearestVenueChanged(nil)) }
        if let preferred = preferredVenueID, !new.venues.contains(where: { $0.id == preferred }) { preferredVenueID = nil }
        reindexTracks()
    }

    // MARK: Internals

    private func venueIndex(for identity: BeaconIdentity) -> Int? {
        configuration.venues.firstIndex { $0.constraint.matches(identity) }
    }

    /// A beacon is forgotten after as long as a region would take to exit
    /// without it; one heard once, its interval unknown, is kept for three of
    /// Bluetooth's longest intervals so that a slow beacon can be learnt.
    private func forgetAfter(_ track: BeaconTrack) -> Duration {
        max(configuration.ranging.exitAfter, (track.interval ?? RegionMonitor.longestAdvertisingInterval) * 3)
    }

    /// After regions or venues changed: each track's regions, venue and
    /// calibration, and the eviction lists rebuilt in order of last sighting.
    private mutating func reindexTracks() {
        for (identity, var track) in tracks {
            let venue = venueIndex(for: identity)
            track.regionIndices = monitor.indices(matching: identity)
            track.calibratedPower = venue.flatMap { configuration.venues[$0].measuredPower }
            track.defaultPower = configuration.ranging.defaultMeasuredPower
            track.venueIndex = venue
            tracks[identity] = track
        }
        strangers = RecencyList()
        rangedStrangers = RecencyList()
        venueBeacons = RecencyList()
        for (identity, _) in tracks.sorted(by: { $0.value.lastSeen < $1.value.lastSeen }) { list(identity) }
    }

    /// Puts a beacon on the eviction list it belongs to now, as the most recently heard there.
    private mutating func list(_ identity: BeaconIdentity) {
        guard let track = tracks[identity] else { return }
        if track.venueIndex != nil {
            venueBeacons.touch(identity)
        } else if ranged[identity] != nil {
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
        guard let victim = strangers.oldest ?? rangedStrangers.oldest ?? (isVenueBeacon ? venueBeacons.oldest : nil) else {
            return false
        }
        forget(victim, into: &events)
        return true
    }

    private mutating func forget(_ identity: BeaconIdentity, into events: inout [EngineEvent]) {
        tracks[identity] = nil
        strangers.remove(identity)
        rangedStrangers.remove(identity)
        venueBeacons.remove(identity)
        if ranged.removeValue(forKey: identity) != nil { events.append(.beaconDisappeared(identity)) }
    }

    private mutating func flushTransitions(into events: inout [EngineEvent]) {
        guard !transitions.isEmpty else { return }
        events.append(contentsOf: transitions.map(EngineEvent.region))
        transitions.removeAll(keepingCapacity: true)
    }

    /// Re-ranges one beacon and publishes it while one of its regions is
    /// inside and it has shown entry evidence of its own; strangers only while
    /// fewer than `limits.rangedStrangers` are ranged.
    private mutating func rangeAndPublish(_ identity: BeaconIdentity, now: Timestamp, into events: inout [EngineEvent]) {
        guard let index = tracks.index(forKey: identity) else { return }
        let inside =
            tracks.values[index].confirmed
            && tracks.values[index].regionIndices.contains { monitor.regions[$0].state == .inside }
        let venueIndex = tracks.values[index].venueIndex
        let venueID = venueIndex.map { configuration.venues[$0].id }
        let beacon = ranger.range(&tracks.values[index], now: now, venueID: venueID)
        if inside {
            if ranged.updateValue(beacon, forKey: identity) == nil {
                if venueIndex == nil, rangedStrangers.count >= limits.rangedStrangers {
                    ranged[identity] = nil
                } else {
                    events.append(.beaconAppeared(identity))
                    list(identity)
                }
            }
        } else if ranged.removeValue(forKey: identity) != nil {
            events.append(.beaconDisappeared(identity))
            list(identity)
        }
    }

    private mutating func decideNearestVenue(now: Timestamp, into events: inout [EngineEvent]) {
        var best: [Int: VenueSelector.Candidate] = [:]
        for beacon in ranged.values where beacon.proximity != .unknown {
            guard let venueIndex = tracks[beacon.identity]?.venueIndex else { continue }
            let limit = configuration.venues[venueIndex].maxDistance ?? configuration.ranging.maxDistance
            if let limit, beacon.distance > limit { continue }
            if let existing = best[venueIndex],
                (existing.beacon.distance, existing.beacon.identity) <= (beacon.distance, beacon.identity)
            {
                continue
            }
            best[venueIndex] = VenueSelector.Candidate(venueIndex: venueIndex, beacon: beacon)
        }
        let preferred = preferredVenueID.flatMap { id in configuration.venues.firstIndex { $0.id == id } }
        if selector.update(candidates: Array(best.values), venues: configuration.venues, preferred: preferred, now: now) {
            events.append(.nearestVenueChanged(selector.current))
        }
    }
}
