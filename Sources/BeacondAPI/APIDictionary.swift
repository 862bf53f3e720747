/// An `a{sv}` of the API with its keys declared: what a caller may send or
/// will receive, with each key's type and meaning.
public struct APIDictionary: Sendable, Hashable {
    public struct Key: Sendable, Hashable {
        public var name: String
        public var type: APIType
        public var doc: String

        public init(_ name: String, _ type: (some APIValue).Type, _ doc: String) {
            self.name = name
            self.type = type.apiType
            self.doc = doc
        }
    }

    /// What the dictionary is, for the reference ("the nearest venue").
    public var title: String
    public var keys: [Key]

    public init(_ title: String, keys: [Key]) {
        self.title = title
        self.keys = keys
    }

    /// Names given that this dictionary does not declare.
    public func unknownKeys(in names: some Sequence<String>) -> [String] {
        let declared = Set(keys.map(\.name))
        return Set(names).subtracting(declared).sorted()
    }

    /// Always `a{sv}`: keys are strings, values variants.
    public var signature: String { "a{sv}" }

    /// `uuid, major, minor`, for messages.
    public var keyList: String { keys.map(\.name).joined(separator: ", ") }
}
