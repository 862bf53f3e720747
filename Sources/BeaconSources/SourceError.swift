import BeaconCore

/// Why a source could not start or had to stop, worded so a person knows what to do.
public enum SourceError: Error, Sendable, CustomStringConvertible {
    case cannotRead(path: String, reason: String)
    case unreadableRecording(path: String, RecordingError)
    /// The radio cannot be used: the message says why and what to try.
    case unavailable(String)

    public var description: String {
        switch self {
        case let .cannotRead(path, reason):
            "cannot read \(path): \(reason)"
        case let .unreadableRecording(path, error):
            "\(path): \(error)"
        case let .unavailable(message):
            message
        }
    }
}
