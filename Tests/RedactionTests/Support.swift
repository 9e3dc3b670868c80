import Foundation
import HAR
@testable import Redaction
import TestSupport
import TextEncodings
import XCTest

/// Fixtures live in <package>/Fixtures/redaction, found relative to this file.
enum RedactionFixtures {
    static let directory = PackagePaths.fixtures("redaction")

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }
}

func utf8(_ s: String) -> [UInt8] { Array(s.utf8) }
func text(_ b: [UInt8]) -> String { String(decoding: b, as: UTF8.self) }

// MARK: - Building entries

let startBase = 1_796_104_685.0

/// A request/response entry with harrec's shape: timings that add up, content.size equal to the
/// text, bodySize and Content-Length equal to the body, so the validator accepts it.
func makeEntry(index: Int = 0, method: String = "GET", url: String = "https://api.example.com/v1/items",
               requestHeaders: [(String, String)] = [], requestBody: (mimeType: String, text: String)? = nil,
               requestBase64: Bool = false,
               status: Int = 200, responseHeaders: [(String, String)] = [],
               responseBody: (mimeType: String, text: String)? = nil, responseBase64: Bool = false,
               serverIPAddress: String? = "93.184.215.14", custom: JSONFields = []) -> HAREntry {
    var reqHeaders = requestHeaders.map { HARHeader(name: $0.0, value: $0.1) }
    var cookies: [HARCookie] = []
    for h in reqHeaders where h.name.lowercased() == "cookie" { cookies += HARBuild.cookies(fromCookieHeader: h.value) }
    var postData: HARPostData?
    var reqBodySize = 0
    if let requestBody {
        var bodyText = requestBody.text
        if requestBase64 { bodyText = Base64.encode(utf8(requestBody.text)) }
        reqBodySize = requestBody.text.utf8.count
        reqHeaders.append(HARHeader(name: "Content-Type", value: requestBody.mimeType))
        reqHeaders.append(HARHeader(name: "Content-Length", value: String(reqBodySize)))
        var params: [HARPostParam]?
        if requestBody.mimeType.hasPrefix("application/x-www-form-urlencoded") {
            params = HARBuild.formParams(fromURLEncoded: utf8(requestBody.text))
        }
        postData = HARPostData(mimeType: requestBody.mimeType, params: params, text: bodyText,
                               encoding: requestBase64 ? "base64" : nil)
    }
    let request = HARRequest(method: method, url: url, httpVersion: "HTTP/1.1", cookies: cookies, headers: reqHeaders,
                             queryString: HARBuild.queryString(fromURL: url), postData: postData, headersSize: -1,
                             bodySize: reqBodySize)
    var respHeaders = responseHeaders.map { HARHeader(name: $0.0, value: $0.1) }
    var respCookies: [HARCookie] = []
    for h in respHeaders where h.name.lowercased() == "set-cookie" {
        if let c = HARBuild.cookie(fromSetCookie: h.value) { respCookies.append(c) }
    }
    var content = HARContent(size: 0, mimeType: "x-unknown")
    var respBodySize = 0
    if let responseBody {
        let raw = utf8(responseBody.text)
        respBodySize = raw.count
        respHeaders.append(HARHeader(name: "Content-Type", value: responseBody.mimeType))
        respHeaders.append(HARHeader(name: "Content-Length", value: String(raw.count)))
        content = HARContent(size: raw.count, mimeType: responseBody.mimeType,
                             text: responseBase64 ? Base64.encode(raw) : responseBody.text,
                             encoding: responseBase64 ? "base64" : nil)
    }
    let redirect = respHeaders.first { $0.name.lowercased() == "location" }?.value ?? ""
    let response = HARResponse(status: status, statusText: "OK", httpVersion: "HTTP/1.1", cookies: respCookies,
                               headers: respHeaders, content: content, redirectURL: redirect, headersSize: -1,
                               bodySize: respBodySize)
    let timings = HARTimings(blocked: 0.5, dns: -1, connect: 1.25, send: 0.25, wait: 3, receive: 1, ssl: -1)
    return HAREntry(startedDateTime: HARDate.format(epochSeconds: startBase + Double(index)), time: timings.total,
                    request: request, response: response, timings: timings, serverIPAddress: serverIPAddress,
                    custom: custom)
}

/// Binary content that is not text: a PNG-like header and pseudo-random bytes.
func binaryBytes(_ n: Int, seed: UInt64) -> [UInt8] {
    var rng = SplitMix64(seed: seed)
    var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0xFF, 0xFE]
    while out.count < n { out.append(UInt8.random(in: 0...255, using: &rng)) }
    return out
}

func makeLog(_ entries: [HAREntry]) -> HARLog {
    HARLog(creator: HARCreator(name: "harrec-tests", version: "1"), entries: entries)
}

// MARK: - Running the engine

/// Redacts a copy; returns it, the report and the pretty-serialized bytes.
@discardableResult
func redacted(_ log: HARLog, config: RedactionConfiguration = RedactionConfiguration())
    -> (log: HARLog, report: RedactionReport, bytes: [UInt8]) {
    var copy = log
    let engine = RedactionEngine(config: config)
    let report = engine.redact(&copy)
    return (copy, report, copy.serialize(pretty: true))
}

func redacted(_ entries: [HAREntry], config: RedactionConfiguration = RedactionConfiguration())
    -> (log: HARLog, report: RedactionReport, bytes: [UInt8]) {
    redacted(makeLog(entries), config: config)
}

/// The findings `redact --check` would list for `log`.
func findings(_ log: HARLog, config: RedactionConfiguration = RedactionConfiguration()) -> [RedactionFinding] {
    var copy = log
    return RedactionEngine(config: config, collectFindings: true).redact(&copy).findings
}

/// Scans `input` as free text with a fresh engine; the input itself when nothing changed.
func scanned(_ input: String, config: RedactionConfiguration = RedactionConfiguration(),
             engine: RedactionEngine? = nil) -> String {
    let e = engine ?? RedactionEngine(config: config)
    return e.standalone { $0.scanText(input, .body, { "" }) } ?? input
}

/// Asserts that each text scans to its expected output with a fresh engine, and that scanning
/// that output again changes nothing.
func assertScans(_ cases: [(text: String, expected: String)], file: StaticString = #filePath, line: UInt = #line) {
    for (text, expected) in cases {
        let once = scanned(text)
        XCTAssertEqual(once, expected, text, file: file, line: line)
        XCTAssertEqual(scanned(once), once, "a second run changed \(text)", file: file, line: line)
    }
}

/// Redacts `input` as a body that may be JSON (JSON when it parses, else text).
func body(_ input: String, config: RedactionConfiguration = RedactionConfiguration(),
          engine: RedactionEngine? = nil) -> String {
    let e = engine ?? RedactionEngine(config: config)
    return e.standalone { $0.redactTextOrJSON(input, .body, { "" }) } ?? input
}

func header(_ headers: [HARHeader], _ name: String) -> String? {
    headers.first { $0.name.lowercased() == name.lowercased() }?.value
}

func configuration(rules json: String) throws -> RedactionConfiguration {
    var c = RedactionConfiguration()
    try c.apply(rulesFile: utf8(json))
    return c
}

func jsonIsValid(_ s: String) -> Bool { (try? JSONParser.parse(utf8(s))) != nil }

/// base64url-decodes one JWT part into a JSON object.
func jwtPart(_ token: String, _ index: Int) -> JSONFields? {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3, let bytes = Base64URL.decode(Array(parts[index].utf8)) else { return nil }
    return try? JSONParser.parse(bytes).objectValue
}

func makeJWT(header: String, payload: String, signature: String = "c2lnbmF0dXJlLWJ5dGVz") -> String {
    Base64URL.encode(utf8(header)) + "." + Base64URL.encode(utf8(payload)) + "." + signature
}

func assertNoOccurrence(_ needles: [String], in haystack: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
    let hay = text(haystack)
    for needle in needles where hay.contains(needle) {
        XCTFail("'\(needle)' survived redaction", file: file, line: line)
    }
}
