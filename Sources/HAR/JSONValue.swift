/// The members of a JSON object in document order. Duplicate keys are kept as they appear.
public typealias JSONFields = [(key: String, value: JSONValue)]

/// An ordered JSON value.
///
/// Objects keep their members in document order (duplicates included) and numbers keep their
/// literal text, so `parse` followed by `JSONWriter.raw` reproduces the document exactly (up to
/// whitespace and string-escape spelling).
///
/// Not declared `indirect`: arrays already box their elements, and boxing every string and
/// number as well would cost one heap allocation per value when parsing large HARs.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The number's literal text as it appeared in the document (or as built by `integer(_:)` /
    /// `double(_:)`). It must match the RFC 8259 number grammar; `JSONWriter` writes `null` for
    /// a literal that does not.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONFields)

    /// Structural equality. Objects compare member by member in order (so `{"a":1,"b":2}` and
    /// `{"b":2,"a":1}` differ); numbers compare by literal text (so `1` and `1.0` differ).
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.number(a), .number(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)): return jsonFieldsEqual(a, b)
        default: return false
        }
    }

    /// A number value for an integer.
    public static func integer(_ value: Int) -> JSONValue { .number(String(value)) }

    /// A number value for a double, formatted like `JSONWriter.double` (at most 3 decimals,
    /// never exponent notation, non-finite values become -1).
    public static func double(_ value: Double) -> JSONValue {
        var bytes: [UInt8] = []
        JSONWriter.appendDouble(value, to: &bytes)
        return .number(String(decoding: bytes, as: UTF8.self))
    }

    /// The value of the member named `key`; the last one when the key is duplicated (the
    /// behaviour of `JSON.parse`). `nil` when this is not an object or the key is absent.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let fields) = self else { return nil }
        for field in fields.reversed() where field.key == key { return field.value }
        return nil
    }

    /// The element at `index`, or `nil` when this is not an array or the index is out of range.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let items) = self, index >= 0, index < items.count else { return nil }
        return items[index]
    }

    /// The string, when this is `.string`.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The boolean, when this is `.bool`.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// Whether this is `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The number as an `Int` when it is integral and in range (`12`, `12.0`, `1.2e1`), else `nil`.
    public var intValue: Int? {
        guard case .number(let literal) = self else { return nil }
        return JSONValue.integer(fromLiteral: literal)
    }

    /// The number as a `Double` (which may be infinite for huge literals such as `1e999`).
    public var doubleValue: Double? {
        guard case .number(let literal) = self else { return nil }
        return Double(literal)
    }

    /// The elements, when this is `.array`.
    public var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// The members in order, when this is `.object`.
    public var objectValue: JSONFields? {
        if case .object(let fields) = self { return fields }
        return nil
    }

    /// A short name of the value's JSON type, for messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    static func integer(fromLiteral literal: String) -> Int? {
        if let exact = Int(literal) { return exact }
        // Fractions or exponents whose value is still integral ("12.0", "1e3").
        guard let d = Double(literal), d.isFinite, d == d.rounded(.towardZero),
              d >= -9.0e18, d <= 9.0e18 else { return nil }
        return Int(d)
    }
}

/// Member-by-member equality of two ordered field lists.
public func jsonFieldsEqual(_ a: JSONFields, _ b: JSONFields) -> Bool {
    guard a.count == b.count else { return false }
    for i in a.indices where a[i].key != b[i].key || a[i].value != b[i].value { return false }
    return true
}
