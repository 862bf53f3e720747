/// A named, typed argument of a method or signal.
public struct APIArgument: Sendable, Hashable {
    public var name: String
    public var type: APIType

    public init(_ name: String, _ type: (some APIValue).Type) {
        self.init(name, type.apiType)
    }

    public init(_ name: String, _ type: APIType) {
        self.name = name
        self.type = type
    }
}

/// A method: its arguments, its answer, what it does and how it can fail.
public struct APIMethod: Sendable, Hashable {
    public var name: String
    public var inputs: [APIArgument]
    public var outputs: [APIArgument]
    public var doc: String
    public var errors: [BeacondError.Code]

    public init(_ name: String, inputs: [APIArgument] = [], outputs: [APIArgument] = [], errors: [BeacondError.Code] = [], doc: String) {
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.errors = errors
        self.doc = doc
    }
}

/// A read-only property.
public struct APIProperty: Sendable, Hashable {
    public var name: String
    public var type: APIType
    public var doc: String

    public init(_ name: String, _ type: (some APIValue).Type, doc: String) {
        self.name = name
        self.type = type.apiType
        self.doc = doc
    }
}

/// A signal and its arguments.
public struct APISignal: Sendable, Hashable {
    public var name: String
    public var arguments: [APIArgument]
    public var doc: String

    public init(_ name: String, _ arguments: [APIArgument], doc: String) {
        self.name = name
        self.arguments = arguments
        self.doc = doc
    }
}
