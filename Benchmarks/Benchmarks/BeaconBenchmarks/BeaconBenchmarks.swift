import BeaconCore
import Benchmark
import Foundation

/// Inputs built once, outside the measured code.
enum Inputs {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    /// Flags and an iBeacon, as a beacon sends them.
    static let payload: [UInt8] =
        [0x02, 0x01, 0x06] + IBeaconFrame(identity: BeaconIdentity(uuid: uuid, major: 1, minor: 2), measuredPower: -59).advertisingData

    static func report(_ data: [UInt8], scanResponse: Bool = false) -> AdvertisingReport {
        AdvertisingReport(
            kind: .legacy(scanResponse ? .scanResponse : .advNonconnInd), addressType: 1,
            address: BluetoothAddress(0xC0, 1, 2, 3, 4, 5), rssi: -67, data: data[...])
    }

    static let event: [UInt8] = HCIEvent.advertisingReportEvent([report(payload)])

    /// A btsnoop (BlueZ monitor) capture of `capturedEvents` events: iBeacons
    /// from 50 beacons, scan responses and another company's data.
    static let capturedEvents = 100_000
    static let capture: [UInt8] = {
        var writer = BtsnoopWriter(datalink: .monitor)
        let name: [UInt8] = [0x05, 0x09] + Array("Ligt".utf8)
        let other: [UInt8] = [0x02, 0x01, 0x06, 0x07, 0xFF, 0x59, 0x00, 0x01, 0x02, 0x03, 0x04]
        for index in 0..<capturedEvents {
            let data: [UInt8]
            switch index % 4 {
            case 0, 1:
                data = [0x02, 0x01, 0x06]
                    + IBeaconFrame(identity: BeaconIdentity(uuid: uuid, major: 1, minor: UInt16(index % 50)), measuredPower: -59)
                    .advertisingData
            case 2: data = name
            default: data = other
            }
            writer.append(
                event: HCIEvent.advertisingReportEvent([report(data, scanResponse: index % 4 == 2)]),
                at: Timestamp.milliseconds(1_700_000_000_000 + Int64(index)))
        }
        return writer.bytes
    }()

    /// 10 s of N beacons advertising at 10 Hz, as the engine receives them, in time order.
    static func sightings(beacons: Int) -> [BeaconSighting] {
        var result: [BeaconSighting] = []
        result.reserveCapacity(beacons * 100)
        for step in 0..<100 {
            for beacon in 0..<beacons {
                let identity = BeaconIdentity(uuid: uuid, major: UInt16(beacon / 1000), minor: UInt16(beacon % 1000))
                result.append(
                    BeaconSighting(
                        time: Timestamp.milliseconds(1_700_000_000_000 + Int64(step * 100) + Int64(beacon % 100)),
                        frame: IBeaconFrame(identity: identity, measuredPower: -59),
                        rssi: Int8(-50 - (beacon + step) % 40), address: BluetoothAddress(0xC0, 0, 0, 0, 0, 1), addressType: 1))
            }
        }
        return result
    }

    /// One region over the UUID and a venue per beacon.
    static func configuration(beacons: Int) -> Configuration {
        Configuration(
            regions: [RegionDefinition(id: "all", constraint: BeaconConstraint(uuid: uuid))],
            venues: (0..<beacons).map { beacon in
                VenueDefinition(
                    id: "venue-\(beacon)", name: "Venue \(beacon)",
                    constraint: BeaconConstraint(uuid: uuid, major: UInt16(beacon / 1000), minor: UInt16(beacon % 1000)))
            })
    }
}

/// Decode → regions → ranging → venue selection, ticking every 200 ms of sighting time.
func runPipeline(_ sightings: [BeaconSighting], configuration: Configuration) -> BeaconEngine {
    var engine = BeaconEngine(configuration: configuration, now: sightings[0].time)
    var events: [EngineEvent] = []
    var nextTick = sightings[0].time + .milliseconds(200)
    for sighting in sightings {
        engine.ingest(sighting, into: &events)
        if sighting.time >= nextTick {
            engine.tick(now: sighting.time, into: &events)
            nextTick = sighting.time + .milliseconds(200)
        }
        events.removeAll(keepingCapacity: true)
    }
    return engine
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal, .peakMemoryResident],
        maxDuration: .seconds(5), maxIterations: 1_000_000)

    // Per advertisement: scaled by 1,000, so throughput reads in advertisements per second (K).
    Benchmark("decode: iBeacon frame", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let payload = Inputs.payload[...]
        for _ in benchmark.scaledIterations {
            blackHole(try? IBeaconFrame.decode(advertisingData: payload))
        }
    }

    Benchmark("decode: HCI event + frame", configuration: .init(scalingFactor: .kilo)) { benchmark in
        var decoder = AdvertisementDecoder()
        let event = Inputs.event[...]
        let time = Timestamp.milliseconds(0)
        for _ in benchmark.scaledIterations {
            decoder.decode(event: event, at: time) { blackHole($0) }
        }
        blackHole(decoder.iBeacons)
    }

    // One iteration reads the whole 100,000-event capture: advertisements/s = throughput × 100,000.
    Benchmark("replay: 100k-event btsnoop capture", configuration: .init(maxDuration: .seconds(10))) { benchmark in
        let capture = Inputs.capture
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            var reader = try! RecordingReader(bytes: capture)
            var decoder = AdvertisementDecoder()
            while let event = reader.next() {
                decoder.decode(event: event.packet, at: event.timestamp!) { blackHole($0) }
            }
            blackHole(decoder.iBeacons)
        }
    }

    // One iteration is 10 s of N beacons at 10 Hz (100·N sightings): advertisements/s = throughput × 100·N.
    for beacons in [100, 1000] {
        Benchmark("pipeline: \(beacons) beacons in view", configuration: .init(maxDuration: .seconds(10))) { benchmark in
            let sightings = Inputs.sightings(beacons: beacons)
            let configuration = Inputs.configuration(beacons: beacons)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(runPipeline(sightings, configuration: configuration).nearestVenue)
            }
        }
    }

    // Memory: an engine tracking N beacons; per beacon ≈ (peak at 10,000 − peak at 1,000) / 9,000.
    for beacons in [1000, 10_000] {
        Benchmark(
            "memory: engine tracking \(beacons) beacons",
            configuration: .init(metrics: [.peakMemoryResident, .mallocCountTotal, .wallClock], maxIterations: 3)
        ) { benchmark in
            let sightings = Array(Inputs.sightings(beacons: beacons).prefix(beacons * 5))
            // Beacons, not venues, are what is measured here: one region, no venues.
            let configuration = Configuration(regions: Inputs.configuration(beacons: 0).regions)
            benchmark.startMeasurement()
            blackHole(runPipeline(sightings, configuration: configuration).rangedBeacons().count)
        }
    }
}
