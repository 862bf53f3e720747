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
