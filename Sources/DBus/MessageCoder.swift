import CDBus

/// Reads and writes message arguments through libdbus's iterators.
///
/// libdbus's type constants are macros Swift does not import, so type codes
/// are spelled as the ASCII letters they are.
enum MessageCoder {
    static func code(_ letter: Character) -> Int32 { Int32(letter.asciiValue!) }

    // MARK: Reading

    static func read(_ message: OpaquePointer) -> [DBusValue] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(message, &iterator) != 0 else { return [] }
        return readAll(&iterator)
    }

    private static func readAll(_ iterator: inout DBusMessageIter) -> [DBusValue] {
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iterator) != 0 {
            if let value = readOne(&iterator) { values.append(value) }
            dbus_message_iter_next(&iterator)
        }
        return values
    }

    private static func readOne(_ iterator: inout DBusMessageIter) -> DBusValue? {
        let type = dbus_message_iter_get_arg_type(&iterator)
        var basic = DBusBasicValue()
        func basicValue() -> DBusBasicValue {
            dbus_message_iter_get_basic(&iterator, &basic)
            return basic
        }
        switch type {
        case code("y"): return .byte(basicValue().byt)
        case code("b"): return .boolean(basicValue().bool_val != 0)
        case code("n"): return .int16(basicValue().i16)
        case code("q"): return .uint16(basicValue().u16)
        case code("i"): return .int32(basicValue().i32)
        case code("u"): return .uint32(basicValue().u32)
        case code("x"): return .int64(Int64(basicValue().i64))
        case code("t"): return .uint64(UInt64(basicValue().u64))
        case code("d"): return .double(basicValue().dbl)
        case code("s"): return .string(String(cString: basicValue().str))
        case code("o"): return .objectPath(String(cString: basicValue().str))
        case code("g"): return .signature(String(cString: basicValue().str))
        case code("v"):
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            return readOne(&inner).map { .variant($0) }
        case code("r"):
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            return .structure(readAll(&inner))
        case code("a"):
            let elementSignature = signature(ofElementsOf: &iterator)
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            if dbus_message_iter_get_element_type(&iterator) == code("e") {
                var entries: [DBusValue.DictionaryEntry] = []
                while dbus_message_iter_get_arg_type(&inner) == code("e") {
                    var entry = DBusMessageIter()
                    dbus_message_iter_recurse(&inner, &entry)
                    let pair = readAll(&entry)
                    if pair.count == 2 { entries.append(.init(pair[0], pair[1])) }
                    dbus_message_iter_next(&inner)
                }
                // "{sv}" → key "s", value "v"
                let body = elementSignature.dropFirst().dropLast()
                let keySignature = String(body.prefix(1))
                return .dictionary(keySignature: keySignature, valueSignature: String(body.dropFirst()), entries)
            }
            return .array(elementSignature: elementSignature, readAll(&inner))
        default:
            return nil  // unix fds and unknown types are not used by these APIs
        }
    }

    private static func signature(ofElementsOf iterator: inout DBusMessageIter) -> String {
        guard let full = dbus_message_iter_get_signature(&iterator) else { return "" }
        defer { dbus_free(full) }
        return String(String(cString: full).dropFirst())  // drop the "a"
    }

    // MARK: Writing

    /// Appends values; fails (with the reason) on a value D-Bus cannot carry,
    /// so nothing invalid ever reaches libdbus.
    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusError) {
        for value in values { try validate(value) }
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(message, &iterator)
        for value in values {
            guard append(value, to: &iterator) else { throw .failed("out of memory appending \(value.signature)") }
        }
    }

    static func validate(_ value: DBusValue) throws(DBusError) {
        switch value {
        case .string(let s) where !DBusNames.isValidString(s):
            throw .invalidArgs("a string contains a NUL character")
        case .objectPath(let path) where !DBusNames.isValidObjectPath(path):
            throw .invalidArgs("'\(path)' is not a valid object path")
        case .array(let element, let items):
            for item in items {
                guard item.signature == element else { throw .invalidArgs("array of \(element) holds a \(item.signature)") }
                try validate(item)
            }
        case .dictionary(let key, let valueSignature, let entries):
            for entry in entries {
                guard entry.key.signature == key, entry.value.signature == valueSignature else {
                    throw .invalidArgs("dictionary a{\(key)\(valueSignature)} holds {\(entry.key.signature)\(entry.value.signature)}")
                }
                try validate(entry.key)
                try validate(entry.value)
            }
        case .structure(let fields):
            for field in fields { try validate(field) }
        case .variant(let inner):
            try validate(inner)
        default:
            break
        }
    }

    private static func append(_ value: DBusValue, to iterator: inout DBusMessageIter) -> Bool {
        func basic(_ type: Character, _ set: (inout DBusBasicValue) -> Void) -> Bool {
            var storage = DBusBasicValue()
            set(&storage)
            return dbus_message_iter_append_basic(&iterator, code(type), &storage) != 0
        }
        func text(_ type: Character, _ string: String) -> Bool {
            string.withCString { pointer in
                var storage: UnsafePointer<CChar>? = pointer
                return dbus_message_iter_append_basic(&iterator, code(type), &storage) != 0
            }
        }
        func container(_ type: Character, _ signature: String?, _ body: (inout DBusMessageIter) -> Bool) -> Bool {
            var inner = DBusMessageIter()
            let opened: Bool
            if let signature {
                opened = signature.withCString { dbus_message_iter_open_container(&iterator, code(type), $0, &inner) != 0 }
            } else {
                opened = dbus_message_iter_open_container(&iterator, code(type), nil, &inner) != 0
            }
            guard opened else { return false }
            guard body(&inner) else {
                dbus_message_iter_abandon_container(&iterator, &inner)
                return false
            }
            return dbus_message_iter_close_container(&iterator, &inner) != 0
        }
        switch value {
        case .byte(let v): return basic("y") { $0.byt = v }
        case .boolean(let v): return basic("b") { $0.bool_val = v ? 1 : 0 }
        case .int16(let v): return basic("n") { $0.i16 = v }
        case .uint16(let v): return basic("q") { $0.u16 = v }
        case .int32(let v): return basic("i") { $0.i32 = v }
        case .uint32(let v): return basic("u") { $0.u32 = v }
        case .int64(let v): return basic("x") { $0.i64 = .init(v) }
        case .uint64(let v): return basic("t") { $0.u64 = .init(v) }
        case .double(let v): return basic("d") { $0.dbl = v }
        case .string(let v): return text("s", v)
        case .objectPath(let v): return text("o", v)
        case .signature(let v): return text("g", v)
        case .variant(let inner):
            return container("v", inner.signature) { append(inner, to: &$0) }
        case .structure(let fields):
            return container("r", nil) { inner in fields.allSatisfy { append($0, to: &inner) } }
        case .array(let element, let items):
            return container("a", element) { inner in items.allSatisfy { append($0, to: &inner) } }
        case .dictionary(let key, let valueSignature, let entries):
            return container("a", "{\(key)\(valueSignature)}") { inner in
                entries.allSatisfy { entry in
                    var pair = DBusMessageIter()
                    guard dbus_message_iter_open_container(&inner, code("e"), nil, &pair) != 0 else { return false }
                    guard append(entry.key, to: &pair), append(entry.value, to: &pair) else {
                        dbus_message_iter_abandon_container(&inner, &pair)
                        return false
                    }
                    return dbus_message_iter_close_container(&inner, &pair) != 0
                }
            }
        }
    }
}
