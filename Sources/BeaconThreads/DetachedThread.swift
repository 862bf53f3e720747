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
    /// Runs `body` on a new detached thread called `name` (as `top -H`,
    /// `ps -L` and gdb show it).
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(run: { nameCurrent(name); body() })).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, box)
        guard created == 0 else { fatalError("cannot start the \(name) thread: error \(created)") }
        pthread_detach(thread)
    }

    /// Names the calling thread; the kernel keeps 15 bytes of it. Through
    /// /proc (Linux 3.17+): Glibc's module does not export the GNU
    /// `pthread_setname_np`. A name is a nicety, so failing to set one is ignored.
    public static func nameCurrent(_ name: String) {
        #if os(Linux)
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let kept = Array(name.utf8.prefix(15))
        _ = kept.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        #endif
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
