/// Where the listener is at any moment: walking legs and pauses, from time zero.
public struct Trajectory: Hashable, Sendable {
    public struct Segment: Hashable, Sendable {
        public var start: Duration
        public var end: Duration
        public var from: Position
        public var to: Position
        /// The index of the stop being waited at, for pauses; `nil` while walking.
        public var stop: Int?
    }

    public let segments: [Segment]

    public init(start: Position, speed: Double, stops: [Scenario.Stop]) {
        var segments: [Segment] = []
        var time: Duration = .zero
        var here = start
        for (index, stop) in stops.enumerated() {
            let walk = Duration.milliseconds(Int64((here.distance(to: stop.destination) / max(speed, 0.05) * 1000).rounded()))
            if walk > .zero {
                segments.append(Segment(start: time, end: time + walk, from: here, to: stop.destination, stop: nil))
                time += walk
            }
            here = stop.destination
            segments.append(Segment(start: time, end: time + stop.pause, from: here, to: here, stop: index))
            time += stop.pause
        }
        self.segments = segments
    }

    public var duration: Duration { segments.last?.end ?? .zero }

    public func segment(at time: Duration) -> Segment? {
        segments.first { time >= $0.start && time < $0.end } ?? segments.last
    }

    public func position(at time: Duration) -> Position {
        guard let segment = segment(at: time) else { return .init(x: 0, y: 0) }
        let length = (segment.end - segment.start).seconds
        let fraction = length > 0 ? min(1, max(0, (time - segment.start).seconds / length)) : 1
        return segment.from.interpolated(to: segment.to, fraction: fraction)
    }
}
