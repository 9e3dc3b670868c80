import Foundation
@testable import HAR
import TextEncodings
import XCTest

final class HARModelTests: XCTestCase {
    func testSerializeParseSerializeIsIdentity() throws {
        let log = makeSampleLog(entryCount: 6)
        for pretty in [true, false] {
            let first = log.serialize(pretty: pretty)
            let parsed = try HARLog.parse(first)
            XCTAssertEqual(parsed, log)
            XCTAssertEqual(parsed.serialize(pretty: pretty), first, "pretty: \(pretty)")
        }
    }

    func testGoldenFixtureIsByteIdentical() throws {
        // Fixtures/har/harrec-sample.har is the pretty output of makeSampleLog(entryCount: 3).
        let mine = makeSampleLog(entryCount: 3).serialize()
        let golden = (try? Fixtures.bytes("harrec-sample.har")) ?? []
        if mine != golden {
            let out = FileManager.default.temporaryDirectory.appendingPathComponent("harrec-sample.actual.har")
            try Data(mine).write(to: out)
            XCTFail("serialize() differs from the golden fixture; actual output written to \(out.path)")
        }
        XCTAssertEqual(try HARLog.parse(golden).serialize(), golden)
        XCTAssertEqual(HARValidator.validate(bytes: golden), [])
    }

    func testFieldOrderFollowsTheSpec() throws {
        let log = makeSampleLog(entryCount: 2)
        let json = try JSONParser.parse(log.serialize())
        func keys(_ v: JSONValue?) -> [String] { v?.objectValue?.map(\.key) ?? [] }
        XCTAssertEqual(keys(json), ["log"])
        XCTAssertEqual(keys(json["log"]), ["version", "creator", "pages", "entries", "comment", "_harrec"])
        let entry = json["log"]?["entries"]?[1]
        XCTAssertEqual(keys(entry), ["pageref", "startedDateTime", "time", "request", "response", "cache", "timings",
                                     "serverIPAddress", "connection", "comment", "_resourceType"])
        XCTAssertEqual(keys(entry?["request"]), ["method", "url", "httpVersion", "cookies", "headers", "queryString",
                                                 "postData", "headersSize", "bodySize"])
        XCTAssertEqual(keys(entry?["request"]?["postData"]), ["mimeType", "params", "text"])
        XCTAssertEqual(keys(entry?["response"]), ["status", "statusText", "httpVersion", "cookies", "headers", "content",
                                                  "redirectURL", "headersSize", "bodySize"])
        XCTAssertEqual(keys(entry?["response"]?["content"]), ["size", "compression", "mimeType", "text"])
        XCTAssertEqual(keys(entry?["response"]?["cookies"]?[0]),
                       ["name", "value", "path", "domain", "expires", "httpOnly", "secure", "sameSite"])
        XCTAssertEqual(keys(entry?["timings"]), ["blocked", "dns", "connect", "send", "wait", "receive", "ssl"])
        XCTAssertEqual(keys(entry?["cache"]), [])
        XCTAssertEqual(keys(json["log"]?["pages"]?[0]), ["startedDateTime", "id", "title", "pageTimings"])
    }

    func testMitmproxySampleParses() throws {
        let bytes = try Fixtures.bytes("mitmproxy-12.3.1-sample.har")
        let log = try HARLog.parse(bytes)
        XCTAssertEqual(log.version, "1.2")
        XCTAssertEqual(log.creator, HARCreator(name: "mitmproxy", version: "12.3.1", comment: ""))
        XCTAssertEqual(log.pages, [])
        XCTAssertEqual(log.entries.count, 8)
        let refused = log.entries[5]
        XCTAssertEqual(refused.response.status, 0)
        XCTAssertEqual(refused.response.content, HARContent(size: 0, mimeType: ""), "content {} gets defaults")
        XCTAssertEqual(refused.response.custom.map(\.key), ["_transferSize", "_error"])
        XCTAssertEqual(refused.response.custom[1].value.stringValue, "[Errno 111] Connect call failed ('127.0.0.1', 1)")
        XCTAssertNil(refused.serverIPAddress)
        XCTAssertEqual(refused.timings.connect, -1)
        let https = log.entries[4]
        XCTAssertEqual(https.request.cookies.map(\.name), ["sid", "theme"])
        XCTAssertEqual(https.request.queryString.map(\.value), ["2", "k-123"])
        XCTAssertEqual(https.timings.ssl ?? 0, 25.666236877441406, accuracy: 1e-12)
        let form = log.entries[3].request.postData
        XCTAssertEqual(form?.params?.map(\.value), ["1", "abc123", "two words"])
        XCTAssertEqual(log.entries[6].response.content.encoding, "base64")
        XCTAssertEqual(Base64.decode(log.entries[6].response.content.text ?? "")?.count, 3000)
        let ws = log.entries[7]
        XCTAssertEqual(ws.custom.map(\.key), ["_resourceType", "_webSocketMessages"])
        XCTAssertEqual(ws.custom[1].value.arrayValue?.count, 5)
        XCTAssertEqual(ws.custom[1].value[0]?["time"], .number("1796104686.4560542"), "custom numbers keep their literal")
        // Writing it back and reading again is stable.
        let rewritten = log.serialize()
        XCTAssertEqual(try HARLog.parse(rewritten).serialize(), rewritten)
    }

    func testLenientReaderDefaultsAndPreservesOddities() throws {
        let doc = #"""
        {"log": {"creator": {"name": "x", "version": 2}, "entries": [
          {"startedDateTime": "2026-01-01T00:00:00.000Z",
           "request": {"method": "GET", "url": "http://a/", "headersSize": "12", "cookies": [{"name": "c", "value": "v", "expires": null, "httpOnly": "yes"}]},
           "response": {"status": "204", "content": {"size": 63.0, "mimeType": "text/plain"}},
           "cache": {"beforeRequest": null, "_fromDisk": true},
           "timings": {"send": 1, "wait": 2, "receive": 3, "ssl": "n/a"},
           "unknown": 1, "_x": {"y": [1]}}
        ], "_top": 1}}
        """#
        let log = try HARLog.parse(utf8(doc))
        XCTAssertEqual(log.version, "1.1", "absent version means 1.1 (HAR 1.2 spec)")
        XCTAssertEqual(log.creator.version, "2")
        XCTAssertEqual(log.custom.map(\.key), ["_top"])
        let e = log.entries[0]
        XCTAssertEqual(e.time, 6, "missing time is the sum of the timings")
        XCTAssertEqual(e.request.headersSize, 12)
        XCTAssertEqual(e.request.bodySize, -1)
        XCTAssertEqual(e.request.httpVersion, "")
        XCTAssertEqual(e.request.cookies[0].custom.map(\.key), ["expires", "httpOnly"])
        XCTAssertNil(e.request.cookies[0].expires)
        XCTAssertEqual(e.response.status, 204)
        XCTAssertEqual(e.response.content.size, 63)
        XCTAssertEqual(e.cache.custom.map(\.key), ["beforeRequest", "_fromDisk"])
        XCTAssertEqual(e.timings.custom.map(\.key), ["ssl"])
        XCTAssertEqual(e.custom.map(\.key), ["unknown", "_x"])
        // Preserved oddities are written back.
        let again = try JSONParser.parse(log.serialize())
        XCTAssertEqual(again["log"]?["entries"]?[0]?["cache"]?["beforeRequest"], .null)
        XCTAssertEqual(again["log"]?["entries"]?[0]?["request"]?["cookies"]?[0]?["expires"], .null)
    }

    func testBOMIsSkipped() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + makeSampleLog(entryCount: 1).serialize()
        XCTAssertEqual(try HARLog.parse(bytes).entries.count, 1)
        XCTAssertEqual(HARValidator.validate(bytes: bytes), [])
        XCTAssertEqual(HARValidator.validateCountingEntries(bytes: bytes).entryCount, 1, "the count of what was validated")
        XCTAssertEqual(HARValidator.validateCountingEntries(bytes: utf8("{")).entryCount, 0)
    }

    func testNotAHAR() {
        XCTAssertThrowsError(try HARLog.parse(utf8("[1]"))) { error in
            XCTAssertEqual(error as? HARReadError, .notHAR("the top-level value is array, expected an object"))
        }
        XCTAssertThrowsError(try HARLog.parse(utf8(#"{"lag": {}}"#))) { error in
            XCTAssertEqual(error as? HARReadError, .notHAR("the top-level object has no \"log\" object"))
        }
        XCTAssertThrowsError(try HARLog.parse(utf8(#"{"log": {"#))) { error in
            guard case .json(let e)? = error as? HARReadError else { return XCTFail("\(error)") }
            XCTAssertEqual(e.line, 1)
            XCTAssertTrue("\(error)".hasPrefix("invalid JSON: line 1, column 10:"), "\(error)")
        }
    }

    func testTimingsTotalExcludesSSLAndMinusOne() {
        let t = HARTimings(blocked: -1, dns: 2, connect: 10, send: 1, wait: 0.5, receive: 0.25, ssl: 8)
        XCTAssertEqual(t.total, 13.75)
    }
}
