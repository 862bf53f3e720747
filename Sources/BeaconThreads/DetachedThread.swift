#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A POSIX thread for work that blocks (a socket read, libmosquitto's
/// loop) and must not hold one of Swift concurrency's few threads;
/// Foundation's `Thread` without loading Foundation.
public enum DetachedThread {
    /// Runs `body` on a new detached thread.
    public static func start(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(run: body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, box)
        guard created == 0 else { fatalError("cannot start a thread: error \(created)") }
        pthread_detach(thread)
    }

    /// Sleeps the calling thread (not a task) for `duration`.
    public static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1, errno == EINTR { request = remaining }
    }

    private final class Body {
        let run: @Sendable () -> Void

        init(run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
