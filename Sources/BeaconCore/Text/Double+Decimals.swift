#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Double {
    /// Rounded up to `count` digits after the point: how an accuracy (a
    /// one-sigma half-width) is shown, so that a few millimetres at contact
    /// range never read 0.00, which says certainty. A value already on a
    /// step (0.07, whose product with 100 is a hair above 7) stays there.
    public func roundedUp(toDecimals count: Int) -> Double {
        precondition(count >= 0, "decimals are counted from 0")
        let scale = (0..<count).reduce(1.0) { scale, _ in scale * 10 }
        let rounded = (self * scale - 1e-9).rounded(.up) / scale
        return rounded == 0 ? 0 : rounded  // not -0.0, which prints "-0.00"
    }

    /// The value with `count` digits after the point, rounded as C's `%.Nf`
    /// rounds (`String(format:)` without Foundation, whose ICU a service
    /// that only prints numbers does not need to load).
    public func decimals(_ count: Int) -> String {
        let format = "%.\(count)f"
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 32) { scratch in
            let needed = Int(withVaList([self]) { vsnprintf(scratch.baseAddress, scratch.count, format, $0) })
            if needed < scratch.count { return String(cString: scratch.baseAddress!) }
            // Only huge magnitudes (1e30 and up) need more than the stack's 32 bytes.
            var wide = [CChar](repeating: 0, count: needed + 1)
            return wide.withUnsafeMutableBufferPointer { wide in
                _ = withVaList([self]) { vsnprintf(wide.baseAddress, wide.count, format, $0) }
                return String(cString: wide.baseAddress!)
            }
        }
    }
}
