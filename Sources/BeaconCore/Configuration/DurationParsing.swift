extension Duration {
    /// Parses `500ms`, `10s`, `1.5s`, `2m`, `1h` (a number and a unit).
    /// Returns `nil` for anything else, including negative durations.
    public init?(parsing text: some StringProtocol) {
        let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for unit in units where text.hasSuffix(unit.suffix) {
            let number = text.dropLast(unit.suffix.count)
            guard !number.isEmpty, number.first != "-", number.first != "+",
                let value = Double(String(number)), value.isFinite, value >= 0
            else { return nil }
            let milliseconds = (value * unit.seconds * 1000).rounded()
            guard milliseconds < 1e15 else { return nil }
            self = .milliseconds(Int64(milliseconds))
            return
        }
        return nil
    }

    /// Seconds to a tenth, for the log: "12.0 s".
    public var tenthsText: String {
        seconds.decimals(1) + " s"
    }

    /// The shortest of `500ms`, `10s`, `2m` that says this duration exactly.
    public var configurationText: String {
        let milliseconds = microseconds / 1000
        if milliseconds % 60_000 == 0, milliseconds != 0 { return "\(milliseconds / 60_000)m" }
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000)s" }
        return "\(milliseconds)ms"
    }
}
