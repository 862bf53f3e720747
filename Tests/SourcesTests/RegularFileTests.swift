import BeaconFiles
import Foundation
import Testing

/// Files named on a command line or in a configuration are read whole and
/// bounded: what is no regular file is refused unread, and no more than one
/// byte past the limit is ever read.
@Suite struct RegularFileTests {
    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func aFileIsReadWholeUpToTheLimitAndRefusedPastIt() throws {
        let directory = try Self.directory()
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
    }

    /// A sparse file claims 1 GiB; only a byte past the 1 MiB limit is read.
    @Test func aHugeFileIsRefusedAtTheLimit() throws {
        let directory = try Self.directory()
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
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: RegularFile.ReadError.notRegular) { try RegularFile.read(fifo, limit: 1 << 20) }
        #expect(throws: RegularFile.ReadError.notRegular) { try RegularFile.read("/dev/zero", limit: 1 << 20) }
        #expect(throws: RegularFile.ReadError.directory) { try RegularFile.read(directory.path, limit: 1 << 20) }
        #expect(throws: RegularFile.ReadError.noSuchFile) { try RegularFile.read(directory.appendingPathComponent("none").path, limit: 1) }
    }
}
