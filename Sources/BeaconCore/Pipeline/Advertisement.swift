/// An advertising report as a source delivers it, with the time it was received.
public struct Advertisement: Sendable {
    public var time: Timestamp
    public var report: AdvertisingReport

    public init(time: Timestamp, report: AdvertisingReport) {
        self.time = time
        self.report = report
    }
}
