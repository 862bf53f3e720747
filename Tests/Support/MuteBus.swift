import Foundation
import Synchronization

/// A socket where a bus would be that takes connections and never answers:
/// what a client sees of a dbus-daemon stuck at boot. The kernel completes
/// the connections (up to the backlog); nobody reads them.
public final class MuteBus: Sendable {
    public let address: String
    /// The listening socket, until `close()`, and the connections taken.
    private let descriptors: Mutex<(listener: Int32?, taken: [Int32])>

    public init(at path: String, backlog: Int32 = 64) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(descriptor, backlog) == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        self.address = "unix:path=\(path)"
        descriptors = Mutex((descriptor, []))
    }

    /// Takes the next connection, once one comes within `milliseconds`: its
    /// client is then in the handshake, waiting, until `close()`.
    public func acceptOne(within milliseconds: Int32) -> Bool {
        guard let listener = descriptors.withLock({ $0.listener }) else { return false }
        var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, milliseconds) == 1 else { return false }
        let taken = accept(listener, nil, nil)
        guard taken >= 0 else { return false }
        descriptors.withLock { $0.taken.append(taken) }
        return true
    }

    /// Stops listening and closes what it took: the clients' connects fail.
    public func close() {
        let all = descriptors.withLock { held in
            defer { held = (nil, []) }
            return (held.listener.map { [$0] } ?? []) + held.taken
        }
        for descriptor in all { Glibc.close(descriptor) }
    }

    deinit { close() }
}
