#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Double {
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
