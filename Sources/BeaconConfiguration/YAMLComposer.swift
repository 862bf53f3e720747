import CLibYAML

/// Composes libyaml's parse events into one document's tree, in Swift so that
/// hostile text costs bounded work: nesting is refused as it opens, and
/// aliases are counted as often as they are used (a "billion laughs" file is
/// refused long before anything walks it). Duplicate keys are refused too,
/// and so are tags: beacond gives them no meaning, and taking
/// `username: !secret mqtt_user` (Home Assistant's idiom) for the text
/// `mqtt_user` fails far from the line that caused it (the broker refusing
/// the login).
///
/// libyaml does the YAML 1.1 syntax, UTF-8 (and UTF-16 with a BOM) checking
/// and positions; this type only builds nodes.
struct YAMLComposer: ~Copyable {
    /// Far deeper than any configuration (about 6) or scenario nests.
    static let maximumDepth = 64
    /// Nodes with aliases expanded; a scenario of 1,000 beacons has about 20,000.
    static let maximumNodes = 1_000_000

    /// The only document in `text`, or `nil` when there is none (no text,
    /// only comments).
    static func compose(_ text: [UInt8]) throws(YAMLError) -> YAMLNode? {
        // libyaml asserts on a null input; an empty file has no document anyway.
        if text.isEmpty { return nil }
        let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
        defer { parser.deallocate() }
        guard yaml_parser_initialize(parser) == 1 else { throw YAMLError(line: nil, message: "YAML: out of memory") }
        defer { yaml_parser_delete(parser) }
        let result: Result<YAMLNode?, YAMLError> = text.withUnsafeBufferPointer { buffer in
            yaml_parser_set_input_string(parser, buffer.baseAddress, buffer.count)
            var composer = YAMLComposer(parser: parser, text: buffer)
            return Result { () throws(YAMLError) in try composer.document() }
        }
        return try result.get()
    }

    private let parser: UnsafeMutablePointer<yaml_parser_t>
    private let text: UnsafeBufferPointer<UInt8>
    private var anchors: [String: YAMLNode] = [:]
    private var nodes = 0

    private init(parser: UnsafeMutablePointer<yaml_parser_t>, text: UnsafeBufferPointer<UInt8>) {
        self.parser = parser
        self.text = text
    }

    private mutating func document() throws(YAMLError) -> YAMLNode? {
        _ = try next()  // the stream's start
        let start = try next()
        guard case .documentStart = start.kind else { return nil }
        let root = try node(try next(), depth: 1)
        _ = try next()  // the document's end
        let after = try next()
        guard case .streamEnd = after.kind else {
            throw YAMLError(line: after.line, message: "YAML syntax: a second document; expected one ('---' starts another)")
        }
        return root
    }

    private mutating func node(_ event: Event, depth: Int) throws(YAMLError) -> YAMLNode {
        guard depth <= Self.maximumDepth else {
            throw YAMLError(line: event.line, message: "YAML: nested more than \(Self.maximumDepth) levels deep")
        }
        let node: YAMLNode
        switch event.kind {
        case .alias(let anchor):
            guard let target = anchors[anchor] else {
                throw YAMLError(line: event.line, message: "YAML syntax: found undefined alias '\(anchor)'")
            }
            try count(target.size, at: event.line)
            return target
        case .scalar(let value, _):
            try count(1, at: event.line)
            node = YAMLNode(content: .scalar(value), line: event.line, size: 1)
        case .sequenceStart:
            try count(1, at: event.line)
            var items: [YAMLNode] = []
            var size = 1
            while true {
                let next = try next()
                if case .sequenceEnd = next.kind { break }
                let item = try self.node(next, depth: depth + 1)
                size += item.size
                items.append(item)
            }
            node = YAMLNode(content: .sequence(items), line: event.line, size: size)
        case .mappingStart:
            try count(1, at: event.line)
            var pairs: [(key: YAMLNode, value: YAMLNode)] = []
            var size = 1
            var seen: Set<String> = []
            var duplicated: Set<String> = []
            var duplicates: [(key: String, line: Int)] = []
            while true {
                let next = try next()
                if case .mappingEnd = next.kind { break }
                let key = try self.node(next, depth: depth + 1)
                let value = try self.node(try self.next(), depth: depth + 1)
                if let name = key.scalar, !seen.insert(name).inserted, duplicated.insert(name).inserted {
                    duplicates.append((name, key.line))
                }
                size += key.size + value.size
                pairs.append((key, value))
            }
            if let first = duplicates.first {
                let named = 10
                let names = duplicates.prefix(named).map(\.key).joined(separator: ", ")
                    + (duplicates.count > named ? " and \(duplicates.count - named) more" : "")
                throw YAMLError(line: first.line, message: "duplicate key \(names) in one mapping")
            }
            node = YAMLNode(content: .mapping(pairs), line: event.line, size: size)
        default:
            throw YAMLError(line: event.line, message: "YAML syntax: unexpected \(event.kind)")
        }
        if let anchor = event.kind.anchor { anchors[anchor] = node }
        return node
    }

    private mutating func count(_ more: Int, at line: Int) throws(YAMLError) {
        nodes += more
        guard nodes <= Self.maximumNodes else {
            throw YAMLError(
                line: line,
                message: "YAML: more than \(Self.maximumNodes) nodes, counting each alias as often as it is used")
        }
    }

    // MARK: libyaml's events

    private struct Event {
        var kind: Kind
        var line: Int
    }

    private enum Kind {
        case streamStart, streamEnd, documentStart, documentEnd
        case alias(String)
        case scalar(String, anchor: String?)
        case sequenceStart(anchor: String?), sequenceEnd
        case mappingStart(anchor: String?), mappingEnd

        var anchor: String? {
            switch self {
            case .scalar(_, let anchor), .sequenceStart(let anchor), .mappingStart(let anchor): anchor
            default: nil
            }
        }
    }

    /// The next event, copied out of libyaml's and that one freed.
    private func next() throws(YAMLError) -> Event {
        var event = yaml_event_t()
        guard yaml_parser_parse(parser, &event) == 1 else { throw problem() }
        defer { yaml_event_delete(&event) }
        let line = Int(event.start_mark.line) + 1
        let string = { (pointer: UnsafeMutablePointer<yaml_char_t>?) in pointer.map { String(cString: $0) } }
        let tag: UnsafeMutablePointer<yaml_char_t>? =
            switch event.type {
            case YAML_SCALAR_EVENT: event.data.scalar.tag
            case YAML_SEQUENCE_START_EVENT: event.data.sequence_start.tag
            case YAML_MAPPING_START_EVENT: event.data.mapping_start.tag
            default: nil
            }
        if let tag = string(tag) {
            throw YAMLError(line: line, message: Self.unreadTag(tag))
        }
        switch event.type {
        case YAML_STREAM_START_EVENT: return Event(kind: .streamStart, line: line)
        case YAML_DOCUMENT_START_EVENT: return Event(kind: .documentStart, line: line)
        case YAML_DOCUMENT_END_EVENT: return Event(kind: .documentEnd, line: line)
        case YAML_ALIAS_EVENT: return Event(kind: .alias(string(event.data.alias.anchor) ?? ""), line: line)
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            let value = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
            return Event(kind: .scalar(value, anchor: string(scalar.anchor)), line: line)
        case YAML_SEQUENCE_START_EVENT: return Event(kind: .sequenceStart(anchor: string(event.data.sequence_start.anchor)), line: line)
        case YAML_SEQUENCE_END_EVENT: return Event(kind: .sequenceEnd, line: line)
        case YAML_MAPPING_START_EVENT: return Event(kind: .mappingStart(anchor: string(event.data.mapping_start.anchor)), line: line)
        case YAML_MAPPING_END_EVENT: return Event(kind: .mappingEnd, line: line)
        default: return Event(kind: .streamEnd, line: line)
        }
    }

    /// What a tag is told: the file must say the value itself.
    static func unreadTag(_ tag: String) -> String {
        let shown = tag.hasPrefix("tag:yaml.org,2002:") ? "!!" + tag.dropFirst("tag:yaml.org,2002:".count) : tag
        let idiom = shown == "!secret" ? " (Home Assistant's secrets.yaml is not read)" : ""
        return "YAML tag \(shown.prefix(64)) is not read\(idiom); write the value itself, untagged"
    }

    /// libyaml's reason for stopping, at its line: the reader's (bad UTF-8,
    /// control characters) gives a byte offset, the scanner's and parser's a mark.
    private func problem() -> YAMLError {
        let state = parser.pointee
        let problem = state.problem.map { String(cString: $0) } ?? "cannot parse"
        switch state.error {
        case YAML_READER_ERROR:
            let offset = min(state.problem_offset, text.count)
            let line = text[..<offset].reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            return YAMLError(line: line, message: "YAML: \(problem) at byte offset \(offset)")
        case YAML_SCANNER_ERROR, YAML_PARSER_ERROR:
            return YAMLError(line: Int(state.problem_mark.line) + 1, message: "YAML syntax: \(problem)")
        default:
            return YAMLError(line: nil, message: "YAML: out of memory")
        }
    }
}
