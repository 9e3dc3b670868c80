// One member table per HAR type. The lenient reader, the writer, equality and the strict
// validator all walk the same table, so a member cannot be known to one of them and missed by
// another. The tables themselves are in HARMembers.swift.

/// A HAR 1.2 object type, described by one table of its standard members.
///
/// `init(lenient:)`, `write(to:)` and `==` come from the table, and `HARValidator` checks a
/// document against the same tables.
public protocol HARObject: Sendable, Equatable {
    /// The type's standard members in HAR 1.2 spec order (the order they are written in).
    static var schema: HARSchema<Self> { get }
    /// Members the table does not know (HAR custom fields start with "_"), in document order,
    /// written after the standard members.
    var custom: JSONFields { get set }
}

/// The member table of one HAR object type; see `HARObject`.
public final class HARSchema<Root>: Sendable {
    let members: [HARMember<Root>]
    let names: Set<String>
    /// The members' names and accesses on their own, for the reader's and writer's loops: they
    /// copy no shape (whose closures would be retained and released per member per entry).
    let memberNames: [String]
    let accesses: [HARAccess<Root>]
    /// The value the lenient reader starts from: required members at their defaults.
    let blank: @Sendable () -> Root
    /// Runs after the lenient reader has read every member (for defaults that depend on others).
    let finishReading: @Sendable (inout Root, JSONFields) -> Void
    /// Checks between members, after each member's own check; `clean` says whether this
    /// object has had no problem so far.
    let relations: @Sendable (inout HARChecker, JSONFields, String, _ clean: Bool) -> Void

    init(blank: @escaping @Sendable () -> Root, _ members: [HARMember<Root>],
         finishReading: @escaping @Sendable (inout Root, JSONFields) -> Void = { _, _ in },
         relations: @escaping @Sendable (inout HARChecker, JSONFields, String, Bool) -> Void = { _, _, _, _ in }) {
        self.members = members
        self.names = Set(members.map(\.name))
        self.memberNames = members.map(\.name)
        self.accesses = members.map(\.access)
        self.blank = blank
        self.finishReading = finishReading
        self.relations = relations
    }

    /// The position of the member called `name`, searched from `start` onwards and then from
    /// the top: documents list members in spec order, so the first comparison usually hits.
    func index(of name: String, from start: Int) -> Int? {
        let n = memberNames.count
        var i = start
        for _ in 0..<n {
            if i == n { i = 0 }
            if memberNames[i] == name { return i }
            i += 1
        }
        return nil
    }
}

/// One standard member of a HAR object: its name, what the validator requires of it, and how the
/// model reaches it.
public struct HARMember<Root>: Sendable {
    let name: String
    let required: Bool
    let shape: HARShape
    let access: HARAccess<Root>
}

typealias Visit<Root, Value> = @Sendable (Root, (Value) -> Void) -> Void
typealias Assign<Root, Value> = @Sendable (inout Root, __owned Value) -> Void

/// How a member is reached in the model. Scalars hold the row's own closures, which capture
/// nothing, so a read or write retains nothing; objects and arrays need closures made for their
/// element type.
enum HARAccess<Root>: Sendable {
    case string(Visit<Root, String>, Assign<Root, String>, default: String)
    case optionalString(Visit<Root, String?>, Assign<Root, String?>)
    case integer(Visit<Root, Int>, Assign<Root, Int>, default: Int)
    case optionalInteger(Visit<Root, Int?>, Assign<Root, Int?>)
    case number(Visit<Root, Double>, Assign<Root, Double>)
    case optionalNumber(Visit<Root, Double?>, Assign<Root, Double?>)
    case optionalBool(Visit<Root, Bool?>, Assign<Root, Bool?>)
    case nested(HARNestedAccess<Root>)

    /// Reads a present value leniently (see HARRead.swift); a value an optional member cannot
    /// hold goes to `custom`, so nothing is lost.
    @inline(__always)
    func read(_ name: String, _ root: inout Root, _ v: JSONValue, _ custom: inout JSONFields) {
        switch self {
        case .string(_, let set, let defaultValue): set(&root, v.lenientString ?? defaultValue)
        case .optionalString(_, let set):
            if case .string(let s) = v { set(&root, s) } else { custom.append((name, v)) }
        case .integer(_, let set, let defaultValue): set(&root, v.lenientInt ?? defaultValue)
        case .optionalInteger(_, let set):
            if let i = v.intValue { set(&root, i) } else { custom.append((name, v)) }
        case .number(_, let set): set(&root, v.lenientDouble ?? 0)
        case .optionalNumber(_, let set):
            if let d = v.doubleValue, d.isFinite { set(&root, d) } else { custom.append((name, v)) }
        case .optionalBool(_, let set):
            if case .bool(let b) = v { set(&root, b) } else { custom.append((name, v)) }
        case .nested(let nested): nested.read(&root, v, &custom)
        }
    }

    /// Writes the key and the value, or nothing for an absent optional member.
    @inline(__always)
    func write(_ name: String, _ root: Root, _ w: inout JSONWriter) {
        switch self {
        case .string(let visit, _, _): w.key(name); visit(root) { w.string($0) }
        case .optionalString(let visit, _): visit(root) { if let v = $0 { w.key(name); w.string(v) } }
        case .integer(let visit, _, _): w.key(name); visit(root) { w.int($0) }
        case .optionalInteger(let visit, _): visit(root) { if let v = $0 { w.key(name); w.int(v) } }
        case .number(let visit, _): w.key(name); visit(root) { w.double($0) }
        case .optionalNumber(let visit, _): visit(root) { if let v = $0 { w.key(name); w.double(v) } }
        case .optionalBool(let visit, _): visit(root) { if let v = $0 { w.key(name); w.bool(v) } }
        case .nested(let nested): nested.write(root, &w)
        }
    }

    func equal(_ a: Root, _ b: Root) -> Bool {
        switch self {
        case .string(let visit, _, _): return same(visit, a, b)
        case .optionalString(let visit, _): return same(visit, a, b)
        case .integer(let visit, _, _): return same(visit, a, b)
        case .optionalInteger(let visit, _): return same(visit, a, b)
        case .number(let visit, _): return same(visit, a, b)
        case .optionalNumber(let visit, _): return same(visit, a, b)
        case .optionalBool(let visit, _): return same(visit, a, b)
        case .nested(let nested): return nested.equal(a, b)
        }
    }
}

/// Whether the member `visit` reaches holds equal values in `a` and `b`.
private func same<Root, Value: Equatable>(_ visit: @escaping Visit<Root, Value>, _ a: Root, _ b: Root) -> Bool {
    var result = false
    visit(a) { x in visit(b) { result = x == $0 } }
    return result
}

/// An object member or an array of objects, with closures made for the element type.
struct HARNestedAccess<Root>: Sendable {
    let read: @Sendable (inout Root, JSONValue, inout JSONFields) -> Void
    let write: @Sendable (Root, inout JSONWriter) -> Void
    let equal: @Sendable (Root, Root) -> Bool
}

/// What the strict validator requires of a member's JSON value.
enum HARShape: Sendable {
    case string(HARStringFormat)
    case integer(minimum: Int, maximum: Int)
    case number(HARNumberRule)
    case bool
    /// An object, checked by its own type's table; `nullable` allows `null` (HAR's "no cache entry").
    case object(nullable: Bool, check: @Sendable (inout HARChecker, JSONFields, String) -> Void)
    /// An array of objects, each checked by the element type's table.
    case array(element: @Sendable (inout HARChecker, JSONFields, String) -> Void)

    /// The word for the value in "missing required ..." messages.
    var noun: String {
        switch self {
        case .string: return "string"
        case .integer: return "integer"
        case .number: return "number"
        case .bool: return "boolean"
        case .object: return "object"
        case .array: return "array"
        }
    }
}

/// What a string member must look like beyond being a string.
enum HARStringFormat: Sendable {
    case text
    /// ISO 8601 with a time zone; `strict` also requires fractional seconds (startedDateTime).
    case dateTime(strict: Bool)
    /// An absolute URL without a fragment.
    case url
    /// "1.2" (or "1.1").
    case version
    /// The id of one of the log's pages.
    case pageReference
}

/// What a number member's value must be.
enum HARNumberRule: Sendable {
    case any
    /// send, wait, receive.
    case nonNegative
    /// -1 ("does not apply") or a value >= 0: the optional timings.
    case notApplicableOrNonNegative
}

// MARK: - Members

// Each row names the member, then how to reach it: `{ $1($0.name) }` hands the stored value to a
// body in place, and `{ $0.name = $1 }` sets it. Key paths would say the same more briefly, but a
// KeyPath applied at run time costs a generic projection per member per entry (it doubled the time
// to redact many small entries), and a getter closure returns a copy to retain and release.

extension HARMember {
    /// A required string; a value of another type reads as `defaultValue` (numbers and booleans as
    /// their literal).
    static func string(_ name: String, _ visit: @escaping Visit<Root, String>, _ set: @escaping Assign<Root, String>,
                       default defaultValue: String = "", format: HARStringFormat = .text) -> Self {
        Self(name: name, required: true, shape: .string(format), access: .string(visit, set, default: defaultValue))
    }

    /// An optional string.
    static func optionalString(_ name: String, _ visit: @escaping Visit<Root, String?>, _ set: @escaping Assign<Root, String?>,
                               format: HARStringFormat = .text) -> Self {
        Self(name: name, required: false, shape: .string(format), access: .optionalString(visit, set))
    }

    /// A required integer; numeric strings and fractions are converted, anything else reads as
    /// `defaultValue`.
    static func integer(_ name: String, _ visit: @escaping Visit<Root, Int>, _ set: @escaping Assign<Root, Int>,
                        default defaultValue: Int, minimum: Int, maximum: Int = Int.max) -> Self {
        Self(name: name, required: true, shape: .integer(minimum: minimum, maximum: maximum),
             access: .integer(visit, set, default: defaultValue))
    }

    /// An optional integer.
    static func optionalInteger(_ name: String, _ visit: @escaping Visit<Root, Int?>, _ set: @escaping Assign<Root, Int?>,
                                minimum: Int) -> Self {
        Self(name: name, required: false, shape: .integer(minimum: minimum, maximum: Int.max), access: .optionalInteger(visit, set))
    }

    /// A required number; numeric strings are converted, anything else reads as 0.
    static func number(_ name: String, _ visit: @escaping Visit<Root, Double>, _ set: @escaping Assign<Root, Double>,
                       rule: HARNumberRule = .any) -> Self {
        Self(name: name, required: true, shape: .number(rule), access: .number(visit, set))
    }

    /// An optional number.
    static func optionalNumber(_ name: String, _ visit: @escaping Visit<Root, Double?>, _ set: @escaping Assign<Root, Double?>,
                               rule: HARNumberRule) -> Self {
        Self(name: name, required: false, shape: .number(rule), access: .optionalNumber(visit, set))
    }

    /// An optional boolean.
    static func optionalBool(_ name: String, _ visit: @escaping Visit<Root, Bool?>, _ set: @escaping Assign<Root, Bool?>) -> Self {
        Self(name: name, required: false, shape: .bool, access: .optionalBool(visit, set))
    }

    /// A required object; a value that is not an object reads as the blank object.
    static func object<T: HARObject>(_ name: String, _ visit: @escaping Visit<Root, T>, _ set: @escaping Assign<Root, T>) -> Self {
        Self(name: name, required: true, shape: .object(nullable: false, check: { $0.check(T.self, $1, $2) }),
             access: .nested(HARNestedAccess(
                read: { root, v, _ in set(&root, T(lenient: v)) },
                write: { root, w in w.key(name); visit(root) { $0.write(to: &w) } },
                equal: { same(visit, $0, $1) })))
    }

    /// An optional object; `nullable` lets the validator accept `null` for "none".
    static func optionalObject<T: HARObject>(_ name: String, _ visit: @escaping Visit<Root, T?>, _ set: @escaping Assign<Root, T?>,
                                             nullable: Bool = false) -> Self {
        Self(name: name, required: false, shape: .object(nullable: nullable, check: { $0.check(T.self, $1, $2) }),
             access: .nested(HARNestedAccess(
                read: { root, v, custom in
                    if case .object = v { set(&root, T(lenient: v)) } else { custom.append((name, v)) }
                },
                write: { root, w in
                    visit(root) { value in
                        guard let value else { return }
                        w.key(name)
                        value.write(to: &w)
                    }
                },
                equal: { same(visit, $0, $1) })))
    }

    /// A required array of objects; a value that is not an array reads as [].
    static func array<T: HARObject>(_ name: String, _ visit: @escaping Visit<Root, [T]>, _ set: @escaping Assign<Root, [T]>) -> Self {
        Self(name: name, required: true, shape: .array(element: { $0.check(T.self, $1, $2) }),
             access: .nested(HARNestedAccess(
                read: { root, v, _ in set(&root, (v.arrayValue ?? []).map(T.init(lenient:))) },
                write: { root, w in w.key(name); visit(root) { writeArray($0, to: &w) } },
                equal: { same(visit, $0, $1) })))
    }

    /// An optional array of objects.
    static func optionalArray<T: HARObject>(_ name: String, _ visit: @escaping Visit<Root, [T]?>, _ set: @escaping Assign<Root, [T]?>) -> Self {
        Self(name: name, required: false, shape: .array(element: { $0.check(T.self, $1, $2) }),
             access: .nested(HARNestedAccess(
                read: { root, v, custom in
                    if let items = v.arrayValue { set(&root, items.map(T.init(lenient:))) } else { custom.append((name, v)) }
                },
                write: { root, w in
                    visit(root) { items in
                        guard let items else { return }
                        w.key(name)
                        writeArray(items, to: &w)
                    }
                },
                equal: { same(visit, $0, $1) })))
    }
}

private func writeArray<T: HARObject>(_ items: [T], to w: inout JSONWriter) {
    w.beginArray()
    for item in items { item.write(to: &w) }
    w.endArray()
}

// MARK: - Reading, writing and equality from the table

extension HARObject {
    /// Reads this object leniently from `json` (see the rules at the top of HARRead.swift).
    public init(lenient json: JSONValue) {
        let schema = Self.schema
        self = schema.blank()
        let fields = json.objectValue ?? []
        var custom: JSONFields = []
        var next = 0
        for (key, value) in fields {
            if let i = schema.index(of: key, from: next) {
                schema.accesses[i].read(schema.memberNames[i], &self, value, &custom)
                next = i + 1
            } else {
                custom.append((key, value))
            }
        }
        self.custom = custom
        schema.finishReading(&self, fields)
    }

    /// Writes this object to `w`: the table's members in spec order, then `custom`.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        writeMembers(0..<Self.schema.accesses.count, to: &w)
        w.fields(custom)
        w.endObject()
    }

    /// Writes the table's members in `range` (no braces, no `custom`).
    func writeMembers(_ range: Range<Int>, to w: inout JSONWriter) {
        let schema = Self.schema
        for i in range { schema.accesses[i].write(schema.memberNames[i], self, &w) }
    }

    /// Equal when every member of the table is equal and `custom` holds the same members in the
    /// same order.
    public static func == (a: Self, b: Self) -> Bool {
        for access in Self.schema.accesses where !access.equal(a, b) { return false }
        return jsonFieldsEqual(a.custom, b.custom)
    }
}
