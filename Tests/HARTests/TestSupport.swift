import Foundation
@testable import HAR
import TestSupport
import TextEncodings
import XCTest

/// Fixtures live in <package>/Fixtures/har, found relative to this file.
enum Fixtures {
    static let directory = PackagePaths.fixtures("har")

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    static let e2eDirectory = PackagePaths.root.appendingPathComponent("Tests/e2e", isDirectory: true)
}

func utf8(_ s: String) -> [UInt8] { Array(s.utf8) }
func text(_ b: [UInt8]) -> String { String(decoding: b, as: UTF8.self) }

/// A harrec-style log exercising every model member.
func makeSampleLog(entryCount: Int = 3) -> HARLog {
    var entries: [HAREntry] = []
    let base = 1_796_104_685.0  // 2026-12-01T05:58:05Z
    for i in 0..<entryCount {
        let body = "{\"id\": \(i), \"name\": \"caf\u{E9} \u{1F600} line\u{2028}sep \\\" quote\", \"tab\": \"\t\"}"
        let timings = HARTimings(blocked: 0.125, dns: -1, connect: 3.5, send: 0.25, wait: 10.001, receive: 1.5,
                                 ssl: 2.25)
        let request = HARRequest(
            method: i % 2 == 0 ? "GET" : "POST",
            url: "https://api.example.test/items/\(i)?page=\(i)&q=two+words",
            httpVersion: "HTTP/1.1",
            cookies: [HARCookie(name: "sid", value: "abc\(i)")],
            headers: [HARHeader(name: "Host", value: "api.example.test"),
                      HARHeader(name: "Cookie", value: "sid=abc\(i)")],
            queryString: [HARQueryParam(name: "page", value: "\(i)"), HARQueryParam(name: "q", value: "two words")],
            postData: i % 2 == 1
                ? HARPostData(mimeType: "application/x-www-form-urlencoded",
                              params: [HARPostParam(name: "a", value: "1"), HARPostParam(name: "b", value: "x y")],
                              text: "a=1&b=x+y")
                : nil,
            headersSize: 120 + i,
            bodySize: i % 2 == 1 ? 9 : 0)
        let binary = i % 3 == 2
        let bodyBytes: [UInt8] = binary ? (0..<50).map { UInt8(($0 * 37 + i) & 0xFF) } : Array(body.utf8)
        let content = HARContent(size: bodyBytes.count, compression: binary ? nil : 10,
                                 mimeType: binary ? "application/octet-stream" : "application/json",
                                 text: binary ? Base64.encode(bodyBytes) : body,
                                 encoding: binary ? "base64" : nil)
        let response = HARResponse(
            status: 200, statusText: "OK", httpVersion: "HTTP/1.1",
            cookies: [HARCookie(name: "theme", value: "dark", path: "/", domain: "example.test",
                                expires: "2027-01-01T00:00:00.000Z", httpOnly: true, secure: true, sameSite: "Lax")],
            headers: [HARHeader(name: "Content-Type", value: content.mimeType)],
            content: content, redirectURL: "", headersSize: 80, bodySize: bodyBytes.count - (binary ? 0 : 10))
        var custom: JSONFields = [("_resourceType", .string("xhr"))]
        if i == 0 {
            custom.append(("_webSocketMessages", .array([
                .object([("type", .string("send")), ("time", .number("1796104686.4560542")), ("opcode", .number("1")),
                         ("data", .string("hello"))]),
            ])))
        }
        entries.append(HAREntry(
            pageref: "page_1",
            startedDateTime: HARDate.format(epochSeconds: base + Double(i) * 0.0125),
            time: timings.total, request: request, response: response, cache: HARCache(), timings: timings,
            serverIPAddress: "192.0.2.\(i % 250)", connection: "\(1000 + i)", comment: i == 1 ? "second" : nil,
            custom: custom))
    }
    return HARLog(
        creator: HARCreator(name: "harrec", version: "0.1.0"),
        browser: nil,
        pages: [HARPage(startedDateTime: HARDate.format(epochSeconds: base), id: "page_1", title: "Recording",
                        pageTimings: HARPageTimings(onContentLoad: -1, onLoad: -1))],
        entries: entries, comment: "recorded by harrec",
        custom: [("_harrec", .object([("mode", .string("regular"))]))])
}

/// Sets (or with nil removes) the value at a path like "log.entries[0].request.url".
func mutate(_ root: inout JSONValue, _ path: String, _ newValue: JSONValue?) {
    var parts: [Either] = []
    for seg in path.split(separator: ".") {
        var s = Substring(seg)
        if let open = s.firstIndex(of: "[") {
            let name = s[..<open]
            if !name.isEmpty { parts.append(.key(String(name))) }
            s = s[open...]
            while let o = s.firstIndex(of: "["), let c = s.firstIndex(of: "]") {
                parts.append(.index(Int(s[s.index(after: o)..<c])!))
                s = s[s.index(after: c)...]
            }
        } else {
            parts.append(.key(String(s)))
        }
    }
    set(&root, parts[...], newValue)
}

enum Either { case key(String), index(Int) }

private func set(_ v: inout JSONValue, _ parts: ArraySlice<Either>, _ newValue: JSONValue?) {
    guard let first = parts.first else { return }
    let rest = parts.dropFirst()
    switch (first, v) {
    case (.key(let k), .object(var fields)):
        if let idx = fields.lastIndex(where: { $0.key == k }) {
            if rest.isEmpty {
                if let newValue { fields[idx].value = newValue } else { fields.remove(at: idx) }
            } else {
                set(&fields[idx].value, rest, newValue)
            }
        } else if rest.isEmpty, let newValue {
            fields.append((k, newValue))
        }
        v = .object(fields)
    case (.index(let i), .array(var items)):
        if rest.isEmpty {
            if let newValue { items[i] = newValue } else { items.remove(at: i) }
        } else {
            set(&items[i], rest, newValue)
        }
        v = .array(items)
    default:
        XCTFail("path does not match document")
    }
}

