import CDBus

/// Reads and writes message arguments through libdbus's iterators.
///
/// libdbus's type constants are macros Swift does not import, so type codes
/// are spelled as the ASCII letters they are.
enum MessageCoder {
    static func code(_ letter: Unicode.Scalar) -> Int32 { Int32(letter.value) }

    // MARK: Reading

    /// More values than a message from a peer may hold (`read(_:atMost:)`).
    struct TooManyValues: Error {}

    /// The most values (every element, key and value counts) decoded from
    /// what a peer sends unasked, a call or a signal: a method call of
    /// these APIs holds a few dozen, a 30 MB byte array thirty million, each
    /// its own heap value.
    static let mostValuesFromPeers = 16_384

    /// The most values decoded from a reply to a call this process made. The
    /// largest replies these programs ask for are GetManagedObjects: beacond's
    /// holds about 50 values a beacon (15 properties), 50,000 at its bound of
    /// 1,000 beacons; BlueZ's about 150 a device it knows (its byte arrays
    /// count a value a byte), so about 7,000 devices fit. A peer answering with a 32 MiB array (the system
    /// bus's largest message) would otherwise become 33 million heap values,
    /// over a gigabyte; this bound keeps a reply under about 50 MB.
    static let mostValuesInReplies = 1 << 20

    /// A message's arguments, decoding no more than `limit` values.
    static func read(_ message: OpaquePointer, atMost limit: Int) throws(TooManyValues) -> [DBusValue] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(message, &iterator) != 0 else { return [] }
        var budget = limit
        return try readAll(&iterator, &budget)
    }

    private static func readAll(_ iterator: inout DBusMessageIter, _ budget: inout Int) throws(TooManyValues) -> [DBusValue] {
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iterator) != 0 {
            if let value = try readOne(&iterator, &budget) { values.append(value) }
            dbus_message_iter_next(&iterator)
        }
        return values
    }

    private static func readOne(_ iterator: inout DBusMessageIter, _ budget: inout Int) throws(TooManyValues) -> DBusValue? {
        budget -= 1
        guard budget >= 0 else { throw TooManyValues() }
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
            return try readOne(&inner, &budget).map { .variant($0) }
        case code("r"):
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            return .structure(try readAll(&inner, &budget))
        case code("a"):
            let elementSignature = signature(ofElementsOf: &iterator)
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            if dbus_message_iter_get_element_type(&iterator) == code("e") {
                var entries: [DBusValue.DictionaryEntry] = []
                while dbus_message_iter_get_arg_type(&inner) == code("e") {
                    var entry = DBusMessageIter()
                    dbus_message_iter_recurse(&inner, &entry)
                    let pair = try readAll(&entry, &budget)
                    if pair.count == 2 { entries.append(.init(pair[0], pair[1])) }
                    dbus_message_iter_next(&inner)
                }
                // "{sv}" → key "s", value "v"
                let body = elementSignature.dropFirst().dropLast()
                let keySignature = String(body.prefix(1))
                return .dictionary(keySignature: keySignature, valueSignature: String(body.dropFirst()), entries)
            }
            return .array(elementSignature: elementSignature, try readAll(&inner, &budget))
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

    /// Appends values, checking each as it goes: a value D-Bus cannot carry
    /// fails (with the reason) before libdbus sees it, as libdbus would abort
    /// the process on most. After a failure the message is part-written, for
    /// the caller to discard.
    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusError) {
        var iterator: DBusMessageIter? = DBusMessageIter()
        dbus_message_iter_init_append(message, &iterator!)
        for value in values { try write(value, to: &iterator) }
    }

    /// The checks of `append`, appending nothing (the in-memory bus).
    static func validate(_ values: [DBusValue]) throws(DBusError) {
        var nowhere: DBusMessageIter?
        for value in values { try write(value, to: &nowhere) }
    }

    /// Checks `value` and appends it to `iterator`, if there is one: a single
    /// walk, and the rules in one place for both.
    private static func write(_ value: DBusValue, to iterator: inout DBusMessageIter?) throws(DBusError) {
        switch value {
        case .byte(let v): try basic("y", &iterator) { $0.byt = v }
        case .boolean(let v): try basic("b", &iterator) { $0.bool_val = v ? 1 : 0 }
        case .int16(let v): try basic("n", &iterator) { $0.i16 = v }
        case .uint16(let v): try basic("q", &iterator) { $0.u16 = v }
        case .int32(let v): try basic("i", &iterator) { $0.i32 = v }
        case .uint32(let v): try basic("u", &iterator) { $0.u32 = v }
        case .int64(let v): try basic("x", &iterator) { $0.i64 = .init(v) }
        case .uint64(let v): try basic("t", &iterator) { $0.u64 = .init(v) }
        case .double(let v): try basic("d", &iterator) { $0.dbl = v }
        case .string(let v):
            guard DBusNames.isValidString(v) else { throw .invalidArgs("a string contains a NUL character") }
            try text("s", v, &iterator)
        case .objectPath(let v):
            guard DBusNames.isValidObjectPath(v) else { throw .invalidArgs("'\(v)' is not a valid object path") }
            try text("o", v, &iterator)
        case .signature(let v):
            guard dbus_signature_validate(v, nil) != 0 else { throw .invalidArgs("'\(v)' is not a valid type signature") }
            try text("g", v, &iterator)
        case .variant(let inner):
            try checkType(inner)
            try container("v", inner.signature, &iterator) { content throws(DBusError) in try write(inner, to: &content) }
        case .structure(let fields):
            try checkType(value)
            try container("r", nil, &iterator) { inner throws(DBusError) in
                for field in fields { try write(field, to: &inner) }
            }
        case .array(let element, let items):
            try checkType(value)
            try container("a", element, &iterator) { inner throws(DBusError) in
                for item in items {
                    guard item.signature == element else { throw .invalidArgs("array of \(element) holds a \(item.signature)") }
                    try write(item, to: &inner)
                }
            }
        case .dictionary(let key, let valueSignature, let entries):
            try checkType(value)
            try container("a", "{\(key)\(valueSignature)}", &iterator) { inner throws(DBusError) in
                for entry in entries {
                    guard entry.key.signature == key, entry.value.signature == valueSignature else {
                        throw .invalidArgs("dictionary a{\(key)\(valueSignature)} holds {\(entry.key.signature)\(entry.value.signature)}")
                    }
                    try container("e", nil, &inner) { pair throws(DBusError) in
                        try write(entry.key, to: &pair)
                        try write(entry.value, to: &pair)
                    }
                }
            }
        }
    }

    /// Throws unless a container's own type is one D-Bus has (checked before
    /// libdbus opens it): an array's element one complete type, a
    /// dictionary's key basic, a structure not empty. What it holds is
    /// checked as it is written.
    private static func checkType(_ value: DBusValue) throws(DBusError) {
        switch value {
        case .array(let element, _):
            guard dbus_signature_validate_single("a" + element, nil) != 0 else {
                throw .invalidArgs("'a\(element)' is not a valid array type")
            }
        case .dictionary(let key, let valueSignature, _):
            let signature = "a{\(key)\(valueSignature)}"
            guard dbus_signature_validate_single(signature, nil) != 0 else {
                throw .invalidArgs("'\(signature)' is not a valid dictionary type")
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw .invalidArgs("a structure needs at least one field") }
            for field in fields { try checkType(field) }
        default:
            break
        }
    }

    private static func basic(
        _ type: Unicode.Scalar, _ iterator: inout DBusMessageIter?, _ set: (inout DBusBasicValue) -> Void
    ) throws(DBusError) {
        guard iterator != nil else { return }
        var storage = DBusBasicValue()
        set(&storage)
        guard dbus_message_iter_append_basic(&iterator!, code(type), &storage) != 0 else { throw outOfMemory(type) }
    }

    private static func text(_ type: Unicode.Scalar, _ string: String, _ iterator: inout DBusMessageIter?) throws(DBusError) {
        guard iterator != nil else { return }
        let appended = string.withCString { pointer in
            var storage: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iterator!, code(type), &storage) != 0
        }
        guard appended else { throw outOfMemory(type) }
    }

    /// Opens a container, writes its contents with `body`, and closes it; abandons it if `body` fails.
    private static func container(
        _ type: Unicode.Scalar, _ signature: String?, _ iterator: inout DBusMessageIter?,
        _ body: (inout DBusMessageIter?) throws(DBusError) -> Void
    ) throws(DBusError) {
        guard iterator != nil else {
            var nowhere: DBusMessageIter?
            return try body(&nowhere)
        }
        var inner: DBusMessageIter? = DBusMessageIter()
        let opened =
            if let signature {
                signature.withCString { dbus_message_iter_open_container(&iterator!, code(type), $0, &inner!) != 0 }
            } else {
                dbus_message_iter_open_container(&iterator!, code(type), nil, &inner!) != 0
            }
        guard opened else { throw outOfMemory(type) }
        do {
            try body(&inner)
        } catch {
            dbus_message_iter_abandon_container(&iterator!, &inner!)
            throw error
        }
        guard dbus_message_iter_close_container(&iterator!, &inner!) != 0 else { throw outOfMemory(type) }
    }

    private static func outOfMemory(_ type: Unicode.Scalar) -> DBusError {
        .failed("libdbus ran out of memory appending a value of type \(type)")
    }
}
