import BeaconCore
import Foundation
import Testing

/// SPEC section 5: immediate (< 0.5 m), near (< 3 m), far, with hysteresis at the band edges.
@Suite struct ProximityBandsTests {
    /// The bands ranging uses with the default settings.
    static let bands = Ranger(settings: RangingSettings()).bands

    @Test(arguments: [
        (0.1, Proximity.immediate), (0.49, .immediate), (0.5, .near), (1.0, .near), (2.99, .near), (3.0, .far), (20.0, .far),
    ])
    func fromUnknownThePlainThresholdsApply(distance: Double, expected: Proximity) {
        #expect(Self.bands.band(for: distance, previous: .unknown) == expected)
    }

    @Test func justPastTheImmediateEdgeStaysImmediate() {
        #expect(Self.bands.band(for: 0.52, previous: .immediate) == .immediate)
    }

    /// One whole dB past the edge at n = 2 is a factor 10^(1/20) ≈ 1.122: 0.561 m.
    @Test func wellPastTheImmediateEdgeBecomesNear() {
        #expect(Self.bands.band(for: 0.56, previous: .immediate) == .immediate)
        #expect(Self.bands.band(for: 0.57, previous: .immediate) == .near)
    }

    @Test func justInsideTheNearEdgeStaysFar() {
        #expect(Self.bands.band(for: 2.8, previous: .far) == .far)
    }

    @Test func wellInsideTheNearEdgeBecomesNear() {
        #expect(Self.bands.band(for: 2.6, previous: .far) == .near)
    }

    @Test(arguments: [
        (0.48, Proximity.near, Proximity.near), (0.40, .near, .immediate),
        (3.2, .near, .near), (3.5, .near, .far),
        (5.0, .immediate, .far), (0.3, .far, .immediate),
    ])
    func theOtherEdgesHaveHysteresisToo(distance: Double, previous: Proximity, expected: Proximity) {
        #expect(Self.bands.band(for: distance, previous: previous) == expected)
    }

    @Test(arguments: [0.0, Double.pi])
    func aDistanceOscillatingThreePercentAroundTheNearEdgeNeverSwitches(phase: Double) {
        var band = Proximity.unknown
        var switches = 0
        for step in 0..<600 {
            let distance = 3.0 * (1 + 0.03 * sin(phase + Double(step) * 0.7))
            let next = Self.bands.band(for: distance, previous: band)
            if band != .unknown, next != band { switches += 1 }
            band = next
        }
        #expect(band != .unknown)
        #expect(switches == 0)
    }
}
