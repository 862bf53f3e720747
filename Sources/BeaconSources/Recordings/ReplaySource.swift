import BeaconCore
import Glibc

/// `replay:FILE[@SPEED]`: a recording replayed at its own pace, SPEED× or as fast as possible.
///
/// The format is recognised from the content (btsnoop 1001/1002/2001, pcapng
/// or `hcidump --raw`). A capture cut short replays up to where it breaks and
/// the summary says where that was.
public struct ReplaySource: Sendable {
    public let path: String
    public let speed: SourceSpec.ReplaySpeed
    /// Logs without times (plain `hcidump --raw`) are paced one event per this
    /// interval from the moment the replay starts.
    public static let untimedSpacing: Duration = .milliseconds(100)

    public init(path: String, speed: SourceSpec.ReplaySpeed) {
        self.path = path
        self.speed = speed
    }

    /// What a finished replay read, and why it stopped if it stopped early.
    public struct Summary: Sendable {
        public var format: RecordingReader.Format
        public var events = 0
        /// Text-log packets that could not be read and were skipped.
        public var skippedRecords = 0
        /// Why the last of them was skipped, when the format says.
        public var lastSkipReason: String?
        public var stoppedEarly: RecordingError?
    }

    /// Reads and checks the recording up front, so a missing or foreign file
    /// fails before anything starts.
    public func open() throws(SourceError) -> RecordingReader {
        let bytes = try Self.contents(of: path)
        do {
            return try RecordingReader(bytes: bytes)
        } catch {
            throw .unreadableRecording(path: path, error)
        }
    }

    /// The whole file, read straight into the array the reader walks (no
    /// `Data` in between to copy from: one pass over a 35 MB capture, not two).
    static func contents(of path: String) throws(SourceError) -> [UInt8] {
        let file = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { throw .cannotRead(path: path, reason: Self.reason(errno)) }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0 else { throw .cannotRead(path: path, reason: Self.reason(errno)) }
        // The size is a hint (a pipe says 0, a file may grow): one byte more
        // than it tells whether the end was reached; past it the array doubles.
        // The first read goes into memory not zeroed first.
        let hint = max(Int(status.st_size), 0) + 1
        var problem: Int32 = 0
        var bytes = [UInt8](unsafeUninitializedCapacity: hint) { buffer, filled in
            while filled < buffer.count {
                let count = read(file, buffer.baseAddress! + filled, buffer.count - filled)
                if count > 0 {
                    filled += count
                } else if count == 0 || errno != EINTR {
                    problem = count == 0 ? 0 : errno
                    return
                }
            }
        }
        if problem != 0 { throw .cannotRead(path: path, reason: Self.reason(problem)) }
        var filled = bytes.count
        if filled < hint { return bytes }
        while true {
            if filled == bytes.count { bytes.append(contentsOf: repeatElement(0, count: bytes.count)) }
            let count = bytes.withUnsafeMutableBytes { read(file, $0.baseAddress! + filled, $0.count - filled) }
            if count > 0 {
                filled += count
            } else if count == 0 {
                bytes.removeSubrange(filled...)
                return bytes
            } else if errno != EINTR {
                throw .cannotRead(path: path, reason: Self.reason(errno))
            }
        }
    }

    /// What went wrong, as `open`/`read` said it.
    private static func reason(_ code: Int32) -> String {
        switch code {
        case ENOENT: "no such file"
        case EACCES: "permission denied"
        default: String(cString: strerror(code))
        }
    }

    /// Delivers every HCI event of the recording, sleeping on `clock` to keep its pace.
    ///
    /// - Parameters:
    ///   - startTime: the time given to the first event of a log that carries none.
    ///   - rebased: move the recording's times so that it starts at `startTime`
    ///     (the service does, so its clock and the recording's agree); `scan`
    ///     keeps the times as recorded.
    public func run<C: Clock<Duration>>(
        clock: C, startTime: Timestamp, rebased: Bool = false, _ deliver: (SourceEvent) -> Void
    ) async throws(SourceError) -> Summary {
        var reader = try open()
        var summary = Summary(format: reader.format)
        let startInstant = clock.now
        var firstTime: Timestamp?
        while let event = reader.next() {
            // Paced, at every event (each may follow a wait); at @max, where
            // a check per event was 1 % of a scan, every 4,096 (a millisecond's worth).
            let checks: Bool = if case .max = speed { summary.events % 4096 == 0 } else { true }
            if checks, Task.isCancelled { break }
            let recorded = event.timestamp ?? startTime + Self.untimedSpacing * summary.events
            summary.events += 1
            let origin = firstTime ?? recorded
            firstTime = origin
            let factor: Double
            switch speed {
            case .factor(let f):
                factor = f
                let due = startInstant.advanced(by: (recorded - origin) / f)
                if due > clock.now { try? await clock.sleep(until: due, tolerance: nil) }
            case .max:
                factor = 1
            }
            let time = rebased ? startTime + (recorded - origin) / factor : recorded
            deliver(.hciEvent(event.packet, time: time))
        }
        summary.skippedRecords = reader.skippedRecords
        summary.lastSkipReason = reader.lastSkipReason
        summary.stoppedEarly = reader.failure
        return summary
    }
}
