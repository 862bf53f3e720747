/// A D-Bus value with its type, for the types D-Bus APIs use: basic types,
/// arrays, dictionaries, structs and variants.
public indirect enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// Elements all of `elementSignature` (kept so an empty array still has a type).
    case array(elementSignature: String, [DBusValue])
    /// `a{KV}`: entries in order, keys of a basic type.
    case dictionary(keySignature: String, valueSignature: String, [DictionaryEntry])
    case structure([DBusValue])
    case variant(DBusValue)

    public struct DictionaryEntry: Sendable, Hashable {
        public var key: DBusValue
        public var value: DBusValue

        public init(_ key: DBusValue, _ value: DBusValue) {
            self.key = key
            self.value = value
        }
    }

    /// The value's D-Bus type signature, e.g. `a{sv}`.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    /// `a{sv}` from string keys, each value wrapped in a variant: the shape of
    /// properties and option dictionaries.
    public static func vardict(_ entries: [(String, DBusValue)]) -> DBusValue {
        .dictionary(keySignature: "s", valueSignature: "v", entries.map { DictionaryEntry(.string($0.0), .variant($0.1)) })
    }

    /// The zero of a basic type (`""` for strings, `/` for object paths), for
    /// a getter that must answer with the declared type but has no value.
    public static func zero(signature: String) -> DBusValue {
        switch signature {
        case "y": .byte(0)
        case "b": .boolean(false)
        case "n": .int16(0)
        case "q": .uint16(0)
        case "i": .int32(0)
        case "u": .uint32(0)
        case "x": .int64(0)
        case "t": .uint64(0)
        case "d": .double(0)
        case "o": .objectPath("/")
        case "g": .signature("")
        case let array where array.hasPrefix("a"): .array(elementSignature: String(array.dropFirst()), [])
        default: .string("")
        }
    }

    // MARK: Reading values back

    public var string: String? {
        switch self {
        case .string(let s), .objectPath(let s), .signature(let s): s
        case .variant(let inner): inner.string
        default: nil
        }
    }

    public var bool: Bool? {
        switch self {
        case .boolean(let b): b
        case .variant(let inner): inner.bool
        default: nil
        }
    }

    /// Any integer type, widened; `nil` for other types or values that do not fit.
    public var integer: Int64? {
        switch self {
        case .byte(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .uint16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .int64(let v): v
        case .uint64(let v): Int64(exactly: v)
        case .variant(let inner): inner.integer
        default: nil
        }
    }

    public var double: Double? {
        switch self {
        case .double(let v): v
        case .variant(let inner): inner.double
        default: integer.map(Double.init)
        }
    }

    /// The entries of an `a{s…}` dictionary by key (variants kept as they are).
    public var stringKeyedEntries: [String: DBusValue]? {
        guard case .dictionary(_, _, let entries) = self else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard let key = entry.key.string else { return nil }
            result[key] = entry.value
        }
        return result
    }

    public var arrayElements: [DBusValue]? {
        switch self {
        case .array(_, let elements): elements
        case .variant(let inner): inner.arrayElements
        default: nil
        }
    }

    /// The value inside any number of variants.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }
}
