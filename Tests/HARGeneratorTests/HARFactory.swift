import HAR
import TestSupport

/// Builds HAR logs in code, for tests that need inputs a file would make hard to read.
enum HARFactory {
    static func entry(_ method: String = "GET", _ url: String, status: Int = 200, mimeType: String = "text/plain",
                      text: String? = nil, encoding: String? = nil, headers: [(String, String)] = [],
                      requestBody: String? = nil, second: Int = 0, custom: JSONFields = []) -> HAREntry {
        var responseHeaders = [HARHeader(name: "Content-Type", value: mimeType)]
        responseHeaders += headers.map { HARHeader(name: $0.0, value: $0.1) }
        let started = "2026-11-30T10:\(pad(second / 60)):\(pad(second % 60)).000Z"
        return HAREntry(
            startedDateTime: started, time: 5,
            request: HARRequest(method: method, url: url, httpVersion: "HTTP/1.1",
                                postData: requestBody.map { HARPostData(mimeType: "application/json", text: $0) }),
            response: HARResponse(status: status, statusText: "", httpVersion: "HTTP/1.1", headers: responseHeaders,
                                  content: HARContent(size: text?.utf8.count ?? 0, mimeType: mimeType, text: text,
                                                      encoding: encoding)),
            timings: HARTimings(send: 1, wait: 3, receive: 1), custom: custom)
    }

    /// A WebSocket entry; each message is (type, opcode, data, seconds after the open).
    static func webSocket(_ url: String, second: Int = 0, messages: [(String, Int, String, Double)]) -> HAREntry {
        let open = 1_796_032_800.0 + Double(second)
        let values: [JSONValue] = messages.map { type, opcode, data, offset in
            .object([("type", .string(type)), ("time", .double(open + offset)), ("opcode", .integer(opcode)),
                     ("data", .string(data))])
        }
        return entry("GET", url, status: 101, mimeType: "", second: second,
                     custom: [("_resourceType", .string("websocket")), ("_webSocketMessages", .array(values))])
    }

    static func log(_ entries: [HAREntry]) -> HARLog {
        HARLog(creator: HARCreator(name: "test", version: "1"), entries: entries)
    }

    private static func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}

/// Pieces that have broken string literals, comments or identifiers in code generators.
enum Hostile {
    static let pieces: [String] = [
        "\"", "\"\"\"", "\"\"\"#", "\"#", "#\"", "##", "#", "\\", "\\\\", "\\(x)", "\\#(x)", "\\u{41}", "\\n",
        "\n", "\r", "\r\n", "\t", "\0", "\u{7F}", "\u{1B}[31m", "\u{85}", "\u{2028}", "\u{2029}", "\u{FEFF}",
        "e\u{301}", "\u{301}", "\u{202E}", "\u{2066}", "שלום", "مرحبا", "日本語", "😀", "👩‍👩‍👧", "*/", "/*", "//",
        "class", "struct", "self", "Self", "Type", "import", "`", "$0", "@", " ", "  ", "ok", "x", "123",
    ]

    /// A string of 1 to `maximumPieces` pieces.
    static func string(_ random: inout SplitMix64, maximumPieces: Int = 8) -> String {
        var out = ""
        for _ in 0...random.below(maximumPieces) { out += random.pick(pieces) }
        return out
    }

    /// Every piece once, back to back.
    static let all = pieces.joined()
}
