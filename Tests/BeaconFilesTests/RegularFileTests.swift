import BeaconFiles
import BeaconTestSupport
import Foundation
import Testing

/// Files named on a command line or in a configuration are read whole and
/// bounded: what is no regular file is refused unread, and no more than one
/// byte past the limit is ever read.
@Suite struct RegularFileTests {
    @Test func aFileIsReadWholeUpToTheLimitAndRefusedPastIt() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("f").path
        let bytes = (0..<5_000).map { UInt8($0 % 251) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(try RegularFile.read(path, limit: 5_000) == bytes)
        #expect(throws: RegularFile.ReadError.tooLarge(limit: 4_999)) { try RegularFile.read(path, limit: 4_999) }
        #expect(try RegularFile.read(path, limit: 1 << 20) == bytes, "a limit far above the file")
        let empty = directory.appendingPathComponent("empty").path
        #expect(FileManager.default.createFile(atPath: empty, contents: nil))
        #expect(try RegularFile.read(empty, limit: 0) == [])
        #expect(RegularFile.ReadError.tooLarge(limit: 8 << 20).description == "larger than 8 MiB")
        #expect(RegularFile.ReadError.tooLarge(limit: 1 << 10).description == "larger than 1 KiB")
        #expect(RegularFile.ReadError.tooLarge(limit: 0).description == "larger than 0 bytes")
    }

    /// A sparse file claims 1 GiB; only a byte past the 1 MiB limit is read.
    @Test func aHugeFileIsRefusedAtTheLimit() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sparse").path
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 1 << 30)
        try handle.close()
        #expect(throws: RegularFile.ReadError.tooLarge(limit: 1 << 20)) { try RegularFile.read(path, limit: 1 << 20) }
    }

    /// A FIFO with no writer would block a reader for good, and a device
    /// may never end: both are refused before a byte is read.
    @Test func whatIsNoRegularFileIsRefusedUnread() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: RegularFile.ReadError.notRegular) { try RegularFile.read(fifo, limit: 1 << 20) }
        #expect(throws: RegularFile.ReadError.notRegular) { try RegularFile.read("/dev/zero", limit: 1 << 20) }
        #expect(throws: RegularFile.ReadError.directory) { try RegularFile.read(directory.path, limit: 1 << 20) }
        #expect(throws: RegularFile.ReadError.noSuchFile) { try RegularFile.read(directory.appendingPathComponent("none").path, limit: 1) }
    }

    /// A file longer than fstat says (procfs reports 0 bytes): the buffer
    /// grows past the first read, and the limit still holds to the byte.
    @Test func aFileLongerThanItsReportedSizeIsReadAndBounded() throws {
        let path = "/proc/self/cmdline"
        let whole = try RegularFile.read(path, limit: 1 << 20)
        #expect(whole.count > 1, "the test runner has a name")
        #expect(whole.last == 0 && whole.contains(0))
        #expect(try RegularFile.read(path, limit: whole.count) == whole)
        #expect(throws: RegularFile.ReadError.tooLarge(limit: whole.count - 1)) { try RegularFile.read(path, limit: whole.count - 1) }
    }

    /// The system's reasons run on after a colon, as beacond's own do.
    @Test func aSystemReasonStartsInLowerCase() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("f").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        #expect(throws: RegularFile.ReadError.failed("not a directory")) { try RegularFile.read(file + "/below", limit: 1) }
    }
}
