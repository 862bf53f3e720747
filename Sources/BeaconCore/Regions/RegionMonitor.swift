/// Region monitoring with evidence and hysteresis (SPEC section 4).
///
/// - Enter on two qualifying sightings (RSSI at or above the enter floor, if
///   any) within a window of 2 s, widened to three intervals for a beacon
///   that advertises slowly: a single stray packet never enters.
/// - Exit when no matching beacon has been seen for `exit_after` (never less
///   than three of the slowest matching beacon's intervals), or when the best
///   filtered RSSI of the matching beacons falls below the exit threshold,
///   which is lower than the enter floor.
/// - `unknown` until the first evidence; after one exit timeout without any,
///   the region is determined `outside` without an announcement.
public struct RegionMonitor: Sendable {
    struct Region: Sendable {
        var definition: RegionDefinition
        var state: RegionState
        /// Last sighting of any matching beacon (or, restored inside, the start time).
        var lastSeen: Timestamp?
        /// Last qualifying sighting that did not yet make an entry.
        var pendingSighting: Timestamp?
        /// Last sighting strong enough to enter: without one, an unknown region is determined outside.
        var lastQualifying: Timestamp?
        /// Since when the region has been watched without evidence (for determining outside).
        var watchedSince: Timestamp
        var enterRSSI: Double?
        var exitRSSI: Double?
        var exitAfter: Duration
        /// Restored inside, or inside when the radio came back, with no
        /// advertising interval learnt since; `heard`: a matching beacon has
        /// been heard since. Heard but not learnt, its beacons may be slow.
        var awaitingInterval = false
        var heard = false
    }

    /// The longest advertising interval Bluetooth allows: a region heard once,
    /// its beacon's interval not yet known, waits three of these before it is
    /// determined outside.
    public static let longestAdvertisingInterval: Duration = .milliseconds(10_240)
    /// The exit (or determining-outside) timeout for a region heard but
    /// whose beacons' interval is not known: as slow as Bluetooth allows.
    static func patience(_ timeout: Duration) -> Duration { max(timeout, longestAdvertisingInterval.tripled) }

    /// Half again the longest interval: a longer silence is a spell out of
    /// range, or may hide a move, not a beacon's interval.
    public static let longestGap = longestAdvertisingInterval * 1.5

    /// Why a region was determined outside, in words that point at the cause:
    /// none of its beacons heard at all is most often a UUID, major or minor
    /// that matches nothing in range (compare with `beacond scan`), not a
    /// weak signal.
    static func outsideReason(heard: Bool, floor: Double?, for patience: Duration) -> String {
        if heard { return "nothing strong enough to enter for \(patience.configurationText)" }
        let below = floor.map { " at \(Int($0)) dBm (enter_rssi) or stronger" } ?? ""
        return "none of its beacons heard\(below) for \(patience.configurationText); `beacond scan` shows what is in range"
    }
    private(set) var regions: [Region] = []
    private var settings: RangingSettings

    /// - Parameter restored: states saved by an earlier run; a region restored
    ///   inside stays inside without a new enter and exits once evidence says so.
    public init(regions: [RegionDefinition], settings: RangingSettings, restored: [String: RegionState] = [:], now: Timestamp) {
        self.settings = settings
        for definition in regions {
            add(definition, restoredState: restored[definition.id], now: now)
        }
    }

    /// While the radio is down, silence is no evidence: no region exits or is
    /// determined outside by timeout.
    public private(set) var isSuspended = false

    public var definitions: [RegionDefinition] { regions.map(\.definition) }

    /// The radio went away: stop counting silence against the regions.
    mutating func suspend() {
        isSuspended = true
    }

    /// The radio is back at `now`: timeouts start again from here, as after a
    /// restart, so the beacons have a whole `exit_after` to be heard again.
    mutating func resume(now: Timestamp) {
        isSuspended = false
        for index in regions.indices {
            if regions[index].state == .inside { regions[index].lastSeen = max(regions[index].lastSeen ?? now, now) }
            regions[index].watchedSince = max(regions[index].watchedSince, now)
            regions[index].lastQualifying = regions[index].lastQualifying.map { max($0, now) }
            regions[index].awaitingInterval = regions[index].state == .inside
            regions[index].heard = false
        }
    }

    /// The state of the region with this key (`RegionDefinition.key`).
    public func state(of key: String) -> RegionState? {
        regions.first { $0.definition.key == key }?.state
    }

    /// Every region's state, by key.
    public var states: [String: RegionState] {
        Dictionary(regions.map { ($0.definition.key, $0.state) }, uniquingKeysWith: { first, _ in first })
    }

    /// Indices of the regions whose constraint matches `identity`.
    func indices(matching identity: BeaconIdentity) -> [Int] {
        regions.indices.filter { regions[$0].definition.constraint.matches(identity) }
    }

    public mutating func add(_ definition: RegionDefinition, restoredState: RegionState? = nil, now: Timestamp) {
        let state = restoredState ?? .unknown
        regions.append(
            Region(
                definition: definition, state: state,
                lastSeen: state == .inside ? now : nil, pendingSighting: nil, lastQualifying: nil, watchedSince: now,
                enterRSSI: definition.enterRSSI ?? settings.enterRSSI,
                exitRSSI: definition.exitRSSI ?? settings.exitRSSI,
                exitAfter: definition.exitAfter ?? settings.exitAfter, awaitingInterval: state == .inside))
    }

    /// Keeps what `old` knew of the regions both monitor unchanged (same id
    /// and constraint): when each was last seen, a pending entry, how long it
    /// has been watched. A reload must not postpone an exit, nor count an
    /// outage as silence: a radio that was down stays down.
    mutating func carryOver(from old: RegionMonitor) {
        isSuspended = old.isSuspended
        let previousByKey = Dictionary(old.regions.map { ($0.definition.key, $0) }, uniquingKeysWith: { first, _ in first })
        for index in regions.indices {
            guard let previous = previousByKey[regions[index].definition.key],
                previous.definition.constraint == regions[index].definition.constraint
            else { continue }
            regions[index].lastSeen = previous.lastSeen
            regions[index].lastQualifying = previous.lastQualifying
            regions[index].pendingSighting = previous.pendingSighting
            regions[index].watchedSince = previous.watchedSince
            regions[index].awaitingInterval = previous.awaitingInterval
            regions[index].heard = previous.heard
        }
    }

    /// Removes the region with this key; indices of later regions shift down by one.
    public mutating func remove(key: String) -> Bool {
        guard let index = regions.firstIndex(where: { $0.definition.key == key }) else { return false }
        regions.remove(at: index)
        return true
    }

    /// A sighting of a beacon that matches the regions at `indices`.
    ///
    /// - Parameter filteredRSSI: the beacon's filtered level after this sighting.
    ///   A region does not enter while it is below the exit threshold: it
    ///   would leave again at the next tick (a filter still catching up after
    ///   a weak spell), and flap.
    mutating func observe(
        rssi: Int8?, filteredRSSI: Double?, at time: Timestamp, interval: Duration?, indices: [Int],
        identity: BeaconIdentity, into transitions: inout [RegionTransition]
    ) {
        // Changed where it lies: a copy of the region (its definition's
        // strings) in and out at every sighting costs more than the rest.
        for index in indices {
            regions[index].lastSeen = max(regions[index].lastSeen ?? time, time)
            regions[index].heard = true
            let qualifies = regions[index].enterRSSI.map { floor in rssi.map { Double($0) >= floor } ?? false } ?? true
            if qualifies { regions[index].lastQualifying = time }
            let settled = regions[index].exitRSSI.map { exit in (filteredRSSI ?? -.infinity) >= exit } ?? true
            if regions[index].state != .inside, qualifies, settled {
                let window = max(settings.enterWindow, (interval ?? .zero).tripled)
                if let pending = regions[index].pendingSighting, time - pending <= window, time > pending {
                    regions[index].state = .inside
                    regions[index].pendingSighting = nil
                    transitions.append(
                        RegionTransition(
                            regionID: regions[index].definition.key, kind: .entered, time: time,
                            notify: regions[index].definition.notifyOnEntry,
                            reason: "2 sightings within \(window.tenthsText), the last of \(identity)"))
                } else {
                    regions[index].pendingSighting = time
                }
            }
        }
    }

    /// Exits by timeout or by signal, and regions determined outside.
    ///
    /// - Parameters:
    ///   - slowestInterval: per region, the longest advertising interval of its beacons.
    ///   - strongestRSSI: per region, the best filtered RSSI of its beacons heard within its exit timeout.
    mutating func tick(
        now: Timestamp, slowestInterval: (Int) -> Duration?, strongestRSSI: (Int) -> Double?,
        into transitions: inout [RegionTransition]
    ) {
        for index in regions.indices {
            var region = regions[index]
            let slowest = slowestInterval(index)
            if slowest != nil { region.awaitingInterval = false }
            let timeout = max(region.exitAfter, (slowest ?? .zero).tripled)
            switch region.state {
            case .inside:
                // Restored inside (or the radio back), a beacon heard once has
                // no known interval yet: it may advertise as slowly as
                // Bluetooth allows, so wait as an unknown region heard once
                // does. Not heard at all, the region exits after `exit_after`.
                let patience = region.awaitingInterval && region.heard ? Self.patience(timeout) : timeout
                if !isSuspended, let lastSeen = region.lastSeen, now - lastSeen >= patience {
                    region.state = .outside
                    transitions.append(
                        RegionTransition(
                            regionID: region.definition.key, kind: .exited, time: now,
                            notify: region.definition.notifyOnExit, reason: "not seen for \((now - lastSeen).tenthsText)"))
                } else if !isSuspended, let exitRSSI = region.exitRSSI, let strongest = strongestRSSI(index), strongest < exitRSSI {
                    region.state = .outside
                    transitions.append(
                        RegionTransition(
                            regionID: region.definition.key, kind: .exited, time: now,
                            notify: region.definition.notifyOnExit,
                            reason: "filtered RSSI \(Int(strongest.rounded())) dBm below \(Int(exitRSSI)) dBm"))
                }
            case .unknown:
                let patience = region.lastQualifying != nil && slowest == nil ? Self.patience(timeout) : timeout
                if !isSuspended, now - (region.lastQualifying ?? region.watchedSince) >= patience {
                    region.state = .outside
                    transitions.append(
                        RegionTransition(
                            regionID: region.definition.key, kind: .determinedOutside, time: now, notify: false,
                            reason: Self.outsideReason(heard: region.lastQualifying != nil, floor: region.enterRSSI, for: patience)))
                }
            case .outside:
                break
            }
            // The restore's patience ends with the stay it was for: a region that left waits for nothing more.
            if region.state != .inside { region.awaitingInterval = false }
            if let pending = region.pendingSighting, now - pending > max(settings.enterWindow, timeout) {
                region.pendingSighting = nil
            }
            regions[index] = region
        }
    }
}
