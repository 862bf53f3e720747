import BeaconCore

/// Runs beacond's engine, both baselines and the stand-average reference
/// over a trace, row by row.
public struct TraceEvaluation: Sendable {
    /// beacond's answer right after a row was processed (the `--estimates` CSV).
    public struct Estimate: Sendable, Equatable {
        public var row: Trace.Row
        public var distance: Double?
        public var accuracy: Double?
        public var proximity: Proximity
        /// The row's beacon says the listener has not moved.
        public var isStationary: Bool
        /// The engine's nearest venue and its margin over the runner-up.
        public var nearestVenue: String?
        public var venueMargin: Double?
        public var listenerStationary: Bool
    }

    public var beacond = BandScore()
    public var baselines: [BaselineRanger.Kind: BandScore] = [:]
    /// `StandAverage` over the trace (see there).
    public var standAverage = BandScore()
    public var venues: TraceVenueScore
    public private(set) var estimates: [Estimate] = []
    public let rows: Int

    /// Each beacon of the trace is a venue of its own unless one of
    /// `configuration`'s venues matches it; one region per UUID of the trace
    /// monitors and ranges every beacon. The ranging figures (path-loss
    /// exponent, bands, switch margin) are `configuration`'s.
    public init(trace: Trace, configuration base: Configuration = Configuration()) {
        rows = trace.rows.count
        let settings = base.ranging
        venues = TraceVenueScore(staleAfter: settings.staleAfter)
        let bands = ProximityBands(immediate: settings.immediateDistance, near: settings.nearDistance)
        let (configuration, venueOf) = Self.configuration(for: trace, base: base)
        let origin = Timestamp.milliseconds(0)
        var engine = BeaconEngine(configuration: configuration, now: origin)
        var baselineRangers = BaselineRanger.Kind.allCases.map { BaselineRanger(kind: $0, settings: settings) }
        var reference = StandAverage(settings: settings)
        var events: [EngineEvent] = []
        let address = BluetoothAddress(0, 0, 0, 0, 0, 0)
        var lastTick = origin
        for row in trace.rows {
            let time = origin + .milliseconds(row.timeMilliseconds)
            let frame = IBeaconFrame(identity: row.identity, measuredPower: row.measuredPower)
            let reading = BeaconSighting.reading(row.rssi)
            // Time passes as in the service, not at every row (a tick's work
            // grows with the beacons tracked, a row's should not), and up to
            // the row before it is in: a gap in the recording is over first,
            // as the service's ticker would have had it.
            if time - lastTick >= BeaconEngine.tickInterval {
                engine.tick(now: time, into: &events)
                lastTick = time
            }
            engine.ingest(BeaconSighting(time: time, frame: frame, rssi: reading, address: address, addressType: 0), into: &events)
            events.removeAll(keepingCapacity: true)
            let ranged = engine.rangedBeacon(row.identity)
            let known = ranged.flatMap { $0.proximity == .unknown ? nil : $0 }
            let nearest = engine.nearestVenue.flatMap { $0.source == .ranging ? $0 : nil }
            estimates.append(
                Estimate(
                    row: row, distance: known?.distance, accuracy: known?.accuracy, proximity: known?.proximity ?? .unknown,
                    isStationary: known?.isStationary ?? false, nearestVenue: nearest?.venueID, venueMargin: nearest?.margin,
                    listenerStationary: nearest?.isStationary ?? false))
            beacond.record(
                row.identity, band: known?.proximity ?? .unknown, distance: known?.distance, accuracy: known?.accuracy,
                isStationary: known?.isStationary ?? false, isHandHeld: known?.listener == .handHeld,
                trueDistance: row.trueDistance, bands: bands)
            let venue = configuration.venues[venueOf[row.identity]!]
            venues.record(row.identity, at: time, trueDistance: row.trueDistance, venue: venue.id, answer: nearest?.venueID)
            let power = IBeaconFrame.rangingPower(
                advertised: row.measuredPower, calibrated: venue.measuredPower, fallback: settings.defaultMeasuredPower)
            for index in baselineRangers.indices {
                if let reading {
                    baselineRangers[index].observe(row.identity, rssi: reading, measuredPower: power, at: time)
                }
                baselines[baselineRangers[index].kind, default: BandScore()].record(
                    row.identity, plainDistance: baselineRangers[index].distance(row.identity, now: time),
                    trueDistance: row.trueDistance, bands: bands)
            }
            reference.observe(row.identity, rssi: reading, measuredPower: power, trueDistance: row.trueDistance, at: time)
            standAverage.record(
                row.identity, plainDistance: reference.distance(row.identity, now: time), trueDistance: row.trueDistance, bands: bands)
        }
    }

    /// `base` with a region per UUID of the trace and a venue (id
    /// `UUID-major-minor`) for every beacon none of its venues matches, and
    /// the index of each beacon's venue: looked up once per beacon, not per row.
    static func configuration(for trace: Trace, base: Configuration) -> (Configuration, venueOf: [BeaconIdentity: Int]) {
        var configuration = base
        let uuids = Array(Set(trace.rows.map(\.identity.uuid))).sorted { $0.uuidString < $1.uuidString }
        configuration.regions = uuids.map { RegionDefinition(id: $0.uuidString, constraint: BeaconConstraint(uuid: $0)) }
        var venueOf: [BeaconIdentity: Int] = [:]
        for row in trace.rows where venueOf[row.identity] == nil {
            let identity = row.identity
            if let index = base.venues.firstIndex(where: { $0.constraint.matches(identity) }) {
                venueOf[identity] = index
                continue
            }
            let id = "\(identity.uuid.uuidString)-\(identity.major)-\(identity.minor)"
            venueOf[identity] = configuration.venues.count
            configuration.venues.append(
                VenueDefinition(
                    id: id, name: id,
                    constraint: BeaconConstraint(uuid: identity.uuid, major: identity.major, minor: identity.minor)))
        }
        return (configuration, venueOf)
    }
}
