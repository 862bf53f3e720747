import CDBus
import Glibc

/// libdbus's watches and timeouts, as the poll loop sees them.
///
/// Each gets a serial number when libdbus adds it. A round polls a snapshot
/// of the enabled watches, then handles the ready ones one by one; handling
/// one may make libdbus remove and free others (a peer that hangs up makes
/// the socket's read watch disconnect the transport, freeing its write
/// watch too). So before each handle the round asks `isCurrent` whether the
/// snapshot's entry is still registered under the same serial: a freed
/// watch is never touched, and one allocated anew at the same address is
/// not mistaken for it. Timeouts are re-checked the same way.
struct EventSources {
    struct Entry: Hashable {
        let handle: Handle
        let serial: UInt64
    }

    private var watches: [Handle: UInt64] = [:]
    /// Deadlines of the enabled timeouts; a disabled one has none.
    private var timeouts: [Handle: (serial: UInt64, deadline: ContinuousClock.Instant?)] = [:]
    private var nextSerial: UInt64 = 0

    mutating func addWatch(_ watch: OpaquePointer) {
        nextSerial += 1
        watches[Handle(pointer: watch)] = nextSerial
    }

    mutating func removeWatch(_ watch: OpaquePointer) {
        watches[Handle(pointer: watch)] = nil
    }

    /// Adds, re-arms (toggled) or removes a timeout.
    mutating func setTimeout(_ timeout: OpaquePointer, removed: Bool, now: ContinuousClock.Instant) {
        let handle = Handle(pointer: timeout)
        guard !removed else {
            timeouts[handle] = nil
            return
        }
        let serial = timeouts[handle]?.serial ?? { nextSerial += 1; return nextSerial }()
        let deadline = dbus_timeout_get_enabled(timeout) == 0 ? nil : now + Self.interval(timeout)
        timeouts[handle] = (serial, deadline)
    }

    /// The enabled watches, to poll.
    var enabledWatches: [Entry] {
        watches.compactMap { handle, serial in
            dbus_watch_get_enabled(handle.pointer) != 0 ? Entry(handle: handle, serial: serial) : nil
        }
    }

    func isCurrent(watch entry: Entry) -> Bool {
        watches[entry.handle] == entry.serial && dbus_watch_get_enabled(entry.handle.pointer) != 0
    }

    var nextDeadline: ContinuousClock.Instant? {
        timeouts.values.compactMap(\.deadline).min()
    }

    func expiredTimeouts(at now: ContinuousClock.Instant) -> [Entry] {
        timeouts.compactMap { handle, timeout in
            guard let deadline = timeout.deadline, deadline <= now else { return nil }
            return Entry(handle: handle, serial: timeout.serial)
        }
    }

    /// Whether an expired timeout is still there and enabled; if so it is re-armed for its next interval.
    mutating func rearm(timeout entry: Entry, now: ContinuousClock.Instant) -> Bool {
        guard let timeout = timeouts[entry.handle], timeout.serial == entry.serial, timeout.deadline != nil else { return false }
        timeouts[entry.handle] = (entry.serial, now + Self.interval(entry.handle.pointer))
        return true
    }

    private static func interval(_ timeout: OpaquePointer) -> Duration {
        .milliseconds(Int64(dbus_timeout_get_interval(timeout)))
    }

    /// The poll events a watch asks for.
    static func pollEvents(_ watch: OpaquePointer) -> Int16 {
        let flags = dbus_watch_get_flags(watch)
        var events: Int16 = 0
        if flags & UInt32(DBUS_WATCH_READABLE.rawValue) != 0 { events |= Int16(POLLIN) }
        if flags & UInt32(DBUS_WATCH_WRITABLE.rawValue) != 0 { events |= Int16(POLLOUT) }
        return events
    }

    /// What poll reported, as libdbus's watch flags.
    static func watchFlags(_ revents: Int16) -> UInt32 {
        let revents = Int32(revents)
        var flags: UInt32 = 0
        if revents & Int32(POLLIN) != 0 { flags |= UInt32(DBUS_WATCH_READABLE.rawValue) }
        if revents & Int32(POLLOUT) != 0 { flags |= UInt32(DBUS_WATCH_WRITABLE.rawValue) }
        if revents & Int32(POLLERR) != 0 { flags |= UInt32(DBUS_WATCH_ERROR.rawValue) }
        if revents & Int32(POLLHUP) != 0 { flags |= UInt32(DBUS_WATCH_HANGUP.rawValue) }
        return flags
    }
}
