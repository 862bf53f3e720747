/// Where advertisements come from, as written on the command line or in
/// `beacons.yaml`: `auto`, `hci[:hciN]`, `bluez[:hciN]`, `replay:FILE[@SPEED]`,
/// `simulate[:SCENARIO]`.
public enum SourceSpec: Hashable, Sendable, CustomStringConvertible {
    case auto
    case hci(adapter: String?)
    case bluez(adapter: String?)
    case replay(path: String, speed: ReplaySpeed)
    case simulate(scenario: String?)

    /// How fast a recording is replayed.
    public enum ReplaySpeed: Hashable, Sendable, CustomStringConvertible {
        /// SPEED× the recording's own pace (1 = real time).
        case factor(Double)
        /// As fast as possible.
        case max

        /// The factors a replay may run at: a thousandth of real time (a
        /// second of recording in about 17 minutes) to 100,000× (a day in
        /// under a second). Beyond them the pacing arithmetic stops meaning
        /// anything; `max` is there for "as fast as possible".
        public static let factors: ClosedRange<Double> = 0.001...100_000

        public var description: String {
            switch self {
            case .max: "max"
            case .factor(let f): f == f.rounded() && f < 1e15 ? String(Int(f)) : String(f)
            }
        }
    }

    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public var text: String
        public var reason: String
        public var description: String {
            "invalid source '\(text)': \(reason); expected auto, hci[:hciN], bluez[:hciN], "
                + "replay:FILE[@SPEED|@max] or simulate[:SCENARIO]"
        }
    }

    public init(parsing text: String) throws(ParseError) {
        let (kind, argument) = Self.split(text)
        switch kind {
        case "auto":
            guard argument == nil else { throw ParseError(text: text, reason: "auto takes no argument") }
            self = .auto
        case "hci":
            self = .hci(adapter: try Self.adapter(argument, text))
        case "bluez":
            self = .bluez(adapter: try Self.adapter(argument, text))
        case "replay":
            guard let argument, !argument.isEmpty else { throw ParseError(text: text, reason: "replay needs a FILE") }
            self = try Self.replay(argument, text)
        case "simulate":
            if let argument, argument.isEmpty { throw ParseError(text: text, reason: "empty scenario name") }
            self = .simulate(scenario: argument)
        default:
            throw ParseError(text: text, reason: "unknown source '\(kind)'")
        }
    }

    private static func split(_ text: String) -> (String, String?) {
        guard let colon = text.firstIndex(of: ":") else { return (text, nil) }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    private static func adapter(_ argument: String?, _ text: String) throws(ParseError) -> String? {
        guard let argument else { return nil }
        let digits = argument.dropFirst(3)
        guard argument.hasPrefix("hci"), !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
            Int(digits) != nil
        else {
            throw ParseError(text: text, reason: "adapter must look like hci0")
        }
        return argument
    }

    /// `FILE@SPEED`: the last `@` starts a speed only if what follows is one,
    /// so a file name with an `@` in it still works.
    private static func replay(_ argument: String, _ text: String) throws(ParseError) -> SourceSpec {
        guard let at = argument.lastIndex(of: "@") else { return .replay(path: argument, speed: .factor(1)) }
        let path = String(argument[..<at])
        let speedText = argument[argument.index(after: at)...]
        if speedText == "max" { return .replay(path: path, speed: .max) }
        let number = Double(speedText.hasSuffix("x") ? speedText.dropLast() : speedText)
        guard let number else { return .replay(path: argument, speed: .factor(1)) }
        guard ReplaySpeed.factors.contains(number), !path.isEmpty else {
            throw ParseError(
                text: text,
                reason: "replay speed must be a number from \(ReplaySpeed.factors.lowerBound) to \(Int(ReplaySpeed.factors.upperBound)) (e.g. @4, @0.5), or max")
        }
        return .replay(path: path, speed: .factor(number))
    }

    /// The Bluetooth adapter it names (`hci0`), if any.
    public var adapter: String? {
        switch self {
        case .hci(let adapter), .bluez(let adapter): adapter
        case .auto, .replay, .simulate: nil
        }
    }

    public var description: String {
        switch self {
        case .auto: "auto"
        case .hci(let adapter): adapter.map { "hci:\($0)" } ?? "hci"
        case .bluez(let adapter): adapter.map { "bluez:\($0)" } ?? "bluez"
        // A path with an "@" keeps its speed written out, so the text parses back the same.
        case .replay(let path, .factor(1)) where !path.contains("@"): "replay:\(path)"
        case .replay(let path, let speed): "replay:\(path)@\(speed)"
        case .simulate(let scenario): scenario.map { "simulate:\($0)" } ?? "simulate"
        }
    }
}
