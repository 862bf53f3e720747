import BeaconCore
import BeaconFiles

/// `replay:FILE[@SPEED]`: a recording replayed at its own pace, SPEED× or as fast as possible.
///
/// The format is recognised from the content (btsnoop 1001/1002/2001, pcapng, pcap
/// or `hcidump --raw`). A capture cut short replays up to where it breaks and
/// the summary says where that was.
public struct ReplaySource: Sendable {
    public let path: String
    public let speed: SourceSpec.ReplaySpeed
    /// Logs without times (plain `hcidump --raw`) are paced one event per this
    /// interval from the moment the replay starts (`ReplayTimeline`).
    public static let untimedSpacing = ReplayTimeline.untimedSpacing

    public init(path: String, speed: SourceSpec.ReplaySpeed) {
        self.path = path
        self.speed = speed
    }

    /// What a finished replay read, and why it stopped if it stopped early.
    public struct Summary: Sendable {
        public var format: RecordingReader.Format
        public var events = 0
        /// Packets (damaged, or on an interface beacond does not read) and
        /// text-log lines that could not be read and were skipped.
        public var skippedRecords = 0
        /// Why the last of them was skipped, when the format says.
        public var lastSkipReason: String?

        /// What was skipped, as the service's end line and `beacond scan`'s summary both say it.
        public var skipped: String? {
            guard skippedRecords > 0 else { return nil }
            return "skipped \(skippedRecords) unreadable packets or lines" + (lastSkipReason.map { " (last: \($0))" } ?? "")
        }
        public var stoppedEarly: RecordingError?
        /// What the replay did with times it could not take as recorded (`ReplayTimeline.note`).
        public var timeNote: String?
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

    /// The most of a capture that is read: it is read whole before it is
    /// replayed, and a 600,000-event btsnoop file is 35 MB (docs/benchmarks.md).
    public static let largestRecording = 1 << 30

    /// The whole file, read straight into the array the reader walks (one
    /// pass over a 35 MB capture); a FIFO or a device is refused unread.
    static func contents(of path: String) throws(SourceError) -> [UInt8] {
        do {
            return try RegularFile.read(path, limit: largestRecording)
        } catch .tooLarge {
            throw .cannotRead(path: path, reason: "larger than \(largestRecording >> 20) MiB; split it (editcap -c) and replay the parts")
        } catch .notRegular {
            throw .cannotRead(path: path, reason: "not a regular file; a capture is read whole before it is replayed, so save a pipe's or a device's output to a file first")
        } catch {
            throw .cannotRead(path: path, reason: "\(error)")
        }
    }

    /// Delivers every HCI event of the recording, sleeping on `clock` to keep its pace.
    ///
    /// - Parameters:
    ///   - startTime: the time given to the first event of a log that carries none,
    ///     taken once the file is read (a large one takes seconds), as the pacing's start is.
    ///   - rebased: move the recording's times so that it starts at `startTime`
    ///     (the service does, so its clock and the recording's agree); `scan`
    ///     keeps the times as recorded.
    public func run<C: Clock<Duration>>(
        clock: C, startTime: @autoclosure () -> Timestamp, rebased: Bool = false, _ deliver: (SourceEvent) -> Void
    ) async throws(SourceError) -> Summary {
        var reader = try open()
        var summary = Summary(format: reader.format)
        let startTime = startTime()
        let startInstant = clock.now
        var timeline = ReplayTimeline()
        var upcoming = reader.next()
        while let event = upcoming {
            upcoming = reader.next()
            // Paced, at every event (each may follow a wait); at @max, where
            // a check per event was 1 % of a scan, every 4,096 (a millisecond's worth).
            let checks: Bool = if case .max = speed { summary.events % 4096 == 0 } else { true }
            if checks, Task.isCancelled { break }
            let (recorded, asRecorded) = timeline.place(event.timestamp, next: upcoming?.timestamp, start: startTime)
            summary.events += 1
            let first = timeline.origin ?? recorded
            let factor: Double
            switch speed {
            case .factor(let f):
                factor = f
                let due = startInstant.advanced(by: (recorded - first) / f)
                if due > clock.now { try? await clock.sleep(until: due, tolerance: nil) }
            case .max:
                factor = 1
            }
            // `scan` prints the times as recorded, steps and all; the service's are placed.
            let time = rebased ? startTime + (recorded - first) / factor : asRecorded
            deliver(.hciEvent(event.packet, time: time))
        }
        summary.timeNote = timeline.note
        summary.skippedRecords = reader.skippedRecords
        summary.lastSkipReason = reader.lastSkipReason
        summary.stoppedEarly = reader.failure
        return summary
    }
}
