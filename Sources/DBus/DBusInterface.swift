/// An interface an exported object implements, declared once: the same
/// declaration dispatches calls, serves properties and generates the
/// introspection XML, so they can never disagree.
public struct DBusInterface: Sendable {
    public var name: String
    public var methods: [Method]
    public var properties: [Property]
    public var signals: [Signal]

    public init(name: String, methods: [Method] = [], properties: [Property] = [], signals: [Signal] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    public struct Argument: Sendable, Hashable {
        public var name: String
        public var signature: String

        public init(_ name: String, _ signature: String) {
            self.name = name
            self.signature = signature
        }
    }

    public struct Method: Sendable {
        public var name: String
        public var inputs: [Argument]
        public var outputs: [Argument]
        /// Called on the connection's thread (in-memory bus: in its isolation):
        /// answer at once, which sends the reply with no hop, or keep the call
        /// and answer later from anywhere (a deferred reply).
        public var handler: @Sendable (DBusMethodCall) -> Void

        public init(
            _ name: String, inputs: [Argument] = [], outputs: [Argument] = [],
            handler: @escaping @Sendable (DBusMethodCall) -> Void
        ) {
            self.name = name
            self.inputs = inputs
            self.outputs = outputs
            self.handler = handler
        }

        public var inputSignature: String { inputs.map(\.signature).joined() }
    }

    public struct Property: Sendable {
        public var name: String
        public var signature: String
        /// Called on the connection's thread (Get, GetAll, GetManagedObjects,
        /// PropertiesChanged, InterfacesAdded): keep it quick, never waiting.
        public var get: @Sendable () -> DBusValue
        /// `nil` for read-only properties. Receives the value and the caller's
        /// bus name, on the connection's thread; a thrown error is the caller's answer.
        public var set: (@Sendable (DBusValue, String) throws(DBusError) -> Void)?

        public init(
            _ name: String, _ signature: String, get: @escaping @Sendable () -> DBusValue,
            set: (@Sendable (DBusValue, String) throws(DBusError) -> Void)? = nil
        ) {
            self.name = name
            self.signature = signature
            self.get = get
            self.set = set
        }
    }

    public struct Signal: Sendable, Hashable {
        public var name: String
        public var arguments: [Argument]

        public init(_ name: String, _ arguments: [Argument] = []) {
            self.name = name
            self.arguments = arguments
        }
    }

    /// The `<interface>` element of the introspection XML.
    public var introspectionXML: String {
        var xml = "  <interface name=\"\(name)\">\n"
        for method in methods {
            xml += "    <method name=\"\(method.name)\">\n"
            for argument in method.inputs {
                xml += "      <arg name=\"\(argument.name)\" type=\"\(escape(argument.signature))\" direction=\"in\"/>\n"
            }
            for argument in method.outputs {
                xml += "      <arg name=\"\(argument.name)\" type=\"\(escape(argument.signature))\" direction=\"out\"/>\n"
            }
            xml += "    </method>\n"
        }
        for signal in signals {
            xml += "    <signal name=\"\(signal.name)\">\n"
            for argument in signal.arguments {
                xml += "      <arg name=\"\(argument.name)\" type=\"\(escape(argument.signature))\"/>\n"
            }
            xml += "    </signal>\n"
        }
        for property in properties {
            let access = property.set == nil ? "read" : "readwrite"
            xml += "    <property name=\"\(property.name)\" type=\"\(escape(property.signature))\" access=\"\(access)\"/>\n"
        }
        return xml + "  </interface>\n"
    }

    private func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
