import BeaconCore

/// Plays a scenario: every advertisement each beacon sends, as the listener
/// would receive it, in time order. Deterministic for a scenario's seed.
///
/// Received RSSI = true power at 1 m − 10·n·log10(d) + shadowing + fading,
/// rounded to whole dB as controllers report it. Shadowing is log-normal and
/// correlated (it decorrelates as the listener walks `shadowingDistance` or as
/// `shadowingTime` passes); fading is Rician per packet; packets are lost at
/// random and below the receiver's sensitivity. Each beacon advertises at its
/// interval plus the 0–10 ms random delay Bluetooth adds.
public struct Simulator: Sendable {
    public struct Reception: Sendable {
        public var advertisement: Advertisement
        public var beaconIndex: Int
        /// The true distance at the moment of reception, metres.
        public var trueDistance: Double
    }

    private struct Channel: Sendable {
        var nextSend: Duration
        var shadowing: Double
        var lastUpdate: Duration
        var lastPosition: Position
        let payload: [UInt8]
        let address: BluetoothAddress
    }

    public let scenario: Scenario
    public let trajectory: Trajectory
    public let startTime: Timestamp
    private var random: SeededRandom
    private var channels: [Channel]

    public init(scenario: Scenario, startTime: Timestamp) {
        self.scenario = scenario
        self.startTime = startTime
        trajectory = scenario.trajectory
        var random = SeededRandom(seed: scenario.seed)
        let origin = scenario.start
        channels = scenario.beacons.map { beacon in
            let frame = IBeaconFrame(identity: beacon.identity, measuredPower: beacon.measuredPower)
            let phase = beacon.advertisingInterval * random.uniform()
            return Channel(
                nextSend: phase, shadowing: scenario.radio.shadowingSigma * random.gaussian(), lastUpdate: .zero,
                lastPosition: origin, payload: [0x02, 0x01, 0x06] + frame.advertisingData,
                address: BluetoothAddress(
                    0xC0 | UInt8(random.next() & 0x3F), UInt8(random.next() & 0xFF), UInt8(random.next() & 0xFF),
                    UInt8(random.next() & 0xFF), UInt8(random.next() & 0xFF), UInt8(random.next() & 0xFF)))
        }
        self.random = random
    }

    /// The next received advertisement, or `nil` when the walk is over.
    public mutating func next() -> Reception? {
        while let index = channels.indices.min(by: { channels[$0].nextSend < channels[$1].nextSend }) {
            let time = channels[index].nextSend
            guard time < trajectory.duration else { return nil }
            let beacon = scenario.beacons[index]
            channels[index].nextSend = time + beacon.advertisingInterval + .microseconds(Int64(random.uniform() * 10_000))
            if let reception = receive(from: index, at: time) { return reception }
        }
        return nil
    }

    private mutating func receive(from index: Int, at time: Duration) -> Reception? {
        let radio = scenario.radio
        let beacon = scenario.beacons[index]
        let here = trajectory.position(at: time)
        var channel = channels[index]
        let moved = here.distance(to: channel.lastPosition)
        let elapsed = (time - channel.lastUpdate).seconds
        let rho = exp(-moved / max(radio.shadowingDistance, 0.01) - elapsed / max(radio.shadowingTime.seconds, 0.01))
        channel.shadowing = rho * channel.shadowing + (1 - rho * rho).squareRoot() * radio.shadowingSigma * random.gaussian()
        channel.lastUpdate = time
        channel.lastPosition = here
        channels[index] = channel

        let lost = random.uniform() < radio.packetLoss
        let fading = fadingDecibels(k: radio.fadingK)
        let distance = max(here.distance(to: beacon.position), 0.05)
        let model = PathLossModel(exponent: radio.pathLossExponent)
        let rssi = (model.rssi(atDistance: distance, measuredPower: beacon.truePower) + channel.shadowing + fading).rounded()
        guard !lost, rssi >= radio.sensitivity else { return nil }
        let report = AdvertisingReport(
            kind: .legacy(.advNonconnInd), addressType: 1, address: channel.address,
            rssi: Int8(max(-127, min(20, rssi))), data: channel.payload[...])
        return Reception(
            advertisement: Advertisement(time: startTime + time, report: report), beaconIndex: index,
            trueDistance: distance)
    }

    /// Power gain of a Rician channel with factor K, in dB (mean power 1).
    private mutating func fadingDecibels(k: Double) -> Double {
        let lineOfSight = (k / (k + 1)).squareRoot()
        let scatter = (1 / (2 * (k + 1))).squareRoot()
        let inPhase = lineOfSight + scatter * random.gaussian()
        let quadrature = scatter * random.gaussian()
        return 10 * log10(max(inPhase * inPhase + quadrature * quadrature, 1e-6))
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
