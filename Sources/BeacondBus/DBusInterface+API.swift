import BeacondAPI
import DBus

extension DBusInterface {
    /// An interface of org.beacond as the binding serves it: methods and
    /// signals as declared, each method answered by its handler (a method
    /// without one fails), each property read from `values` by name.
    ///
    /// - Parameters:
    ///   - leavingOut: properties this object does not have (a Region1 that takes any major).
    ///   - values: the object's current properties; `nil` once it has gone
    ///     (then each property answers the zero of its type).
    public init(
        _ api: APIInterface, leavingOut: Set<String> = [], handlers: [String: @Sendable (DBusMethodCall) -> Void] = [:],
        values: @escaping @Sendable () -> [(String, DBusValue)]? = { nil }
    ) {
        self.init(
            name: api.name,
            methods: api.methods.map { method in
                .init(
                    method.name, inputs: method.inputs.map(Argument.init), outputs: method.outputs.map(Argument.init),
                    handler: handlers[method.name] ?? { $0.fail(.failed("\(api.name).\(method.name) is not served here")) })
            },
            properties: api.properties.filter { !leavingOut.contains($0.name) }.map { property in
                let signature = property.type.signature
                return .init(property.name, signature) {
                    values()?.first { $0.0 == property.name }?.1 ?? DBusValue.zero(signature: signature)
                }
            },
            signals: api.signals.map { .init($0.name, $0.arguments.map(Argument.init)) })
    }
}

extension DBusInterface.Argument {
    init(_ argument: APIArgument) {
        self.init(argument.name, argument.type.signature)
    }
}
