import BeacondAPI

/// The files made from the declaration, by their paths in the repository:
/// `dist/dbus/<interface>.xml` and `docs/api/<interface>.md`. `generate-api`
/// writes them; a test makes them in memory and fails on any difference.
public enum GeneratedFiles {
    public static var all: [(path: String, contents: String)] {
        Beacond.interfaces.flatMap { interface in
            [
                ("dist/dbus/\(IntrospectionFile.fileName(interface))", IntrospectionFile.xml(interface)),
                ("docs/api/\(APIReference.fileName(interface))", APIReference.markdown(interface)),
            ]
        }
    }
}
