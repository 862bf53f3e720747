import BeaconCore
import BeaconSimulation

/// Runs the whole engine against a scenario whose truth is known, beside the
/// two baselines fed the very same advertisements and the stand-average
/// reference (bands and distances only: it picks no venue).
public struct SimulationEvaluation: Sendable {
    public struct Method: Sendable, Equatable {
        public var name: String
        public var venues: VenueScore
        public var bands: BandScore
    }

    public var beacond: Method
    public var baselines: [Method]
    /// `StandAverage` over each stop (see there).
    public var standAverage: BandScore
    public var regions: RegionScore
    /// Share of standing and of walking ticks at which beacond said the listener was stationary.
    public var stationaryStanding: Double
    public var stationaryWalking: Double
    public var scenarioName: String
    public var duration: Duration
    public var advertisements: Int

    /// How often answers are sampled (and the engine ticks), as the service does.
    public static let tick: Duration = .milliseconds(100)

    public init(scenario: Scenario, configuration: Configuration) {
        let origin = Timestamp.milliseconds(1_700_000_000_000)
        var simulator = Simulator(scenario: scenario, startTime: origin)
        let trajectory = simulator.trajectory
        var engine = BeaconEngine(configuration: configuration, now: origin)
        var baselineRangers = BaselineRanger.Kind.allCases.map { BaselineRanger(kind: $0, settings: configuration.ranging) }
        var reference = StandAverage(settings: configuration.ranging)
        var referenceScore = BandScore()
        var decoder = AdvertisementDecoder()
        let truth = GroundTruth(scenario: scenario, configuration: configuration)
        let bands = ProximityBands(immediate: configuration.ranging.immediateDistance, near: configuration.ranging.nearDistance)

        var ticks: [VenueScore.Tick] = []
        var answers: [[String?]] = Array(repeating: [], count: 1 + baselineRangers.count)
        var bandScores = Array(repeating: BandScore(), count: 1 + baselineRangers.count)
        var regionScore = RegionScore()
        var events: [EngineEvent] = []
        var pending = simulator.next()
        var nextTick: Duration = .zero
        var received = 0
        var stationaryTicks = (standing: 0, standingStill: 0, walking: 0, walkingStill: 0)
        while nextTick < trajectory.duration {
            let tickTime = origin + nextTick
            while let reception = pending, reception.advertisement.time <= tickTime {
                received += 1
                if let sighting = decoder.decode(reception.advertisement) {
                    engine.ingest(sighting, into: &events)
                    let power = IBeaconFrame.rangingPower(
                        advertised: sighting.frame.measuredPower,
                        calibrated: configuration.venues.first { $0.constraint.matches(sighting.identity) }?.measuredPower,
                        fallback: configuration.ranging.defaultMeasuredPower)
                    if let rssi = sighting.rssi {
                        for index in baselineRangers.indices {
                            baselineRangers[index].observe(sighting.identity, rssi: rssi, measuredPower: power, at: sighting.time)
                        }
                    }
                    if let distance = truth.distance(to: sighting.identity, at: sighting.time - origin) {
                        reference.observe(sighting.identity, rssi: sighting.rssi, measuredPower: power, trueDistance: distance, at: sighting.time)
                    }
                }
                pending = simulator.next()
            }
            engine.tick(now: tickTime, into: &events)
            for event in events {
                guard case .region(let transition) = event else { continue }
                truth.score(transition, at: transition.time - origin, into: &regionScore)
            }
            events.removeAll(keepingCapacity: true)

            let segment = trajectory.segment(at: nextTick)
            let nearest = truth.nearestVenues(at: nextTick)
            ticks.append(VenueScore.Tick(time: nextTick, truth: nearest.first, acceptable: nearest, stop: segment?.stop))
            answers[0].append(engine.nearestVenue.flatMap { $0.source == .ranging ? $0.venueID : nil })
            let still = engine.nearestVenue?.isStationary ?? false
            if segment?.stop != nil {
                stationaryTicks.standing += 1
                if still { stationaryTicks.standingStill += 1 }
            } else {
                stationaryTicks.walking += 1
                if still { stationaryTicks.walkingStill += 1 }
            }
            for (index, ranger) in baselineRangers.enumerated() {
                answers[index + 1].append(ranger.nearestVenue(configuration, now: tickTime))
            }
            if segment?.stop != nil {
                for (identity, distance) in truth.audibleBeacons(at: nextTick) {
                    let ranged = engine.rangedBeacon(identity)
                    let known = ranged.flatMap { $0.proximity == .unknown ? nil : $0 }
                    bandScores[0].record(
                        identity, band: known?.proximity ?? .unknown, distance: known?.distance, accuracy: known?.accuracy,
                        isStationary: known?.isStationary ?? false, trueDistance: distance, bands: bands)
                    for (index, ranger) in baselineRangers.enumerated() {
                        bandScores[index + 1].record(
                            identity, plainDistance: ranger.distance(identity, now: tickTime), trueDistance: distance, bands: bands)
                    }
                    referenceScore.record(
                        identity, plainDistance: reference.distance(identity, now: tickTime), trueDistance: distance, bands: bands)
                }
            }
            nextTick += Self.tick
        }
        let stops = scenario.stops.count
        beacond = Method(name: "beacond", venues: VenueScore(ticks: ticks, answers: answers[0], stops: stops), bands: bandScores[0])
        baselines = baselineRangers.enumerated().map { index, ranger in
            Method(
                name: ranger.kind.rawValue, venues: VenueScore(ticks: ticks, answers: answers[index + 1], stops: stops),
                bands: bandScores[index + 1])
        }
        standAverage = referenceScore
        regions = regionScore
        stationaryStanding = Double(stationaryTicks.standingStill) / Double(max(1, stationaryTicks.standing))
        stationaryWalking = Double(stationaryTicks.walkingStill) / Double(max(1, stationaryTicks.walking))
        scenarioName = scenario.name
        duration = trajectory.duration
        advertisements = received
    }
}

/// What is true in a scenario at a moment: distances, the nearest venue, and
/// which regions' beacons can be heard at all.
struct GroundTruth: Sendable {
    let scenario: Scenario
    let configuration: Configuration
    let trajectory: Trajectory

    init(scenario: Scenario, configuration: Configuration) {
        self.scenario = scenario
        self.configuration = configuration
        trajectory = scenario.trajectory
    }

    /// Beacons whose mean received power is above the receiver's sensitivity, with their true distances.
    func audibleBeacons(at time: Duration) -> [(BeaconIdentity, Double)] {
        let here = trajectory.position(at: time)
        let model = PathLossModel(exponent: scenario.radio.pathLossExponent)
        return scenario.beacons.compactMap { beacon in
            let distance = Self.distance(from: here, to: beacon)
            let mean = model.rssi(atDistance: distance, measuredPower: beacon.truePower)
            return mean >= scenario.radio.sensitivity ? (beacon.identity, distance) : nil
        }
    }

    /// The true distance to a beacon of the scenario (`nil` for a stranger).
    func distance(to identity: BeaconIdentity, at time: Duration) -> Double? {
        scenario.beacons.first { $0.identity == identity }.map { Self.distance(from: trajectory.position(at: time), to: $0) }
    }

    /// Never quite zero: the path-loss model has no level at 0 m.
    private static func distance(from here: Position, to beacon: Scenario.Beacon) -> Double {
        max(here.distance(to: beacon.position), 0.05)
    }

    /// Venues whose closest audible beacon (within `max_distance`) is at most
    /// 10% farther than the closest of all, closest first: the first is the
    /// truly nearest; the others are too close to call to blame a method for.
    func nearestVenues(at time: Duration) -> [String] {
        var closest: [String: Double] = [:]
        for (identity, distance) in audibleBeacons(at: time) {
            guard let venue = configuration.venues.first(where: { $0.constraint.matches(identity) }) else { continue }
            if let limit = configuration.maxDistance(of: venue), distance > limit { continue }
            closest[venue.id] = min(closest[venue.id] ?? .infinity, distance)
        }
        let ranked = closest.sorted { ($0.value, $0.key) < ($1.value, $1.key) }
        guard let best = ranked.first?.value else { return [] }
        return ranked.filter { $0.value <= best * 1.1 }.map(\.key)
    }

    func regionAudible(_ id: String, at time: Duration) -> Bool {
        guard let region = configuration.regions.first(where: { $0.id == id }) else { return false }
        return audibleBeacons(at: time).contains { region.constraint.matches($0.0) }
    }

    /// Latency from the truth's own change to the event; an event against the truth is spurious.
    func score(_ transition: RegionTransition, at time: Duration, into score: inout RegionScore) {
        guard transition.kind != .determinedOutside else { return }
        let entered = transition.kind == .entered
        guard regionAudible(transition.regionID, at: time) == entered else {
            score.spuriousEvents += 1
            return
        }
        var since = time
        let step = SimulationEvaluation.tick
        while since > .zero, regionAudible(transition.regionID, at: since - step) == entered { since -= step }
        if entered {
            score.enterLatencies.append(time - since)
        } else {
            score.exitLatencies.append(time - since)
        }
    }
}
