import BeaconCore
import Foundation

/// The shell's one reading of real time; the core only ever gets it passed in.
public enum WallClock {
    public static func now() -> Timestamp {
        Timestamp(microsecondsSinceEpoch: Int64((Date().timeIntervalSince1970 * 1_000_000).rounded()))
    }
}
