/// One node of a composed YAML document: what `NodeReader` reads of it.
///
/// An alias is the node its anchor names, so the reader never sees one.
struct YAMLNode: Sendable {
    enum Content: Sendable {
        case scalar(String)
        case sequence([YAMLNode])
        /// In the file's order, duplicates already refused.
        case mapping([(key: YAMLNode, value: YAMLNode)])
    }

    var content: Content
    /// 1-based, where the node starts: the line of every message about it.
    var line: Int
    /// Nodes in this subtree with every alias expanded: what walking it costs.
    var size: Int

    var scalar: String? {
        if case .scalar(let text) = content { text } else { nil }
    }

    var sequence: [YAMLNode]? {
        if case .sequence(let items) = content { items } else { nil }
    }

    var mapping: [(key: YAMLNode, value: YAMLNode)]? {
        if case .mapping(let pairs) = content { pairs } else { nil }
    }
}
