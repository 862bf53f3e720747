/// The type of an argument, property or dictionary value, from which its
/// D-Bus signature is derived (so no signature is ever typed by hand).
public indirect enum APIType: Sendable, Hashable {
    case boolean, int16, uint16, uint32, uint64, double, string, objectPath
    case array(APIType)
    /// `a{sv}` whose keys are declared, so the reference can list them.
    case dictionary(APIDictionary)

    public var signature: String {
        switch self {
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .uint32: "u"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .array(let element): "a" + element.signature
        case .dictionary(let dictionary): dictionary.signature
        }
    }

    /// The declared dictionary inside this type, if any (`aa{sv}` has one).
    public var dictionary: APIDictionary? {
        switch self {
        case .dictionary(let dictionary): dictionary
        case .array(let element): element.dictionary
        default: nil
        }
    }
}

/// A Swift type that stands for a D-Bus type in a declaration: `UInt32.self` is `u`.
public protocol APIValue {
    static var apiType: APIType { get }
}

extension Bool: APIValue { public static var apiType: APIType { .boolean } }
extension Int16: APIValue { public static var apiType: APIType { .int16 } }
extension UInt16: APIValue { public static var apiType: APIType { .uint16 } }
extension UInt32: APIValue { public static var apiType: APIType { .uint32 } }
extension UInt64: APIValue { public static var apiType: APIType { .uint64 } }
extension Double: APIValue { public static var apiType: APIType { .double } }
extension String: APIValue { public static var apiType: APIType { .string } }

/// A D-Bus object path, as a type of the declarations.
public struct ObjectPath: APIValue, Sendable, Hashable {
    public static var apiType: APIType { .objectPath }
    public var rawValue: String

    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }
}
