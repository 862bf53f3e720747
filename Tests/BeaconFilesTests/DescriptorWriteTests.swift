import BeaconFiles
import BeaconTestSupport
import Foundation
import Glibc
import Testing

/// One loop writes a whole buffer: it goes on after a short write, and a
/// failure says how much was taken and its own errno.
@Suite struct DescriptorWriteTests {
    @Test func aWholeBufferReachesTheFile() throws {
        let directory = try TestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("f").path
        let bytes = (0..<200_000).map { UInt8($0 % 251) }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        try #require(descriptor >= 0)
        #expect(throws: Never.self) { try DescriptorWrite.all(bytes, to: descriptor) }
        close(descriptor)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(bytes))
    }

    /// A pipe that nobody reads, not blocking: the first write is short (the
    /// pipe's capacity), the next fails with EAGAIN, and the failure counts
    /// what the first took.
    @Test func aShortWriteGoesOnAndAFailureSaysWhatWasTaken() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        let capacity = Int(fcntl(ends[1], 1032))  // F_GETPIPE_SZ (F_LINUX_SPECIFIC_BASE + 8), not imported
        try #require(capacity > 0)
        let failure = #expect(throws: DescriptorWrite.Failure.self) { try DescriptorWrite.all([UInt8](repeating: 7, count: capacity * 4), to: ends[1]) }
        #expect(failure?.written == capacity)
        #expect(failure?.code == EAGAIN)
    }

    @Test func aFullDiskSaysSo() throws {
        let descriptor = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let failure = #expect(throws: DescriptorWrite.Failure.self) { try DescriptorWrite.all([UInt8](repeating: 1, count: 10), to: descriptor) }
        #expect(failure?.written == 0)
        #expect(failure?.code == ENOSPC)
        #expect(failure?.reason == "No space left on device")
    }
}
