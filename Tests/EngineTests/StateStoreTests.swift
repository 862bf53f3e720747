import BeaconCore
import BeaconService
import Foundation
import Testing

@Suite struct StateStoreTests {
    static func directory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    @Test func roundTripAndNoTemporaryFileLeft() throws {
        let store = StateStore(directory: try Self.directory())
        #expect(store.load() == .missing)
        let state = EngineState(regions: ["cafe": .inside, "bar": .outside], preferredVenue: "counter-2")
        try store.save(state)
        #expect(store.load() == .loaded(state))
        #expect(!FileManager.default.fileExists(atPath: store.path + ".tmp"))
    }

    /// A state file that is no regular file, or far too large, is not read
    /// (a FIFO would block the start, a huge file exhaust memory) but
    /// reported, and replaced at the next save.
    @Test func aFileThatCannotBeStateIsNotReadButReplaced() throws {
        let store = StateStore(directory: try Self.directory())
        #expect(FileManager.default.createFile(atPath: store.path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: store.path))
        try handle.truncate(atOffset: UInt64(16 << 20) + 1)  // sparse
        try handle.close()
        #expect(store.load() == .unusable("cannot read \(store.path): larger than 16 MiB"))
        try FileManager.default.removeItem(atPath: store.path)
        #expect(mkfifo(store.path, 0o600) == 0)
        #expect(store.load() == .unusable("cannot read \(store.path): not a regular file"))
        try FileManager.default.removeItem(atPath: store.path)
        try store.save(EngineState(preferredVenue: "x"))
        #expect(store.load() == .loaded(EngineState(preferredVenue: "x")))
    }

    @Test func aTruncatedFileIsReportedAndReplaced() throws {
        let store = StateStore(directory: try Self.directory())
        try store.save(EngineState(regions: ["cafe": .inside]))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: store.path))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: store.path))
        guard case .unusable(let reason) = store.load() else {
            Issue.record("a truncated file was not reported")
            return
        }
        #expect(reason.contains("corrupt"))
        try store.save(EngineState(preferredVenue: "x"))
        #expect(store.load() == .loaded(EngineState(preferredVenue: "x")))
    }
}
