import BeaconFiles
import Glibc

/// Standard output or error as a file descriptor, written with `write(2)`
/// (no Foundation `FileHandle`, no `Data` per write).
struct OutputFile {
    let descriptor: Int32

    static var standardOutput: OutputFile { OutputFile(descriptor: STDOUT_FILENO) }
    static var standardError: OutputFile { OutputFile(descriptor: STDERR_FILENO) }

    var isTerminal: Bool { isatty(descriptor) == 1 }

    var isPipe: Bool {
        var status = stat()
        return fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO
    }

    /// Writes all of `bytes` (`DescriptorWrite`); false when the file
    /// refused them (a closed pipe, a full disk).
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        (try? DescriptorWrite.all(bytes, to: descriptor)) != nil
    }
}
