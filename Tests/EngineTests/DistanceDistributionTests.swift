import BeaconCore
import BeaconSimulation
import Foundation
import Testing

/// The reported accuracy is an honest one sigma: the truth lies within it
/// about two times in three, and it carries what averaging cannot remove.
@Suite struct DistanceDistributionTests {
    /// Drawing distances from the distribution itself, 68.3 % fall within ±accuracy of the median.
    @Test(arguments: [0.05, 0.3, 0.8, 1.5])
    func aboutTwoThirdsOfDrawsLieWithinTheAccuracy(sigma: Double) {
        let distribution = DistanceDistribution(median: 2.0, logSigma: sigma)
        let accuracy = distribution.accuracy
        var random = SeededRandom(seed: 11)
        let draws = 40_000
        var inside = 0
        for _ in 0..<draws where abs(2.0 * exp(sigma * random.gaussian()) - 2.0) <= accuracy { inside += 1 }
        #expect(abs(Double(inside) / Double(draws) - 0.6827) < 0.01, "\(inside) of \(draws)")
    }

    /// For a narrow distribution d ≈ median·(1 + ε), ε ~ N(0, σ²): the half-width is median·σ.
    @Test func aNarrowDistributionsAccuracyIsMedianTimesSigma() {
        let distribution = DistanceDistribution(median: 3.0, logSigma: 0.01)
        #expect(abs(distribution.accuracy - 0.03) < 0.0005)
        #expect(DistanceDistribution(median: 3.0, logSigma: 0).accuracy == 0)
    }

    /// σ of ln d by hand, n = 2 (ln 10 / 20 = 0.11513):
    /// at 1 m with nothing averaged yet, √(3.27² + 2²) dB = 3.833 dB → 0.4413;
    /// with packets spreading 4 dB (more than the fading), a device set down
    /// keeps a third of the fading (its three advertising channels):
    /// √(3.27²/3 + 2²) dB = 2.750 dB → 0.3167; a device in a hand only the
    /// calibration: 2 dB → 0.2303; at 4 m the exponent's spread adds
    /// ln 4 · 0.5 / 2 = 0.3466 in quadrature.
    @Test func theLogSigmaAddsTheSpotCalibrationAndExponentTerms() {
        let uncertainty = RangingUncertainty()
        let scale = log(10.0) / 20
        for listener in [RSSIFilter.Listener.setDown, .handHeld] {
            let atOneMetre = uncertainty.logSigma(logDistance: 0, filterVariance: 0, packetSpread: nil, listener: listener, exponent: 2)
            #expect(abs(atOneMetre - scale * (3.27 * 3.27 + 4).squareRoot()) < 1e-9)
            #expect(abs(atOneMetre - 0.4413) < 0.0005)
        }
        let setDown = uncertainty.logSigma(logDistance: 0, filterVariance: 0, packetSpread: 4, listener: .setDown, exponent: 2)
        #expect(abs(setDown - scale * (3.27 * 3.27 / 3 + 4).squareRoot()) < 1e-9)
        #expect(abs(setDown - 0.3167) < 0.0005)
        let inAHand = uncertainty.logSigma(logDistance: 0, filterVariance: 0, packetSpread: 4, listener: .handHeld, exponent: 2)
        #expect(abs(inAHand - scale * 2) < 1e-9)
        let far = uncertainty.logSigma(logDistance: log(4), filterVariance: 0, packetSpread: 4, listener: .handHeld, exponent: 2)
        #expect(abs(far - ((scale * 2) * (scale * 2) + 0.3466 * 0.3466).squareRoot()) < 0.0005)
        // The filter's own noise adds in dB.
        let noisy = uncertainty.logSigma(logDistance: 0, filterVariance: 5, packetSpread: 4, listener: .handHeld, exponent: 2)
        #expect(abs(noisy - scale * 3) < 1e-9)
    }

    /// However long a device set down is averaged, and however much its
    /// packets spread, a third of the spot's fading stays; in a hand, a
    /// spread as large as the fading shows all of it changing.
    @Test func aDeviceSetDownKeepsAThirdOfItsSpotsFading() {
        let uncertainty = RangingUncertainty()
        let fading = 3.27 * 3.27
        for spread in [0.0, 1, 2, 2.67, 3.27, 4, 10] {
            let setDown = uncertainty.frozenFading(packetSpread: spread, listener: .setDown)
            let handHeld = uncertainty.frozenFading(packetSpread: spread, listener: .handHeld)
            #expect(abs(handHeld - max(0, fading - spread * spread)) < 1e-9)
            #expect(abs(setDown - max(fading / 3, fading - spread * spread)) < 1e-9)
            #expect(setDown >= fading / 3 - 1e-9 && setDown >= handHeld)
        }
        #expect(uncertainty.frozenFading(packetSpread: nil, listener: .setDown) == fading)
    }

    /// A still listener's beacon, ranged by the engine: the accuracy keeps
    /// the spot's share however long the filter averages, so it never
    /// shrinks below the calibration term alone (2 dB ≈ 23 % of the distance at n = 2).
    @Test func theAccuracyDoesNotShrinkToTheFiltersNoise() throws {
        var engine = BeaconEngine(
            configuration: EngineTestSupport.configuration(), restored: EngineState(regions: ["cafe": .inside]),
            now: EngineTestSupport.t0)
        let beacon = EngineTestSupport.identity()
        EngineDriver.play(
            &engine, [TestBeacon(identity: beacon, interval: .milliseconds(100), rssi: -65, noise: 3, seed: 5)],
            from: EngineTestSupport.t0, until: EngineTestSupport.t0 + .seconds(120))
        let ranged = try #require(engine.rangedBeacon(beacon))
        #expect(ranged.accuracy > 0.22 * ranged.distance)
        #expect(ranged.accuracy < 0.6 * ranged.distance)
    }
}
