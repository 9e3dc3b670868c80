// Spelling arbitrary recorded text as Swift source that always compiles and evaluates to exactly
// the same string: literals, identifiers and comments.

/// Swift source spellings for values taken from a recording.
enum SwiftSource {
    // MARK: - String literals

    /// An escaped single-line literal (`"..."`) for any string. Exact for every input, so it is
    /// used for short values (headers, paths, labels) and whenever a raw literal cannot hold the
    /// text. Printable non-ASCII characters stay as they are, so URLs and messages stay readable.
    static func escapedLiteral(_ value: String) -> String {
        var out = "\""
        out.reserveCapacity(value.utf8.count + 2)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\0": out += "\\0"
            default:
                if needsEscape(scalar) {
                    out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
        return out
    }

    /// The most readable literal that is exact: a raw literal (`#"..."#`, or `#"""` over several
    /// lines when the text has line feeds) when the text allows one, else `escapedLiteral`.
    ///
    /// Raw literals cannot hold C0 controls other than LF and tab (the lexer rejects them, and a
    /// CR would be normalized to LF), DEL, or characters that reorder or hide text in a review
    /// (bidi controls, line separators); tab is only accepted in the multi-line form.
    /// A multi-line literal is written with its closing delimiter in column 0, so no indentation
    /// is stripped; `indent` is not applied inside it for the same reason.
    static func readableLiteral(_ value: String) -> String {
        var hasLineFeed = false
        var hasTab = false
        for scalar in value.unicodeScalars {
            if scalar == "\n" { hasLineFeed = true; continue }
            if scalar == "\t" { hasTab = true; continue }
            if needsEscape(scalar) || scalar.value < 0x20 { return escapedLiteral(value) }
        }
        // Short one-line texts without quotes or backslashes read best as ordinary literals.
        if !hasLineFeed && !hasTab {
            if !value.unicodeScalars.contains(where: { $0 == "\"" || $0 == "\\" }) { return escapedLiteral(value) }
        }
        // More `#` than the longest run in the text: then neither `"` nor `\` followed by
        // that many `#` (a closing delimiter or an escape) can occur inside it.
        let pounds = String(repeating: "#", count: longestRun(of: "#", in: value) + 1)
        if hasLineFeed || hasTab {
            return pounds + "\"\"\"\n" + value + "\n\"\"\"" + pounds
        }
        return pounds + "\"" + value + "\"" + pounds
    }

    /// Characters written as `\u{...}` in escaped literals and never put into raw literals or
    /// comments: controls, DEL, C1 controls, line/paragraph separators, the BOM and bidi
    /// controls (which can make code read differently from what it does).
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x20 || (v >= 0x7F && v <= 0x9F) { return true }
        switch v {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029, 0xFEFF: return true
        default: return false
        }
    }

    static func longestRun(of character: Unicode.Scalar, in value: String) -> Int {
        var longest = 0
        var current = 0
        for scalar in value.unicodeScalars {
            if scalar == character {
                current += 1
                longest = max(longest, current)
            } else {
                current = 0
            }
        }
        return longest
    }

    // MARK: - Comments

    /// Text safe inside a `//` comment: one line, ASCII only (everything else as `\u{...}`),
    /// shortened to `limit` characters with an ellipsis.
    static func commentText(_ value: String, limit: Int = 80) -> String {
        var out = ""
        var count = 0
        for scalar in value.unicodeScalars {
            let piece: String
            if scalar.value >= 0x20 && scalar.value < 0x7F {
                piece = String(Character(scalar))
            } else {
                switch scalar {
                case "\n": piece = "\\n"
                case "\r": piece = "\\r"
                case "\t": piece = "\\t"
                default: piece = "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                }
            }
            if count + piece.count > limit {
                out += "..."
                break
            }
            out += piece
            count += piece.count
        }
        return out
    }

    // MARK: - Identifiers

    /// Swift keywords that cannot be used as plain identifiers in any position.
    static let keywords: Set<String> = [
        "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension", "fileprivate",
        "func", "import", "init", "inout", "internal", "let", "nonisolated", "open", "operator", "private",
        "precedencegroup", "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias",
        "var", "break", "case", "catch", "continue", "default", "defer", "do", "else", "fallthrough",
        "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while", "Any", "as",
        "await", "false", "is", "nil", "self", "Self", "super", "throws", "true", "try", "_", "Type",
        "Protocol", "some", "any", "package",
    ]

    /// The words of `value`: runs of ASCII letters and digits, also split at lower-to-upper
    /// case changes (`sendingAttachments` → `sending`, `Attachments`). Everything else separates.
    static func words(_ value: String) -> [String] {
        var words: [String] = []
        var current = ""
        var previousWasLower = false
        for scalar in value.unicodeScalars {
            let isUpper = scalar.value >= 0x41 && scalar.value <= 0x5A
            let isLower = scalar.value >= 0x61 && scalar.value <= 0x7A
            let isDigit = scalar.value >= 0x30 && scalar.value <= 0x39
            guard isUpper || isLower || isDigit else {
                if !current.isEmpty { words.append(current) }
                current = ""
                previousWasLower = false
                continue
            }
            if isUpper && previousWasLower {
                words.append(current)
                current = ""
            }
            current.unicodeScalars.append(scalar)
            previousWasLower = isLower || isDigit
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// `UpperCamelCase` from the words of `value`, keeping each word's inner capitals
    /// (`sendingAttachments` → `SendingAttachments`, `SEND_MESSAGE` → `SendMessage`).
    /// Words written entirely in capitals are lowercased after their first letter.
    static func upperCamelCase(_ value: String) -> String {
        words(value).map { word in
            let rest = word.dropFirst()
            let tail = word.allSatisfy({ !$0.isLowercase }) ? rest.lowercased() : String(rest)
            return word.prefix(1).uppercased() + tail
        }.joined()
    }

    /// A type name: `UpperCamelCase` of `value` (ASCII letters and digits only; `fallback` when
    /// nothing is left) followed by `suffix`, `_` in front of a leading digit, backquotes around
    /// a keyword.
    static func typeName(_ value: String, suffix: String, fallback: String) -> String {
        var name = upperCamelCase(value)
        if name.isEmpty { name = fallback }
        name += suffix
        if let first = name.unicodeScalars.first, first.value >= 0x30 && first.value <= 0x39 { name = "_" + name }
        if keywords.contains(name) { name = "`" + name + "`" }
        return name
    }

    // MARK: - Numbers

    /// A Swift floating-point literal for a finite value (`0` for NaN and infinities, which have no
    /// literal spelling).
    static func doubleLiteral(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        return String(describing: value)
    }

    /// A duration in seconds rounded to the millisecond, as a literal (`0.343`, `1.5`, `10.0`):
    /// HAR times are milliseconds, and their sums divided by 1000 are rarely short decimals
    /// (0.3 + 0.043 ms is `0.00034300000000000004` s). nil for what rounds to no time at all: 0,
    /// less than half a millisecond, negative, NaN or infinite.
    static func secondsLiteral(_ seconds: Double) -> String? {
        guard seconds.isFinite else { return nil }
        let milliseconds = (seconds * 1000).rounded()
        guard milliseconds > 0 else { return nil }
        // Beyond 2^53 ms (285,000 years) the product is already whole, and dividing may not round-trip.
        guard milliseconds.isFinite, milliseconds < 9_007_199_254_740_992 else { return doubleLiteral(seconds) }
        return doubleLiteral(milliseconds / 1000)
    }
}
