import BeaconCore
import Foundation
import Testing

/// SPEC section 5: immediate (< 0.5 m), near (< 3 m), far, decided as the most
/// probable band, with hysteresis at the band edges.
@Suite struct ProximityBandsTests {
    /// The classifier ranging uses with the default settings (n = 2, 2 dB of
    /// position shadowing, a 0.1 margin).
    static let classifier = Ranger(settings: RangingSettings()).classifier

    @Test(arguments: [
        (0.1, Proximity.immediate), (0.49, .immediate), (0.5, .near), (1.0, .near), (2.99, .near), (3.0, .far), (20.0, .far),
    ])
    func theEdgesBandAKnownDistance(distance: Double, expected: Proximity) {
        #expect(Self.classifier.bands.band(for: distance) == expected)
    }

    @Test(arguments: [0.05, 0.4, 0.7, 1.5, 2.7, 3.3, 8.0], [0.0, 4.0, 100.0])
    func probabilitiesAreADistribution(distance: Double, variance: Double) {
        let p = Self.classifier.probabilities(distance: distance, rssiVariance: variance)
        #expect([p.immediate, p.near, p.far].allSatisfy { (0...1).contains($0) })
        #expect(abs(p.immediate + p.near + p.far - 1) < 1e-9)
    }

    /// Well inside a band, every way of deciding agrees.
    @Test(arguments: [(0.1, Proximity.immediate), (1.2, .near), (10.0, .far)], [0.0, 4.0, 16.0])
    func farFromTheEdgesTheBandIsTheDistancesBand(case: (Double, Proximity), variance: Double) {
        #expect(Self.classifier.band(distance: `case`.0, rssiVariance: variance, previous: .unknown) == `case`.1)
    }

    /// A listener somewhere on a floor is more often just beyond an edge than
    /// just short of it (p(d) ∝ d): with 2 dB of shadowing, an estimate of
    /// 2.8 m is more probably beyond 3 m (by hand: P(far) = 0.56), one of
    /// 2.5 m more probably within it (P(near) = 0.63).
    @Test func nearTheFarEdgeTheFloorTipsTheBalance() {
        #expect(Self.classifier.band(distance: 2.8, rssiVariance: 0, previous: .unknown) == .far)
        #expect(Self.classifier.band(distance: 2.5, rssiVariance: 0, previous: .unknown) == .near)
        let p = Self.classifier.probabilities(distance: 2.8, rssiVariance: 0)
        #expect(abs(p.far - 0.564) < 0.005)
    }

    /// An unsettled filter spreads the estimate: more of it lies in the far band.
    @Test func uncertaintyMovesMassAcrossTheEdge() {
        let settled = Self.classifier.probabilities(distance: 2.0, rssiVariance: 0)
        let unsettled = Self.classifier.probabilities(distance: 2.0, rssiVariance: 36)
        #expect(unsettled.far > settled.far)
        #expect(unsettled.near < settled.near)
    }

    /// At 2.75 m "far" leads "near" by about 0.07 (by hand), less than the margin.
    @Test func aBandIsKeptUntilAnotherLeadsByTheMargin() {
        #expect(Self.classifier.band(distance: 2.75, rssiVariance: 0, previous: .unknown) == .far)
        #expect(Self.classifier.band(distance: 2.75, rssiVariance: 0, previous: .near) == .near)
        #expect(Self.classifier.band(distance: 2.75, rssiVariance: 0, previous: .far) == .far)
        #expect(Self.classifier.band(distance: 3.5, rssiVariance: 0, previous: .near) == .far)
        #expect(Self.classifier.band(distance: 0.3, rssiVariance: 0, previous: .far) == .immediate)
    }

    /// Around the decision edge between near and far (2.7 m for a settled filter).
    @Test(arguments: [0.0, Double.pi])
    func aDistanceOscillatingTwoPercentAroundTheEdgeNeverSwitches(phase: Double) {
        var band = Proximity.unknown
        var switches = 0
        for step in 0..<600 {
            let distance = 2.7 * (1 + 0.02 * sin(phase + Double(step) * 0.7))
            let next = Self.classifier.band(distance: distance, rssiVariance: 0, previous: band)
            if band != .unknown, next != band { switches += 1 }
            band = next
        }
        #expect(band != .unknown)
        #expect(switches == 0)
    }
}
