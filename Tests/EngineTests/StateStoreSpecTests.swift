import BeaconCore
import BeaconService
import Foundation
import Testing

/// SPEC section 4: region states and the preferred venue survive a restart, in `state.json`.
@Suite struct StateStoreSpecTests {
    static let state = EngineState(regions: ["cafe": .inside, "bar": .outside, "kiosk": .unknown], preferredVenue: "counter-2")

    /// A fresh directory for one test, removed after it.
    static func withDirectory(_ body: (String) throws -> Void) throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("engine-tests-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        try body(url.path)
    }

    @Test func aSavedStateLoadsBackInANewStore() throws {
        try Self.withDirectory { directory in
            #expect(StateStore(directory: directory).load() == .missing)
            try StateStore(directory: directory).save(Self.state)
            #expect(StateStore(directory: directory).load() == .loaded(Self.state))
        }
    }

    @Test(arguments: ["truncated", "empty", "not JSON", "wrong state"])
    func aCorruptFileIsUnusableWithAMessageAndTheNextSaveReplacesIt(damage: String) throws {
        try Self.withDirectory { directory in
            let store = StateStore(directory: directory)
            try store.save(Self.state)
            let url = URL(fileURLWithPath: store.path)
            let good = try Data(contentsOf: url)
            let bad: Data =
                switch damage {
                case "truncated": good.prefix(good.count / 2)
                case "empty": Data()
                case "not JSON": Data([0x00, 0xFF, 0x13, 0x37])
                default: Data(#"{"regions": {"cafe": "sideways"}}"#.utf8)
                }
            try bad.write(to: url)
            guard case .unusable(let message) = store.load() else {
                Issue.record("\(damage) state.json was not reported unusable")
                return
            }
            #expect(message.contains(store.path))
            let replacement = EngineState(regions: ["cafe": .outside])
            try store.save(replacement)
            #expect(store.load() == .loaded(replacement))
        }
    }

    @Test func savingLeavesNoTemporaryFileBehind() throws {
        try Self.withDirectory { directory in
            let store = StateStore(directory: directory)
            // Even one left over from an interrupted earlier save.
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data("half a file".utf8).write(to: URL(fileURLWithPath: store.path + ".tmp"))
            try store.save(Self.state)
            try store.save(EngineState())
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["state.json"])
            #expect(store.load() == .loaded(EngineState()))
        }
    }
}
