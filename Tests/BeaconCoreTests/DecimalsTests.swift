import BeaconCore
import Testing

/// How numbers are shown: `decimals` as C's `%.Nf`, an accuracy rounded up.
struct DecimalsTests {
    @Test func decimalsRoundAsPrintfDoes() {
        #expect(0.125.decimals(2) == "0.12")  // to even, as %.2f: 0.125 is exact
        #expect(2.5.decimals(0) == "2")
        #expect(1e30.decimals(2).count > 32)
    }

    /// An accuracy never reads 0.00 (certainty), and one already on a step is not pushed past it.
    @Test func anAccuracyIsRoundedUpToTheStepAbove() {
        #expect(0.0035.roundedUp(toDecimals: 2) == 0.01)
        #expect(0.221.roundedUp(toDecimals: 2) == 0.23)
        #expect(0.07.roundedUp(toDecimals: 2) == 0.07)  // 0.07 × 100 is 7.000000000000001
        #expect(0.22.roundedUp(toDecimals: 2) == 0.22)
        #expect(1.5.roundedUp(toDecimals: 0) == 2)
        #expect(0.0.roundedUp(toDecimals: 2).sign == .plus)
        #expect(1e-12.roundedUp(toDecimals: 2).sign == .plus)
    }
}
