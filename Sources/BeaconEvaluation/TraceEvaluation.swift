import BeaconCore

/// Runs beacond's ranger and both baselines over a trace, row by row.
public struct TraceEvaluation: Sendable {
    /// beacond's estimate right after a row was processed (the `--estimates` CSV).
    public struct Estimate: Sendable, Equatable {
        public var row: Trace.Row
        public var distance: Double?
        public var accuracy: Double?
        public var proximity: Proximity
    }

    public var beacond = BandScore()
    public var baselines: [BaselineRanger.Kind: BandScore] = [:]
    public private(set) var estimates: [Estimate] = []
    public let rows: Int

    /// - Parameter settings: the `ranging` figures from `beacons.yaml` (path-loss exponent, bands).
    public init(trace: Trace, settings: RangingSettings = RangingSettings()) {
        rows = trace.rows.count
        let bands = ProximityBands(immediate: settings.immediateDistance, near: settings.nearDistance)
        // One region per UUID in the trace, so every beacon is monitored and ranged.
        let uuids = Array(Set(trace.rows.map(\.identity.uuid))).sorted { $0.uuidString < $1.uuidString }
        let configuration = Configuration(
            ranging: settings,
            regions: uuids.map { RegionDefinition(id: $0.uuidString, constraint: BeaconConstraint(uuid: $0)) })
        let origin = Timestamp.milliseconds(0)
        var engine = BeaconEngine(configuration: configuration, now: origin)
        var baselineRangers = BaselineRanger.Kind.allCases.map { BaselineRanger(kind: $0, settings: settings) }
        var events: [EngineEvent] = []
        let address = BluetoothAddress(0, 0, 0, 0, 0, 0)
        for row in trace.rows {
            let time = origin + .milliseconds(row.timeMilliseconds)
            let frame = IBeaconFrame(identity: row.identity, measuredPower: row.measuredPower)
            engine.ingest(BeaconSighting(time: time, frame: frame, rssi: row.rssi, address: address, addressType: 0), into: &events)
            engine.tick(now: time, into: &events)
            events.removeAll(keepingCapacity: true)
            let ranged = engine.rangedBeacon(row.identity)
            let known = ranged.flatMap { $0.proximity == .unknown ? nil : $0 }
            estimates.append(
                Estimate(row: row, distance: known?.distance, accuracy: known?.accuracy, proximity: known?.proximity ?? .unknown))
            beacond.record(
                row.identity, band: known?.proximity ?? .unknown, distance: known?.distance,
                trueDistance: row.trueDistance, bands: bands)
            for index in baselineRangers.indices {
                baselineRangers[index].observe(row.identity, rssi: row.rssi, measuredPower: row.measuredPower, at: time)
                let kind = baselineRangers[index].kind
                baselines[kind, default: BandScore()].record(
                    row.identity, band: baselineRangers[index].proximity(row.identity, now: time),
                    distance: baselineRangers[index].distance(row.identity, now: time),
                    trueDistance: row.trueDistance, bands: bands)
            }
        }
    }
}
