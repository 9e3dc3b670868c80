import HAR

// Format-preserving JSON redaction: the text is walked token by token and only the tokens that
// change are replaced, so key order, whitespace, number literals and escapes elsewhere stay as
// they were. It is also a strict validator (RFC 8259): on any syntax error the caller treats
// the body as plain text instead.

enum JSONRewrite {
    case notJSON
    case unchanged
    /// The replacements: callers apply them to the text they hold (a String keeps its unchanged
    /// parts without validating them again).
    case edited(JSONEdits)
}

/// Nesting beyond this is not treated as JSON (it is scanned as text instead); the same bound
/// as the HAR parser's, for the same reason: recursion depth on small thread stacks.
let maximumJSONRewriteDepth = 256

/// JSON nested in a JSON string ("{\"token\":...}") is rewritten too, to this many levels.
let maximumNestedJSONLevels = 4

extension RedactionEngine {
    /// Rewrites the JSON document in `p`, or reports that it is not JSON.
    func rewriteJSON(_ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String,
                     nestingLevel: Int = 0, context: NameClass = .ordinary) -> JSONRewrite {
        let before = mark
        var rewriter = JSONRewriter(p: p, engine: self, reading: reading, nestingLevel: nestingLevel)
        let ok = withoutActuallyEscaping(path) { escapable -> Bool in
            rewriter.basePath = escapable
            defer { rewriter.basePath = nil }
            return rewriter.document(context)
        }
        guard ok else {
            rollBack(to: before)
            return .notJSON
        }
        return rewriter.finish()
    }

    /// Whether `p` starts (after whitespace) like a JSON object or array.
    static func looksLikeJSON(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        for b in p {
            switch b {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case 0x7B, 0x5B: return true
            default: return false
            }
        }
        return false
    }

    /// Redacts a body, message or value that may be JSON: JSON when it parses, the decoded text
    /// when the whole value is base64 of text, else plain text.
    func redactTextOrJSON(_ text: String, _ reading: Reading, _ path: () -> String) -> String? {
        var copy = text
        return copy.withUTF8 { p in redactValueBytes(p, reading, path).map { String(decoding: $0, as: UTF8.self) } }
    }

    /// `shape`: what the caller's pass over the bytes already learned (a JSON string's token).
    func redactValueBytes(_ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String,
                          nestingLevel: Int = 0, shape: ByteShape = .unknown) -> [UInt8]? {
        // Lowercase letters and spaces only (no JSON, no base64): no detector matches there
        // without a trigger word, but a seed phrase may be all of it. (A user's patterns may
        // match anything.)
        if !shape.hasOther && !rules.hasPatterns && !rules.lowercaseProse.mayHoldTrigger(p) {
            return replacingSeedPhrase(p, reading, path)
        }
        if Self.looksLikeJSON(p) && nestingLevel <= maximumNestedJSONLevels {
            switch rewriteJSON(p, reading, path, nestingLevel: nestingLevel) {
            case .edited(let edits): return Self.applying(edits, to: p)
            case .unchanged: return nil
            case .notJSON: return redactBrokenJSON(p, reading, path)
            }
        }
        // Base64 of text has both cases (`Base64View.decode`).
        if nestingLevel <= maximumNestedJSONLevels, shape.hasUpper, let view = Base64View.decode(p) {
            let before = mark
            if let inner = view.text.withUnsafeBufferPointer({ redactValueBytes($0, reading, path, nestingLevel: nestingLevel + 1) }) {
                return syntax.base64(inner, urlSafe: view.urlSafe, padded: view.padded)
            }
            rollBack(to: before)
        }
        // Words of text that are base64 of text (`Use bWFyaWEu...== for the store`): each is
        // redacted as a whole value is, and the text around them scanned as it stands.
        if nestingLevel <= maximumNestedJSONLevels, shape.hasUpper {
            let words = redactedBase64Words(p, reading, path, nestingLevel: nestingLevel)
            if !words.isEmpty { return scanning(p, around: words, reading, path) }
        }
        return scanBytes(p, reading, path, shape: shape)
    }
}

struct JSONRewriter {
    let p: UnsafeBufferPointer<UInt8>
    // The engine outlives every rewriter it creates; unowned(unsafe) skips a retain per use.
    unowned(unsafe) let engine: RedactionEngine
    let reading: Reading
    let nestingLevel: Int
    var basePath: (() -> String)?
    var i = 0
    /// The replacements so far, in order.
    var edits = JSONEdits()
    /// What the last `stringToken` saw in its bytes.
    var tokenShape = ByteShape.unknown
    /// Member names and indexes down to the current value; kept only when findings need paths.
    var pathStack: [PathComponent] = []

    enum PathComponent {
        case key(String)
        case index(Int)
    }

    init(p: UnsafeBufferPointer<UInt8>, engine: RedactionEngine, reading: Reading, nestingLevel: Int) {
        self.p = p
        self.engine = engine
        self.reading = reading
        self.nestingLevel = nestingLevel
    }

    func finish() -> JSONRewrite {
        edits.isEmpty ? .unchanged : .edited(edits)
    }

    /// The finding path: the HAR field, then where inside this JSON document.
    func currentPath() -> String { Self.path(basePath, pathStack) }

    static func path(_ basePath: (() -> String)?, _ pathStack: [PathComponent]) -> String {
        var inner = "$"
        for component in pathStack {
            switch component {
            case .key(let k):
                if !k.isEmpty, k.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "_") }) {
                    inner += "." + k
                } else {
                    inner += "[" + String(decoding: JSONWriter.serialize(.string(k), pretty: false), as: UTF8.self) + "]"
                }
            case .index(let n):
                inner += "[\(n)]"
            }
        }
        return (basePath?() ?? "") + " (" + inner + ")"
    }

    mutating func replace(_ range: Range<Int>, with byte: UInt8) {
        edits.bytes.append(byte)
        edits.close(range)
    }

    /// Replaces `range` with `content` as a JSON string literal.
    mutating func replace(_ range: Range<Int>, quoting content: [UInt8]) {
        let syntax = engine.syntax
        content.withUnsafeBufferPointer { Self.quote($0, syntax: syntax, into: &edits.bytes) }
        edits.close(range)
    }

    mutating func skipWhitespace() {
        while i < p.count {
            switch p[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    mutating func document(_ context: NameClass = .ordinary) -> Bool {
        skipWhitespace()
        guard value(context, depth: 0) else { return false }
        skipWhitespace()
        return i == p.count
    }

    /// A value under a name of class `context` (`.secret` all the way down once a secret key
    /// was met; a personal class down through arrays).
    mutating func value(_ context: NameClass, depth: Int) -> Bool {
        guard i < p.count, depth < maximumJSONRewriteDepth else { return false }
        switch p[i] {
        case 0x7B: return object(PersonalNames.scope(of: context), depth: depth)
        case 0x5B: return array(context, depth: depth)
        case 0x22: return stringValue(context)
        case 0x74: return literal("true")
        case 0x66: return literal("false")
        case 0x6E: return literal("null")
        default: return number(context)
        }
    }

    mutating func literal(_ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard i + n <= p.count else { return false }
        for k in 0..<n where p[i + k] != word.utf8Start[k] { return false }
        i += n
        return true
    }

    /// Keys this long are scanned like values: a token or an email can be a member name.
    static let scannedKeyLength = 12

    mutating func object(_ context: NameClass, depth: Int) -> Bool {
        i += 1
        skipWhitespace()
        if i < p.count && p[i] == 0x7D { i += 1; return true }
        let tracking = engine.collectFindings
        // Whether a member so far was personal (an email, a phone, a birth date): then the
        // object is about a person, and its bare `name` is the person's.
        var aboutPerson = false
        while true {
            skipWhitespace()
            let keyStart = i
            guard i < p.count, p[i] == 0x22, let key = stringToken(shaped: false) else { return false }
            let keyEnd = i
            skipWhitespace()
            guard i < p.count, p[i] == 0x3A else { return false }
            i += 1
            skipWhitespace()
            let engine = self.engine
            let info = withContent(key) { engine.nameMemo.info($0) }
            var nameClass = info.nameClass
            if context == .secret { nameClass = NameMatcher.inSecretScope(info) }
            if nameClass == .ordinary && context != .ordinary && context != .secret {
                // A member of an address, a place or a person: what its name means there.
                nameClass = PersonalNames.role(info.roles, in: context)
            }
            if info.roles.contains(.personal) { aboutPerson = true }
            if nameClass == .ordinary && context != .secret && info.roles.contains(.bareName)
                && valueReadsAsCapitalizedName(at: i) && (aboutPerson || laterMemberIsPersonal(from: i)) {
                nameClass = .personName
            }
            if tracking { pathStack.append(.key(withContent(key) { String(decoding: $0, as: UTF8.self) })) }
            if keyEnd - keyStart >= Self.scannedKeyLength + 2 {
                let reading = self.reading
                let path = { "" }
                if let r = withContent(key, { engine.scanBytes($0, reading, path) }) {
                    replace(keyStart..<keyEnd, quoting: r)
                }
            }
            guard value(nameClass, depth: depth + 1) else { return false }
            if tracking { pathStack.removeLast() }
            skipWhitespace()
            guard i < p.count else { return false }
            if p[i] == 0x2C { i += 1; continue }
            if p[i] == 0x7D { i += 1; return true }
            return false
        }
    }

    mutating func array(_ context: NameClass, depth: Int) -> Bool {
        i += 1
        skipWhitespace()
        if i < p.count && p[i] == 0x5D { i += 1; return true }
        let tracking = engine.collectFindings
        var index = 0
        while true {
            skipWhitespace()
            if tracking { pathStack.append(.index(index)) }
            guard value(context, depth: depth + 1) else { return false }
            if tracking { pathStack.removeLast() }
            index += 1
            skipWhitespace()
            guard i < p.count else { return false }
            if p[i] == 0x2C { i += 1; continue }
            if p[i] == 0x5D { i += 1; return true }
            return false
        }
    }

    /// A number; under a secret, phone or card key it becomes 0 (the type is kept, the value gone).
    mutating func number(_ context: NameClass) -> Bool {
        let start = i
        if i < p.count && p[i] == 0x2D { i += 1 }
        guard i < p.count, RedactionEngine.isDigit(p[i]) else { return false }
        if p[i] == 0x30 { i += 1 } else { while i < p.count && RedactionEngine.isDigit(p[i]) { i += 1 } }
        if i < p.count && p[i] == 0x2E {
            i += 1
            let digits = i
            while i < p.count && RedactionEngine.isDigit(p[i]) { i += 1 }
            guard i > digits else { return false }
        }
        if i < p.count && (p[i] | 0x20) == 0x65 {
            i += 1
            if i < p.count && (p[i] == 0x2B || p[i] == 0x2D) { i += 1 }
            let digits = i
            while i < p.count && RedactionEngine.isDigit(p[i]) { i += 1 }
            guard i > digits else { return false }
        }
        let rule: RedactionRule?
        switch context {
        case .secret: rule = engine.flags.has(.jsonKeys) ? .jsonKeys : nil
        case .phone: rule = engine.flags.has(.phoneNumber) && i - start >= 6 ? .phoneNumber : nil
        case .cardNumber: rule = engine.flags.has(.cardNumber) && i - start >= 12 ? .cardNumber : nil
        case .cardCode: rule = engine.flags.has(.cardCode) ? .cardCode : nil
        case .coordinate, .birthDate, .cardExpiry:
            // Shaped as a string would be (`replacePersonal`): written back as the number it reads as.
            let literal = String(decoding: UnsafeBufferPointer(rebasing: p[start..<i]), as: UTF8.self)
            if let r = engine.replacePersonal(literal, context, reading, { engine.collectFindings ? currentPath() : "" }, length: nil) {
                let digits = r.utf8.drop { $0 == 0x30 && r.utf8.count > 1 }
                edits.bytes.append(contentsOf: digits.isEmpty || digits.first == 0x2E ? Array("0".utf8) + digits : Array(digits))
                edits.close(start..<i)
            }
            return true
        default: rule = nil
        }
        if let rule, !(i - start == 1 && p[start] == 0x30) {
            let literal = String(decoding: UnsafeBufferPointer(rebasing: p[start..<i]), as: UTF8.self)
            engine.note(rule, reading, literal) { engine.collectFindings ? currentPath() : "" }
            replace(start..<i, with: 0x30)
        }
        return true
    }

    mutating func stringValue(_ context: NameClass) -> Bool {
        let start = i
        guard let token = stringToken(shaped: true) else { return false }
        let end = i
        let shape = tokenShape
        // Paths only for findings (`--check`): otherwise a closure context holding the path
        // stack was allocated and freed for every string value.
        let pathFunction: () -> String
        if engine.collectFindings {
            let stack = pathStack, basePath = self.basePath
            pathFunction = { Self.path(basePath, stack) }
        } else {
            // A literal without captures: no context, and no `swift_once` (a `static let` closure
            // cost a call to it per string value, 1.2% of a large redaction's cycles).
            pathFunction = { "" }
        }
        let engine = self.engine, reading = self.reading, nestingLevel = self.nestingLevel
        let replacement = withContent(token) { q -> [UInt8]? in
            if q.isEmpty { return nil }
            switch context {
            case .ordinary:
                break
            case .version:
                return engine.redactValueBytes(q, reading.with(.version), pathFunction, nestingLevel: nestingLevel + 1, shape: shape)
            default:
                if context == .secret, nestingLevel < maximumNestedJSONLevels, RedactionEngine.looksLikeJSON(q) {
                    // JSON in a secret's string stays JSON: every value in it is the secret's.
                    switch engine.rewriteJSON(q, reading, pathFunction, nestingLevel: nestingLevel + 1, context: .secret) {
                    case .edited(let edits): return RedactionEngine.applying(edits, to: q)
                    case .unchanged: return nil
                    case .notJSON: break
                    }
                }
                let value = String(decoding: q, as: UTF8.self)
                if let r = engine.replaceNamedValue(value, context, secretRule: .jsonKeys, reading, pathFunction) {
                    return Array(r.utf8)
                }
                if context == .secret && engine.flags.has(.jsonKeys) { return nil }  // placeholders, allowed values
            }
            return engine.redactValueBytes(q, reading, pathFunction, nestingLevel: nestingLevel + 1, shape: shape)
        }
        if let replacement {
            replace(start..<end, quoting: replacement)
        }
        return true
    }

    /// A string's decoded content: where it is in the input when it has no escapes (no copy), or
    /// the unescaped bytes.
    enum StringContent {
        case slice(Range<Int>)
        case owned([UInt8])
    }

    func withContent<R>(_ content: StringContent, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        switch content {
        case .slice(let range): return body(UnsafeBufferPointer(rebasing: p[range]))
        case .owned(let bytes): return bytes.withUnsafeBufferPointer(body)
        }
    }

    /// Reads a string token at `i` (which is at the opening quote), or nil on a syntax error.
    /// With `shaped`, sets `tokenShape` from its raw bytes (an escape of an ASCII letter, `\u004A`,
    /// has digits); a member name needs no shape, and skipping it there saves 3% of a redaction.
    @inline(__always)
    mutating func stringToken(shaped: Bool) -> StringContent? {
        i += 1
        let start = i
        var hasEscape = false
        var shapeBits: UInt64 = 0
        let raw = UnsafeRawPointer(p.baseAddress!)
        while i < p.count {
            // Eight bytes at a time up to the next quote, backslash or control character.
            if i + 8 <= p.count {
                let w = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let m = stringStopMask(w)
                if m == 0 {
                    if shaped { shapeBits |= ByteShape.bits(w) }
                    i += 8
                    continue
                }
                // Only the bytes before the stop are the string's.
                if shaped { shapeBits |= ByteShape.bits(w) & (((m & (0 &- m)) &>> 7) &- 1) }
                i += m.trailingZeroBitCount >> 3
            }
            let c = p[i]
            if c == 0x22 { break }
            if c < 0x20 { return nil }
            if c == 0x5C {
                hasEscape = true
                i += 2
                continue
            }
            if shaped { shapeBits |= ByteShape.bits(UInt64(c)) & 0xFF }  // the other lanes are no bytes of it
            i += 1
        }
        guard i < p.count else { return nil }
        tokenShape = ByteShape(bits: shapeBits)
        // What an escape stands for was not looked at.
        if hasEscape { tokenShape.hasOther = true }
        let end = i
        i += 1
        if !hasEscape { return .slice(start..<end) }
        return JSONParser.unescapeStringContent(UnsafeBufferPointer(rebasing: p[start..<end])).map { .owned($0) }
    }
}
