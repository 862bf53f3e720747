import BeaconTestSupport
import Foundation
import Testing

/// Examples/KioskMenu, built with the package, against the simulated café:
/// it shows a counter's menu once beacond knows the nearest venue.
@Suite struct KioskMenuTests {
    @Test func theKioskShowsTheMenuOfTheNearestCounter() async throws {
        let service = try await ServiceBusTests.Service()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestSupport.product("kiosk-menu"))
        process.arguments = [service.bus.address]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer { process.killAndWait() }
        var lines: [String] = []
        // Lines already in the pipe are read even past the deadline (`line`):
        // a loaded machine may deliver the header just before it, the menu just after.
        let deadline = DispatchTime.now() + 60
        while let line = await output.fileHandleForReading.line(deadline: deadline) {
            lines.append(line)
            if lines.count >= 2, lines[lines.count - 2].hasPrefix("== "), !lines[lines.count - 2].contains("Welcome") { break }
        }
        let header = try #require(lines.last { $0.hasPrefix("== ") && !$0.contains("Welcome") }, "no menu shown: \(lines)")
        #expect(
            ["Caffè Macs — Counter 1", "Caffè Macs — Counter 2", "咖啡小站", "Kaffeehaus am Markt — Theke"].contains { header == "== \($0) ==" },
            "\(header)")
        let item = try #require(lines.last, "\(lines)")
        #expect(item.hasPrefix("  ") && item.count > 4, "\(lines)")
    }
}
