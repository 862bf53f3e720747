import Glibc

/// Reads a file named in a command line or a configuration whole, and
/// bounded: a regular file of at most `limit` bytes, or an error a person
/// can act on. A FIFO or a device is refused before it is opened (`/dev/zero`
/// never ends, a FIFO with no writer blocks the reader past SIGTERM, and
/// opening some devices does something, as `/dev/watchdog` arms it);
/// a file is read one byte past the limit at most, so the bound holds
/// however its size is reported and if it grows while it is read.
///
/// POSIX calls rather than FileManager: under FoundationEssentials, which
/// beacond links, FileManager's size attribute is not an `Int`, and a size
/// check built on it once let a 20 MB configuration through unseen.
public enum RegularFile {
    public enum ReadError: Error, Sendable, Equatable, CustomStringConvertible {
        case noSuchFile
        case permissionDenied
        case directory
        case notRegular
        case tooLarge(limit: Int)
        case failed(String)

        public var description: String {
            switch self {
            case .noSuchFile: "no such file"
            case .permissionDenied: "permission denied"
            case .directory: "it is a directory"
            case .notRegular: "not a regular file"
            case .tooLarge(let limit): "larger than \(Self.size(limit))"
            case .failed(let reason): reason
            }
        }

        static func errno(_ code: Int32) -> ReadError {
            switch code {
            case ENOENT: .noSuchFile
            case EACCES: .permissionDenied
            case EISDIR: .directory
            default: .failed(String(String(cString: strerror(code)).lowercasedFirst))
            }
        }

        private static func size(_ bytes: Int) -> String {
            if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
            if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
            return "\(bytes) bytes"
        }
    }

    /// The file's bytes. The size fstat reports is a hint for the first
    /// read, which goes into memory not zeroed first (one pass over a 35 MB
    /// capture); past it the buffer doubles, up to one byte over `limit`.
    public static func read(_ path: String, limit: Int) throws(ReadError) -> [UInt8] {
        var status = stat()
        guard stat(path, &status) == 0 else { throw .errno(errno) }
        try requireRegular(status)
        // What was checked may have been swapped since: check what was opened.
        let file = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard file >= 0 else { throw .errno(errno) }
        defer { close(file) }
        guard fstat(file, &status) == 0 else { throw .errno(errno) }
        try requireRegular(status)
        var target = min(max(Int(status.st_size), 0), limit) + 1
        var problem: Int32 = 0
        var bytes = [UInt8](unsafeUninitializedCapacity: target) { buffer, filled in
            filled = fill(file, buffer, from: 0, problem: &problem)
        }
        // Filled to the brim: the file is longer than fstat said (it grew);
        // read on until it ends or passes the limit.
        while problem == 0, bytes.count == target, target <= limit {
            let start = bytes.count
            target = min(target * 2, limit + 1)
            bytes.append(contentsOf: repeatElement(0, count: target - start))
            let filled = bytes.withUnsafeMutableBufferPointer { fill(file, $0, from: start, problem: &problem) }
            bytes.removeSubrange(filled...)
        }
        if problem != 0 { throw .errno(problem) }
        guard bytes.count <= limit else { throw .tooLarge(limit: limit) }
        return bytes
    }

    private static func requireRegular(_ status: stat) throws(ReadError) {
        guard status.st_mode & S_IFMT != S_IFDIR else { throw .directory }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .notRegular }
    }

    /// Reads into `buffer` from `start` until it is full or the file ends; the count filled.
    private static func fill(_ file: Int32, _ buffer: UnsafeMutableBufferPointer<UInt8>, from start: Int, problem: inout Int32) -> Int {
        var filled = start
        while filled < buffer.count {
            let count = Glibc.read(file, buffer.baseAddress! + filled, buffer.count - filled)
            if count > 0 {
                filled += count
            } else if count == 0 || errno != EINTR {
                problem = count == 0 ? 0 : errno
                break
            }
        }
        return filled
    }
}

extension String {
    /// The system's messages start with a capital; beacond's run on after a colon.
    fileprivate var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }
}
