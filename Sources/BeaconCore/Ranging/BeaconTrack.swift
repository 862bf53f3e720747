/// Everything the engine keeps about one beacon it hears: its filter, its
/// advertising rhythm, its band, and which regions and venue it belongs to.
struct BeaconTrack: Sendable {
    let identity: BeaconIdentity
    /// When the engine started tracking it: the longest tracked of a venue's beacons are its venue beacons.
    let firstSeen: Timestamp
    var filter: RSSIFilter
    var lastRSSI: Int8?
    var lastSeen: Timestamp
    /// The last sighting that carried an RSSI: how old the distance is. A
    /// beacon heard without one (HCI's 127) is present, but measured no nearer.
    var lastSample: Timestamp?
    var frameMeasuredPower: Int8
    var address: BluetoothAddress
    /// Typical time between sightings (an average of gaps, packet loss included).
    var interval: Duration?
    var proximity: Proximity = .unknown
    /// What ranging made of the beacon when it last ranged it (at its last
    /// sighting, or a tick that could change the answer): its distance
    /// distribution (`nil` while unknown: too few samples, or stale) and
    /// whether it was fresh. The reported `RangedBeacon` is built from these
    /// when someone reads it, so the accuracy (a root solve) is not solved at every sighting.
    var distance: DistanceDistribution?
    var wasFresh = false
    /// Ranged: reported, exported, a candidate for nearest venue.
    var isRanged = false
    /// Inside a region but refused ranging (strangers at their cap): tried again at every tick.
    var isRefused = false
    /// Whether this identity itself has shown a region's entry evidence (two
    /// sightings within the enter window): only then is it ranged and
    /// published, so a stranger sending each identity once is never exported.
    var confirmed = false
    /// When the engine last moved this beacon to the front of its eviction list.
    var listedAt: Timestamp?
    /// Indices into the engine's regions whose constraint matches this beacon.
    var regionIndices: [Int]
    /// Index into the configuration's venues, and that venue's calibration.
    var venueIndex: Int?
    /// One of its venue's first `EngineLimits.venueBeaconsPerVenue`: kept
    /// from strangers' floods and ranged beyond their cap.
    var isVenueBeacon = false
    var calibratedPower: Int8?
    /// Used when the frame's power is implausible and there is no calibration.
    var defaultPower: Int8
    /// Whether the engine has announced this beacon's implausible power.
    var announcedImplausiblePower = false

    init(
        sighting: BeaconSighting, filter: RSSIFilter.Parameters, regionIndices: [Int], venueIndex: Int?,
        calibratedPower: Int8?, defaultPower: Int8
    ) {
        identity = sighting.identity
        self.filter = RSSIFilter(parameters: filter)
        firstSeen = sighting.time
        lastSeen = sighting.time
        frameMeasuredPower = sighting.frame.measuredPower
        address = sighting.address
        self.regionIndices = regionIndices
        self.venueIndex = venueIndex
        self.calibratedPower = calibratedPower
        self.defaultPower = defaultPower
    }

    /// Tracked longer than `other` (first seen earlier; on a tie, the lower
    /// identity): the order in which a venue's beacons take its places.
    func precedes(_ other: BeaconTrack) -> Bool { (firstSeen, identity) < (other.firstSeen, other.identity) }

    /// The P1m this beacon is ranged with (`IBeaconFrame.rangingPower`).
    var measuredPower: Int8 {
        IBeaconFrame.rangingPower(advertised: frameMeasuredPower, calibrated: calibratedPower, fallback: defaultPower)
    }

    /// Folds a sighting in. The interval average ignores gaps longer than half
    /// again Bluetooth's longest interval (10.24 s): a beacon out of range for
    /// a minute has not slowed down, but one advertising every 10 s has.
    /// `walkingRate`: dB/s a slow walk would move the level (`Ranger.walkingRate`);
    /// `enterWindow`: two sightings this close confirm the beacon (`RangingSettings.enterWindow`).
    mutating func observe(_ sighting: BeaconSighting, isFirst: Bool, walkingRate: Double, enterWindow: Duration) {
        if !isFirst {
            let gap = sighting.time - lastSeen
            if gap > .zero, gap <= max(enterWindow, (interval ?? .zero).tripled) { confirmed = true }
            if gap > .zero, gap <= RegionMonitor.longestGap {
                interval = interval.map { $0.scaled(by: 0.8) + gap.scaled(by: 0.2) } ?? gap
            }
        }
        lastSeen = max(lastSeen, sighting.time)
        lastRSSI = sighting.rssi
        frameMeasuredPower = sighting.frame.measuredPower
        address = sighting.address
        if let rssi = sighting.rssi {
            filter.update(rssi: Double(rssi), at: sighting.time, walkingRate: walkingRate)
            lastSample = max(lastSample ?? sighting.time, sighting.time)
        }
    }

    /// Whether its figures are recent enough to report: a sample within a
    /// few of its own advertising intervals, and never less than `minimum`.
    /// Sightings without an RSSI do not count (until 2026-11-28 they did, and
    /// kept a minute-old distance reported as current).
    func isFresh(at now: Timestamp, minimum: Duration) -> Bool {
        Self.isFresh(lastSample: lastSample, interval: interval, at: now, minimum: minimum)
    }

    /// The same from the two fields, for a loop over every track that must not copy one.
    static func isFresh(lastSample: Timestamp?, interval: Duration?, at now: Timestamp, minimum: Duration) -> Bool {
        lastSample.map { now - $0 <= Ranger.staleAfter(interval: interval, minimum: minimum) } ?? false
    }
}
