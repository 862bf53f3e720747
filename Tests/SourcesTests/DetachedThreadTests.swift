import BeaconThreads
import Foundation
import Testing

/// The service's threads carry names, so `top -H` and gdb tell the HCI reader from libmosquitto's loop.
struct DetachedThreadTests {
    @Test func aThreadIsNamedAndTheNameKeepsTheKernelsFifteenBytes() async throws {
        let names = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[String], any Error>) in
            DetachedThread.start(name: "beacond-a-long-thread-name") {
                let own = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                // And as another thread sees it: in /proc/self/task, beside its siblings.
                let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
                let all = tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
                continuation.resume(returning: [own] + all)
            }
        }
        #expect(names.first == "beacond-a-long-\n")
        #expect(names.dropFirst().contains("beacond-a-long-\n"))
    }
}
