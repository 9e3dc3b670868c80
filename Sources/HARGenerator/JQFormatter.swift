import HAR

/// Pretty-prints JSON the way `jq -S .` does, so fixture files read well in review and a
/// developer who reformats one with jq gets no diff.
///
/// Two-space indent, `"key": value`, `[]` and `{}` for empty containers, object keys sorted by
/// code point (UTF-8 byte order) with the last of duplicated keys kept (what a JSON reader sees),
/// strings escaping `"`, `\`, control characters (`\b \f \n \r \t`, else `\u00xx`) and DEL,
/// non-ASCII written as UTF-8, a trailing newline.
///
/// Numbers are written as recorded. jq 1.7 and later do the same for literals; jq 1.6 reprints
/// non-canonical ones through a double (`1.0` → `1`, `1E2` → `100`), which is the only difference.
enum JQFormatter {
    static func format(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        write(value, indent: 0, to: &out)
        out.append(0x0A)
        return out
    }

    private static func write(_ value: JSONValue, indent: Int, to out: inout [UInt8]) {
        switch value {
        case .null: out += Array("null".utf8)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .number(let literal): out += Array(literal.utf8)
        case .string(let s): writeString(s, to: &out)
        case .array(let items):
            guard !items.isEmpty else { out += [0x5B, 0x5D]; return }
            out += [0x5B, 0x0A]
            for (i, item) in items.enumerated() {
                pad(indent + 1, &out)
                write(item, indent: indent + 1, to: &out)
                if i < items.count - 1 { out.append(0x2C) }
                out.append(0x0A)
            }
            pad(indent, &out)
            out.append(0x5D)
        case .object(let fields):
            let members = sortedMembers(fields)
            guard !members.isEmpty else { out += [0x7B, 0x7D]; return }
            out += [0x7B, 0x0A]
            for (i, member) in members.enumerated() {
                pad(indent + 1, &out)
                writeString(member.key, to: &out)
                out += [0x3A, 0x20]
                write(member.value, indent: indent + 1, to: &out)
                if i < members.count - 1 { out.append(0x2C) }
                out.append(0x0A)
            }
            pad(indent, &out)
            out.append(0x7D)
        }
    }

    /// One member per key (the last one wins), ordered by the keys' UTF-8 bytes.
    private static func sortedMembers(_ fields: JSONFields) -> [(key: String, value: JSONValue)] {
        // Keyed by bytes: Swift string equality would merge canonically equivalent keys
        // ("é" and "e\u{301}") that JSON, and jq, keep apart.
        var lastIndex: [[UInt8]: Int] = [:]
        for (i, field) in fields.enumerated() { lastIndex[Array(field.key.utf8)] = i }
        return lastIndex.values.sorted().map { fields[$0] }
            .sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    private static func pad(_ level: Int, _ out: inout [UInt8]) {
        out += Array(repeating: 0x20, count: level * 2)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(0x22)
        for byte in s.utf8 {
            switch byte {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x08: out += [0x5C, 0x62]
            case 0x0C: out += [0x5C, 0x66]
            case 0x0A: out += [0x5C, 0x6E]
            case 0x0D: out += [0x5C, 0x72]
            case 0x09: out += [0x5C, 0x74]
            case 0x00..<0x20, 0x7F:
                out += Array("\\u00".utf8)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(0x22)
    }
}
