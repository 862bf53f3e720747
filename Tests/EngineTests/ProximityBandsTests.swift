import BeaconCore
import Foundation
import Testing

/// SPEC section 5: immediate (< 0.5 m), near (< 3 m), far, decided as the most
/// probable band of the reported distance distribution, with hysteresis at the band edges.
@Suite struct ProximityBandsTests {
    /// The classifier ranging uses with the default settings (a 0.1 margin).
    static let classifier = Ranger(settings: RangingSettings()).classifier

    static func at(_ median: Double, sigma: Double = 0.3) -> DistanceDistribution {
        DistanceDistribution(median: median, logSigma: sigma)
    }

    @Test(arguments: [
        (0.1, Proximity.immediate), (0.49, .immediate), (0.5, .near), (1.0, .near), (2.99, .near), (3.0, .far), (20.0, .far),
    ])
    func theEdgesBandAKnownDistance(distance: Double, expected: Proximity) {
        #expect(Self.classifier.bands.band(for: distance) == expected)
    }

    @Test(arguments: [0.05, 0.4, 0.7, 1.5, 2.7, 3.3, 8.0], [0.0, 0.2, 3.0])
    func probabilitiesAreADistribution(distance: Double, sigma: Double) {
        let p = Self.classifier.probabilities(Self.at(distance, sigma: sigma))
        #expect([p.immediate, p.near, p.far].allSatisfy { (0...1).contains($0) })
        #expect(abs(p.immediate + p.near + p.far - 1) < 1e-9)
    }

    /// Well inside a band, every way of deciding agrees.
    @Test(arguments: [(0.1, Proximity.immediate), (1.2, .near), (10.0, .far)], [0.0, 0.1, 0.3])
    func farFromTheEdgesTheBandIsTheDistancesBand(case: (Double, Proximity), sigma: Double) {
        #expect(Self.classifier.band(Self.at(`case`.0, sigma: sigma), previous: .unknown) == `case`.1)
    }

    /// The prior is flat in ln d: no lean to either side. By hand, for a
    /// median of 2.5 m and σ = 0.3: P(far) = 1 − Φ(ln(3/2.5)/0.3) = 1 − Φ(0.608) = 0.272.
    @Test func theMassesAreTheLogNormalsAndDoNotLeanFar() {
        let p = Self.classifier.probabilities(Self.at(2.5))
        #expect(abs(p.far - 0.2717) < 0.001)
        #expect(abs(p.near - 0.7283) < 0.001)
        // A median just short of the edge stays short of it at any honest spread
        // (only beyond σ ≈ 0.9 does the unbounded far band outweigh the finite near one).
        for sigma in [0.1, 0.3, 0.5] {
            #expect(Self.classifier.band(Self.at(2.9, sigma: sigma), previous: .unknown) == .near)
        }
    }

    /// Wider uncertainty moves mass across the edges.
    @Test func uncertaintyMovesMassAcrossTheEdge() {
        let settled = Self.classifier.probabilities(Self.at(2.0, sigma: 0.1))
        let unsettled = Self.classifier.probabilities(Self.at(2.0, sigma: 0.6))
        #expect(unsettled.far > settled.far)
        #expect(unsettled.near < settled.near)
    }

    /// At 3.1 m (σ 0.3) "far" leads "near" by 0.087 (by hand), less than the margin; at 3.5 m by 0.39.
    @Test func aBandIsKeptUntilAnotherLeadsByTheMargin() {
        #expect(Self.classifier.band(Self.at(3.1), previous: .unknown) == .far)
        #expect(Self.classifier.band(Self.at(3.1), previous: .near) == .near)
        #expect(Self.classifier.band(Self.at(3.1), previous: .far) == .far)
        #expect(Self.classifier.band(Self.at(3.5), previous: .near) == .far)
        #expect(Self.classifier.band(Self.at(0.3), previous: .far) == .immediate)
    }

    /// Around the edge between near and far.
    @Test(arguments: [0.0, Double.pi])
    func aDistanceOscillatingTwoPercentAroundTheEdgeNeverSwitches(phase: Double) {
        var band = Proximity.unknown
        var switches = 0
        for step in 0..<600 {
            let distance = 3.0 * (1 + 0.02 * sin(phase + Double(step) * 0.7))
            let next = Self.classifier.band(Self.at(distance), previous: band)
            if band != .unknown, next != band { switches += 1 }
            band = next
        }
        #expect(band != .unknown)
        #expect(switches == 0)
    }
}
