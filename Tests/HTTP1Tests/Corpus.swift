import Foundation
import HTTP1
import TestSupport

/// One case of the Markdown corpus in Fixtures/http1 (see the README section at the top of
/// requests.md for the format).
struct CorpusCase {
    var name: String
    var line: Int
    var input: [UInt8]
    var expected: [String]
    var options = DecoderVerifier.Options()
}

enum Corpus {
    static var fixturesDirectory: URL { PackagePaths.fixtures("http1") }

    static func load(_ file: String) throws -> [CorpusCase] {
        let url = fixturesDirectory.appendingPathComponent(file)
        let text = try String(contentsOf: url, encoding: .utf8)
        return try parse(text, file: file)
    }

    struct FormatError: Error, CustomStringConvertible {
        var description: String
    }

    static func parse(_ text: String, file: String) throws -> [CorpusCase] {
        var cases: [CorpusCase] = []
        var current: CorpusCase?
        var fence: String?  // info string of the open fence
        var block: [String] = []
        let lines = text.components(separatedBy: "\n")
        func finishCase() throws {
            guard let c = current else { return }
            guard !c.expected.isEmpty else { throw FormatError(description: "\(file):\(c.line) case \(c.name) has no events") }
            cases.append(c)
            current = nil
        }
        for (index, rawLine) in lines.enumerated() {
            let line = rawLine.hasSuffix("\r") ? String(rawLine.dropLast()) : rawLine
            if let info = fence {
                if line.hasPrefix("```") {
                    fence = nil
                    guard current != nil else { continue }
                    switch info {
                    case "http": current!.input = try decodeRaw(block.joined(), file: file, line: index)
                    case "events": current!.expected = block.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
                    default: break
                    }
                    block = []
                } else {
                    block.append(line)
                }
                continue
            }
            if line.hasPrefix("```") {
                fence = String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces)
                block = []
                continue
            }
            if line.hasPrefix("### ") {
                try finishCase()
                current = CorpusCase(name: String(line.dropFirst(4)), line: index + 1, input: [], expected: [])
                continue
            }
            if line.hasPrefix("## ") || line.hasPrefix("# ") {
                try finishCase()
                continue
            }
            if current != nil, line.hasPrefix("- ") {
                let option = line.dropFirst(2)
                guard let colon = option.firstIndex(of: ":") else { continue }
                let key = option[..<colon].trimmingCharacters(in: .whitespaces)
                let value = option[option.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                switch key {
                case "methods": current!.options.methods = value.split(separator: " ").map(String.init)
                case "eof": current!.options.eof = value != "no"
                case "limits":
                    for pair in value.split(separator: " ") {
                        let kv = pair.split(separator: "=")
                        guard kv.count == 2, let n = Int(kv[1]) else {
                            throw FormatError(description: "\(file):\(index + 1) bad limit \(pair)")
                        }
                        switch kv[0] {
                        case "maxHeadBytes": current!.options.limits.maxHeadBytes = n
                        case "maxFieldCount": current!.options.limits.maxFieldCount = n
                        case "maxChunkExtensionBytes": current!.options.limits.maxChunkExtensionBytes = n
                        case "maxTrailerBytes": current!.options.limits.maxTrailerBytes = n
                        case "maxLeadingEmptyLines": current!.options.limits.maxLeadingEmptyLines = n
                        default: throw FormatError(description: "\(file):\(index + 1) unknown limit \(kv[0])")
                        }
                    }
                default: break
                }
            }
        }
        try finishCase()
        return cases
    }

    /// Decodes a raw block: text is literal, real newlines are ignored, and
    /// `\r \n \t \0 \\ \xNN` are escapes; `\{N:text}` repeats `text` N times.
    static func decodeRaw(_ s: String, file: String, line: Int) throws -> [UInt8] {
        let b = Array(s.utf8)
        var out: [UInt8] = []
        var i = 0
        func fail(_ why: String) -> FormatError { FormatError(description: "\(file):\(line) \(why)") }
        while i < b.count {
            let c = b[i]
            guard c == 0x5C else { out.append(c); i += 1; continue }
            guard i + 1 < b.count else { throw fail("dangling backslash") }
            let e = b[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "0"): out.append(0x00)
            case 0x5C: out.append(0x5C)
            case UInt8(ascii: "x"):
                guard i + 2 <= b.count, let v = UInt8(String(decoding: b[i..<(i + 2)], as: UTF8.self), radix: 16)
                else { throw fail("bad \\x escape") }
                out.append(v)
                i += 2
            case UInt8(ascii: "{"):
                guard let close = b[i...].firstIndex(of: UInt8(ascii: "}")),
                      let colon = b[i..<close].firstIndex(of: UInt8(ascii: ":")),
                      let n = Int(String(decoding: b[i..<colon], as: UTF8.self))
                else { throw fail("bad \\{N:text} repeat") }
                let unit = Array(b[(colon + 1)..<close])
                for _ in 0..<n { out += unit }
                i = close + 1
            default:
                throw fail("unknown escape \\\(String(UnicodeScalar(e)))")
            }
        }
        return out
    }
}
