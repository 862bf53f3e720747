import Testing

@testable import BeaconCore

/// `ModelComparison`: forecasts count once due and until a spacing overdue,
/// the better forecaster wins, and the ring of eight never grows.
@Suite struct ModelComparisonTests {
    static let t0 = EngineTestSupport.t0
    static let horizon: Duration = .seconds(5)

    /// A forecast a second for `seconds`, the hand-held one right (−70) and
    /// the set-down one `miss` dB off, each packet scored at 10 Hz.
    static func run(miss: Double, heldMiss: Double = 0, seconds: Int = 20) -> ModelComparison {
        var comparison = ModelComparison()
        for step in 0..<(seconds * 10) {
            let time = t0 + .milliseconds(100) * step
            comparison.score(-70, at: time)
            if comparison.wantsForecast(at: time) {
                comparison.add(
                    due: time + horizon, setDown: .init(mean: -70 + miss, variance: 16),
                    handHeld: .init(mean: -70 + heldMiss, variance: 16), at: time, memory: .seconds(60))
            }
        }
        return comparison
    }

    @Test func theModelThatForesawThePacketsWins() {
        #expect(Self.run(miss: 5).favoursHandHeld)
        #expect(!Self.run(miss: 0, heldMiss: 5).favoursHandHeld)
    }

    /// Equal forecasts: a tie, which the set-down model wins.
    @Test func aTieGoesToTheSetDownModel() {
        #expect(!Self.run(miss: 0).favoursHandHeld)
    }

    /// Before a forecast is due nothing is scored, and once it is overdue by more than the spacing it no longer counts.
    @Test func aForecastCountsFromItsDueTimeForOneSpacing() {
        var comparison = ModelComparison()
        comparison.add(
            due: Self.t0 + Self.horizon, setDown: .init(mean: -60, variance: 16), handHeld: .init(mean: -70, variance: 16),
            at: Self.t0, memory: .seconds(60))
        comparison.score(-70, at: Self.t0 + .seconds(4))
        #expect(!comparison.favoursHandHeld)
        comparison.score(-70, at: Self.t0 + .seconds(7))
        #expect(!comparison.favoursHandHeld)
        var due = ModelComparison()
        due.add(
            due: Self.t0 + Self.horizon, setDown: .init(mean: -60, variance: 16), handHeld: .init(mean: -70, variance: 16),
            at: Self.t0, memory: .seconds(60))
        due.score(-70, at: Self.t0 + .milliseconds(5_500))
        #expect(due.favoursHandHeld)
    }

    /// A forecast every second for a minute with nothing scored: the ring keeps the newest eight and still works.
    @Test func theRingKeepsTheNewestEight() {
        var comparison = ModelComparison()
        for second in 0..<60 {
            comparison.add(
                due: Self.t0 + .seconds(second) + Self.horizon, setDown: .init(mean: -60, variance: 16),
                handHeld: .init(mean: -70, variance: 16), at: Self.t0 + .seconds(second), memory: .seconds(60))
        }
        // The newest forecast (made at 59 s) is due at 64 s.
        comparison.score(-70, at: Self.t0 + .seconds(64))
        #expect(comparison.favoursHandHeld)
    }
}
