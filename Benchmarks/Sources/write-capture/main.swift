import BenchmarkInputs
import FoundationEssentials
import Glibc

// write-capture FILE [EVENTS]: the replay benchmarks' traffic (a busy room,
// half of it iBeacons) as a btsnoop capture of EVENTS HCI events (default
// 600,000), for timing `beacond scan --source replay:FILE@max` beside
// `btmon -r FILE` on the same bytes (docs/benchmarks.md).
let arguments = CommandLine.arguments.dropFirst()
guard let path = arguments.first, let events = Int(arguments.dropFirst().first ?? "600000"), events > 0 else {
    print("usage: write-capture FILE [EVENTS]")
    exit(2)
}
try Data(Inputs.capture(Inputs.capturedReports(events))).write(to: URL(fileURLWithPath: path))
print("wrote \(events) HCI events to \(path)")
