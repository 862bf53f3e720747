import BeaconCore
import Testing

@testable import BeaconSources

/// What a replay skipped is said in one wording by the service's end line and
/// `beacond scan` (the service said "unreadable lines" of a capture's packets,
/// and left out why: the audit of 2026-11-27).
@Suite struct ReplaySummaryTests {
    @Test func skippedPacketsAreSaidWithTheLastReason() {
        var summary = ReplaySource.Summary(format: .pcapng(linkTypes: [256]))
        #expect(summary.skipped == nil)
        summary.skippedRecords = 3
        summary.lastSkipReason = "ADV_IND with a bad CRC"
        #expect(summary.skipped == "skipped 3 unreadable packets or lines (last: ADV_IND with a bad CRC)")
    }
}
