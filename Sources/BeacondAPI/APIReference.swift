/// The reference of one interface in BlueZ's style (`doc/org.bluez.*.rst`):
/// service, interface, object path; every method with its signature, the
/// keys of every dictionary and "Possible errors"; properties; signals.
/// Generated, so it cannot drift from what the service does.
public enum APIReference {
    /// `docs/api/<interface>.md`.
    public static func fileName(_ interface: APIInterface) -> String { "\(interface.name).md" }

    public static func markdown(_ interface: APIInterface) -> String {
        var lines = [
            "<!-- Generated from Sources/BeacondAPI by `swift run generate-api`; do not edit. -->",
            "# \(interface.name)", "",
            "- Service: `\(Beacond.busName)`",
            "- Interface: `\(interface.name)`",
            "- Object path: `\(interface.objectPath)` — \(interface.summary)", "",
        ]
        if !interface.doc.isEmpty { lines += [interface.doc, ""] }
        if !interface.methods.isEmpty {
            lines += ["## Methods", ""]
            for method in interface.methods { lines += self.method(method) }
        }
        if !interface.properties.isEmpty {
            lines += ["## Properties", ""]
            for property in interface.properties {
                lines += ["### `\(property.type.signature) \(property.name)` [read-only]", "", property.doc, ""]
                lines += dictionary(property.type)
            }
        }
        if !interface.signals.isEmpty {
            lines += ["## Signals", ""]
            for signal in interface.signals {
                lines += ["### `\(signal.name)(\(arguments(signal.arguments)))`", "", signal.doc, ""]
                for argument in signal.arguments { lines += dictionary(argument.type, named: argument.name) }
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func method(_ method: APIMethod) -> [String] {
        let returns = method.outputs.isEmpty ? "void" : method.outputs.map(\.type.signature).joined(separator: ", ")
        var lines = ["### `\(returns) \(method.name)(\(arguments(method.inputs)))`", "", method.doc, ""]
        for argument in method.inputs + method.outputs { lines += dictionary(argument.type, named: argument.name) }
        if !method.errors.isEmpty {
            lines += ["Possible errors:", ""]
            lines += method.errors.map { "- `\($0.name)`: \($0.meaning)" }
            lines.append("")
        }
        return lines
    }

    private static func arguments(_ arguments: [APIArgument]) -> String {
        arguments.map { "\($0.type.signature) \($0.name)" }.joined(separator: ", ")
    }

    /// The keys of a declared dictionary, as a list.
    private static func dictionary(_ type: APIType, named name: String? = nil) -> [String] {
        guard let dictionary = type.dictionary else { return [] }
        let subject = if case .array = type { "Each element of `\(name ?? "value")`" } else { "`\(name ?? "value")`" }
        var lines = ["\(subject) (\(dictionary.title)) has the keys:", ""]
        lines += dictionary.keys.map { "- `\($0.name)` \($0.type.signature): \($0.doc)" }
        return lines + [""]
    }
}
