/// Joins extended advertisements that the controller reported in pieces.
///
/// An extended advertisement longer than one HCI event holds (about 229
/// bytes) comes as a chain of reports from one advertiser and advertising
/// set, all but the last marked "incomplete, more to come", the last
/// "complete" — or "truncated" when the controller lost the rest (Core 5.4
/// Vol 4 Part E 7.7.65.13). Other advertisers' reports may come between the
/// pieces. Decoded one by one, each piece would be a malformed advertisement
/// and an iBeacon in the middle would be lost.
///
/// Bounded whatever the air sends: at most `mostChains` chains of at most
/// `mostBytes` each; a chain that cannot be finished is given up and said.
public struct ReportChains: Sendable, Equatable {
    /// Chains joined at once. A controller follows a few auxiliary chains at
    /// a time; more in flight means pieces were lost, and the oldest goes.
    public static let mostChains = 8
    /// The longest extended advertising data an advertiser can set (Core 5.4
    /// Vol 4 Part E 7.8.54, LE Set Extended Advertising Data: 1650 octets).
    public static let mostBytes = 1650
    /// The longest time between two pieces of one chain: an AuxPtr points at
    /// most 8191 units of 300 µs ahead (Core 5.4 Vol 6 Part B 2.3.4.5).
    public static let longestGap = Duration.microseconds(8191 * 300)

    /// One advertiser's pieces so far.
    private struct Chain: Sendable, Equatable {
        var addressType: UInt8
        var address: BluetoothAddress
        var advertisingSID: UInt8?
        /// The first piece's event type, without its data status.
        var type: AdvertisingReport.ExtendedType
        var data: [UInt8]
        var lastPiece: Timestamp

        func holds(_ report: AdvertisingReport) -> Bool {
            address == report.address && addressType == report.addressType && advertisingSID == report.advertisingSID
        }
    }

    private var chains: [Chain] = []
    /// Advertisements that will never be whole, and why the last one won't.
    public private(set) var abandoned = 0
    public private(set) var lastAbandoned: String?

    public init() {}

    /// Advertisements with pieces waiting for the rest.
    public var pending: Int { chains.count }

    /// Whether `report` is whole and completes no chain: nearly every report,
    /// which then skips `join` (and the copies of the report it makes).
    @inline(__always)
    public func passesWhole(_ report: AdvertisingReport) -> Bool {
        report.isLegacyPDU || (chains.isEmpty && report.dataStatus == .complete)
    }

    /// Takes one report; returns the whole advertisement it completes, if
    /// any: a report that is whole by itself, or a chain's pieces joined
    /// (the first piece's event type, the last one's RSSI and TX power).
    /// An advertisement that will never be whole is counted in `abandoned`.
    public mutating func join(_ report: AdvertisingReport, at time: Timestamp) -> AdvertisingReport? {
        guard !report.isLegacyPDU, case .extended(let type) = report.kind else { return report }
        if !chains.isEmpty { dropStale(at: time) }
        let index = chains.firstIndex { $0.holds(report) }
        switch report.dataStatus {
        case .complete:
            guard let index else { return report }
            let chain = chains.remove(at: index)
            guard chain.data.count + report.data.count <= Self.mostBytes else {
                abandon(Self.tooLong(report.address))
                return nil
            }
            var whole = report
            whole.kind = .extended(chain.type)
            whole.data = (chain.data + report.data)[...]
            return whole
        case .incomplete:
            if let index {
                guard chains[index].data.count + report.data.count <= Self.mostBytes else {
                    chains.remove(at: index)
                    abandon(Self.tooLong(report.address))
                    return nil
                }
                chains[index].data.append(contentsOf: report.data)
                chains[index].lastPiece = time
            } else {
                if chains.count == Self.mostChains {
                    let oldest = chains.removeFirst()
                    abandon("\(oldest.address): extended advertisement left unfinished: more than \(Self.mostChains) advertisers' pieces at once")
                }
                chains.append(Chain(
                    addressType: report.addressType, address: report.address, advertisingSID: report.advertisingSID,
                    type: type.withoutDataStatus,
                    data: Array(report.data), lastPiece: time))
            }
            return nil
        case .truncated:
            let received = (index.map { chains.remove(at: $0).data.count } ?? 0) + report.data.count
            abandon("\(report.address): extended advertisement cut short by the controller after \(received) bytes")
            return nil
        case .reserved:
            if let index { chains.remove(at: index) }
            abandon("\(report.address): extended report with the reserved data status 3")
            return nil
        }
    }

    private static func tooLong(_ address: BluetoothAddress) -> String {
        "\(address): extended advertisement over \(mostBytes) bytes, more than an advertiser can send"
    }

    private mutating func abandon(_ reason: String) {
        abandoned += 1
        lastAbandoned = reason
    }

    /// Gives up chains whose next piece is overdue: it can no longer come.
    private mutating func dropStale(at time: Timestamp) {
        let stale = chains.filter { time - $0.lastPiece > Self.longestGap }
        guard !stale.isEmpty else { return }
        chains.removeAll { time - $0.lastPiece > Self.longestGap }
        for chain in stale {
            abandon("\(chain.address): extended advertisement left unfinished: no piece for over \((Double(Self.longestGap.microseconds) / 1e6).decimals(3)) s")
        }
    }
}
