import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Log lines for journald, when stderr is the journal: each line begins with
/// its syslog priority (`<4>` for a warning), which journald takes as the
/// entry's priority and strips, so `journalctl -u beacond -p warning` finds
/// warnings and the journal colours them; no timestamp, since the journal
/// keeps its own. journald makes each line an entry, so every line of a
/// message of several lines (an invalid configuration's problems) carries it.
struct JournalLogHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        let details = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let prefix = "<\(Self.priority(event.level))>"
        // Every line break journald would see starts a line with the priority:
        // in Swift "\r\n" is one Character, not "\n", and a file's text can hold
        // one (a quoted path) followed by `<0>`, an emergency journald sends to every terminal.
        let text = (event.message.description + details)
            .split(omittingEmptySubsequences: false) { $0.isNewline || $0 == "\0" }
            .map { prefix + $0 + "\n" }.joined()
        // One write per message: lines of concurrent messages never interleave.
        // Cut short, the line is ended, or the next message would run on under this one's priority.
        if !OutputFile.standardError.write(Array(text.utf8)) { OutputFile.standardError.write([UInt8(ascii: "\n")]) }
    }

    /// syslog's priorities (`sd-daemon.h`: SD_DEBUG 7 … SD_CRIT 2).
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Whether stderr is the stream systemd connected to the journal:
    /// `JOURNAL_STREAM` names its device and inode (`systemd.exec(5)`), and a
    /// stderr redirected elsewhere by the unit or a person no longer matches.
    static var stderrIsTheJournal: Bool {
        guard let value = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
        let parts = value.split(separator: ":")
        var status = stat()
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]), fstat(STDERR_FILENO, &status) == 0 else {
            return false
        }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }
}
