/// The rule for region and venue ids, wherever they come from (`beacons.yaml`
/// or a D-Bus client): 1 to 64 ASCII letters, digits, '-' or '_', so an id is
/// also a valid D-Bus object path element and a safe log word.
public enum Identifier {
    public static let rule = "1 to 64 letters, digits, '-' or '_'"

    public static func isValid(_ text: String) -> Bool {
        (1...64).contains(text.unicodeScalars.count)
            && text.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
            }
    }
}
