/// Text that is not one YAML document beacond can read: libyaml's problem, or
/// a limit the composer keeps, with the line it was found on.
struct YAMLError: Error, Sendable {
    /// 1-based; `nil` when libyaml gives no position.
    var line: Int?
    var message: String
}
