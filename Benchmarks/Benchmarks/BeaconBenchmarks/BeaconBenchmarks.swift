import BeaconCore
import BenchmarkInputs
import Benchmark
import Glibc

// Every throughput benchmark measures a whole number of advertisements per
// iteration equal to its `scalingFactor` (1,000 or 1,000,000), so ordo-one's
// throughput column reads in advertisements per second ("K" or "M"), and the
// columns marked `*` (time, mallocs) read per advertisement (`--scale` shows
// them per iteration instead).
//
// Inputs are built outside the measured region: lazily in `Inputs`'s static
// lets or before `startMeasurement()`. Each benchmark runs in its own process,
// so one benchmark's inputs do not count in another's peak memory.

/// N beacons advertising at 10 Hz each, as HCI events, fed through the
/// service's pipeline (decoder → engine), with a tick every 200 ms of
/// advertisement time. The engine lives across iterations and time keeps
/// advancing, so iterations measure the steady state of a room, not start-up.
///
/// With `strangers`, that many more identities of the region's UUID (no
/// venue's) are in view, each advertising once a second: a flood of distinct
/// identities, which the engine's caps must absorb at the same cost per
/// advertisement.
final class PipelineRun {
    static let interval: Int64 = 100_000  // µs between one beacon's advertisements (10 Hz)
    static let tickEvery: Int64 = 200_000  // µs

    let beacons: Int
    let strangers: Int
    /// One second of the room, in time order: each advertisement's HCI event
    /// and its time within the second (µs).
    private(set) var schedule: [[UInt8]] = []
    private var offsets: [Int64] = []
    private var engine: BeaconEngine?
    private var decoder = AdvertisementDecoder()
    private var events: [EngineEvent]? = []
    private var next = 0  // advertisements fed so far
    private var nextTick: Int64 = 0
    private let start: Int64 = 1_700_000_000_000_000
    /// Time in `feed` (wall clock, and this thread's CPU time, which other
    /// processes on a loaded machine do not lengthen) and advertisements fed
    /// by it, for the means over all iterations.
    private var fedTime: Duration = .zero
    private var fedCPU: Int64 = 0
    private var fed = 0

    /// "100 beacons", "100 beacons + 10000 strangers": the benchmark's name and its summary's.
    var room: String { strangers == 0 ? "\(beacons) beacons" : "\(beacons) beacons + \(strangers) strangers" }

    init(beacons: Int, strangers: Int = 0) {
        self.beacons = beacons
        self.strangers = strangers
    }

    func prepare() {
        guard engine == nil else { return }
        let strangersPerSlot = strangers / 10
        let perSlot = beacons + strangersPerSlot
        schedule.reserveCapacity(perSlot * 10)
        for slot in 0..<10 {
            for entry in 0..<perSlot {
                let identity = entry < beacons ? Inputs.identity(entry) : Inputs.stranger(slot * strangersPerSlot + entry - beacons)
                schedule.append(
                    Inputs.event(
                        Inputs.payload(major: identity.major, minor: identity.minor), beacon: entry,
                        rssi: Inputs.rssi(beacon: entry, step: slot)))
                // Spread evenly over each 100 ms slot, as unsynchronised radios are.
                offsets.append(Int64(slot) * Self.interval + Int64(entry) * Self.interval / Int64(perSlot))
            }
        }
        engine = BeaconEngine(
            configuration: Inputs.configuration(beacons: beacons, venues: true),
            now: Timestamp(microsecondsSinceEpoch: start))
        nextTick = start + Self.tickEvery
        events!.reserveCapacity(4 * beacons)
        feed(schedule.count * 2)  // two seconds: every beacon tracked, the region inside, venues in play
        (fedTime, fedCPU, fed) = (.zero, 0, 0)
    }

    /// Feeds the next `count` advertisements of the endless schedule.
    func feed(_ count: Int) {
        // Owned locals for the loop (no copy-on-write, no class-property traffic).
        var engine = self.engine.take()!
        var decoder = self.decoder
        var events = self.events.take()!
        let clock = ContinuousClock()
        let began = clock.now
        let beganCPU = Self.threadCPUNanoseconds()
        defer {
            (self.engine, self.decoder, self.events) = (engine, decoder, events)
            fedTime += began.duration(to: clock.now)
            fedCPU += Self.threadCPUNanoseconds() - beganCPU
            fed += count
        }
        let perSecond = schedule.count
        var next = self.next
        var nextTick = self.nextTick
        for _ in 0..<count {
            let second = next / perSecond
            let index = next % perSecond
            let time = start + Int64(second) * 1_000_000 + offsets[index]
            let now = Timestamp(microsecondsSinceEpoch: time)
            decoder.decode(event: schedule[index][...], at: now) { engine.ingest($0, into: &events) }
            if time >= nextTick {
                engine.tick(now: now, into: &events)
                nextTick += Self.tickEvery
            }
            events.removeAll(keepingCapacity: true)
            next += 1
        }
        self.next = next
        self.nextTick = nextTick
        blackHole(engine.nearestVenue)
    }

    static func threadCPUNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// The mean over every measured iteration (warm-up included). With 1,000
    /// beacons an iteration is 100 ms of advertisements and only every other
    /// one holds a tick, so the percentiles are bimodal: quote the mean.
    var summary: String {
        let seconds = Double(fedTime.components.seconds) + Double(fedTime.components.attoseconds) / 1e18
        let mean = seconds / Double(max(fed, 1))
        let meanCPU = Double(fedCPU) / 1e9 / Double(max(fed, 1))
        return "pipeline: \(room): mean \(Int((mean * 1e9).rounded())) ns per advertisement, "
            + "\(Int((1 / mean / 1e3).rounded())) K advertisements/s over \(fed) advertisements "
            + "(CPU time: \(Int((meanCPU * 1e9).rounded())) ns, \(Int((1 / meanCPU / 1e3).rounded())) K/s); "
            + "\(engine!.trackedBeacons) tracked, \(engine!.rangedBeacons().count) ranged, \(engine!.evictions) evictions, nearest \(engine!.nearestVenue?.venueID ?? "none"), "
            + "\(decoder.iBeacons) of \(decoder.advertisements) reports iBeacons, \(decoder.malformed) malformed"
    }
}

/// An engine that has seen `sightings` sightings of each of `beacons` beacons,
/// 100 ms apart, ticking after each round.
func trackingEngine(beacons: Int, sightings: Int) -> BeaconEngine {
    let start: Int64 = 1_700_000_000_000_000
    var engine = BeaconEngine(
        configuration: Inputs.configuration(beacons: beacons, venues: false),
        now: Timestamp(microsecondsSinceEpoch: start))
    // The cost of a tracked beacon, not the caps: room for all of them.
    engine.limits.trackedBeacons = beacons
    engine.limits.rangedStrangers = beacons
    var events: [EngineEvent] = []
    for round in 0..<sightings {
        for beacon in 0..<beacons {
            let time = Timestamp(
                microsecondsSinceEpoch: start + Int64(round) * 100_000 + Int64(beacon) * 100_000 / Int64(beacons))
            engine.ingest(
                BeaconSighting(
                    time: time, frame: IBeaconFrame(identity: Inputs.identity(beacon), measuredPower: -59),
                    rssi: Inputs.rssi(beacon: beacon, step: round), address: Inputs.address(beacon), addressType: 1),
                into: &events)
            events.removeAll(keepingCapacity: true)
        }
        engine.tick(now: Timestamp(microsecondsSinceEpoch: start + Int64(round + 1) * 100_000), into: &events)
        events.removeAll(keepingCapacity: true)
    }
    return engine
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 3,
        maxDuration: .seconds(5), maxIterations: 1_000_000)

    // (a) 1,000 frames per iteration.
    Benchmark("decode: iBeacon frame", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let payload = Inputs.payload[...]
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try? IBeaconFrame.decode(advertisingData: payload))
        }
    }

    // (b) 1,000 legacy LE advertising report events per iteration.
    Benchmark("decode: HCI event + frame", configuration: .init(scalingFactor: .kilo)) { benchmark in
        var decoder = AdvertisementDecoder()
        let event = Inputs.event[...]
        let time = Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            decoder.decode(event: event, at: time) { blackHole($0) }
        }
        blackHole(decoder.iBeacons)
    }

    // (c) One iteration replays the whole 100,000-event capture 10 times (a new
    // reader and decoder each time): 1,000,000 advertisements. (Throughput is
    // an integer count of iterations per second, so at ~10 iterations/s its
    // column is coarse; the time column, per advertisement, is the precise one.)
    // The same advertisements as pcapng: HCI events behind a direction header
    // (201), and link-layer packets off the air (256) that become events.
    let replays: [(String, () -> [UInt8])] = [
        ("replay: 100k-event capture", { Inputs.capture }),
        ("replay: 100k-packet pcapng, 201 H4", { Inputs.pcapngCapture(.bluetoothHCIH4WithPHDR) }),
        ("replay: 100k-packet pcapng, 256 LE LL", { Inputs.pcapngCapture(.bluetoothLELLWithPHDR) }),
    ]
    for (name, makeCapture) in replays {
        Benchmark(
            name,
            configuration: .init(scalingFactor: .mega, maxDuration: .seconds(10))
        ) { benchmark in
            let capture = makeCapture()
            let passes = benchmark.scaledIterations.count / Inputs.capturedEvents
            benchmark.startMeasurement()
            for _ in 0..<passes {
                var reader = try! RecordingReader(bytes: capture)
                var decoder = AdvertisementDecoder()
                while let event = reader.next() {
                    decoder.decode(event: event.packet, at: event.timestamp!) { blackHole($0) }
                }
                precondition(decoder.advertisements == Inputs.capturedEvents && decoder.malformed == 0)
                blackHole(decoder.iBeacons)
            }
        }
    }

    // (d), (e) 1,000 advertisements per iteration through decode → regions →
    // ranging → venue selection: 1 s of 100 beacons, or 0.1 s of 1,000 beacons
    // (so with 1,000 beacons every other iteration holds a 200 ms tick; the
    // teardown prints the mean over all iterations).
    // (g) A flood: 100 venue beacons beside 10,000 or 100,000 distinct strangers
    // (each once a second), per advertisement as (d); the caps bound the engine.
    let rooms = [(100, 0), (1000, 0), (100, 10_000), (100, 100_000)]
    for (beacons, strangers) in rooms {
        let run = PipelineRun(beacons: beacons, strangers: strangers)
        Benchmark(
            "pipeline: \(run.room)",
            configuration: .init(scalingFactor: .kilo, maxDuration: .seconds(10)),
            closure: { benchmark in
                run.prepare()
                benchmark.startMeasurement()
                run.feed(benchmark.scaledIterations.count)
            },
            teardown: { print(run.summary) })
    }

    // (f) An engine tracking N beacons (5 sightings each, one region, no venues),
    // kept alive until after the measurement stops: `memoryLeakedBytes`
    // ("Malloc / free Δ (bytes)") is then the engine's live heap and
    // `peakMemoryResident` the process's resident peak.
    // Per tracked beacon ≈ (figure at 10,000 − figure at 1,000) / 9,000.
    for beacons in [1000, 10_000] {
        Benchmark(
            "memory per tracked beacon: \(beacons) beacons",
            configuration: .init(
                metrics: [
                    .peakMemoryResident, .peakMemoryResidentDelta, .memoryLeakedBytes, .mallocCountTotal, .wallClock,
                ],
                warmupIterations: 0, maxDuration: .seconds(10), maxIterations: 5)
        ) { benchmark in
            benchmark.startMeasurement()
            let engine = trackingEngine(beacons: beacons, sightings: 5)
            benchmark.stopMeasurement()
            precondition(engine.rangedBeacons().count == beacons)
            blackHole(engine)
        }
    }
}
