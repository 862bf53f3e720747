#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads a file named in a command line or a configuration whole, and
/// bounded: a regular file of at most `limit` bytes, or an error a person
/// can act on. A FIFO or a device is refused before it is read (`/dev/zero`
/// never ends, and a FIFO with no writer blocks the reader past SIGTERM);
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
            default: .failed(String(cString: strerror(code)))
            }
        }

        private static func size(_ bytes: Int) -> String {
            bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : bytes % 1024 == 0 ? "\(bytes >> 10) KiB" : "\(bytes) bytes"
        }
    }

    /// The file's bytes. The size fstat reports is a hint for the first
    /// read, which goes into memory not zeroed first (one pass over a 35 MB
    /// capture); past it the buffer doubles, up to one byte over `limit`.
    public static func read(_ path: String, limit: Int) throws(ReadError) -> [UInt8] {
        let file = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard file >= 0 else { throw .errno(errno) }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0 else { throw .errno(errno) }
        guard status.st_mode & S_IFMT != S_IFDIR else { throw .directory }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .notRegular }
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
