import XCTest
import HAR
@testable import Redaction

/// The catalogue of credential formats, checked entry by entry against its own samples, as
/// gitleaks checks each rule: every sample is found whole by its entry and replaced by the engine
/// wherever it stands (under a generic JSON key, in a list, in a header, in a sentence, in a
/// form), and every look-alike is not matched by its entry.
final class KeyFormatCatalogueTests: XCTestCase {
    func testEveryEntryHasAnIdAndSamples() {
        var ids = Set<String>()
        for format in KeyFormats.all {
            XCTAssertTrue(ids.insert(format.id).inserted, "duplicate id \(format.id)")
            XCTAssertFalse(format.samples.isEmpty, format.id)
            XCTAssertFalse(format.lookAlikes.isEmpty, format.id)
            // A prefix of two bytes or more, or a one-byte marker after a lead (`<digits>|`).
            XCTAssertGreaterThanOrEqual(format.prefix.count, format.lead == nil ? 2 : 1, format.id)
        }
        // At least the formats gitleaks' rules know by their shape (129 of its 222 rules).
        XCTAssertGreaterThanOrEqual(KeyFormats.all.count, 250)
    }

    func testEverySampleIsMatchedWholeByItsEntry() {
        for format in KeyFormats.all {
            for sample in format.samples { XCTAssertTrue(KeyFormats.isWhole(format, sample), "\(format.id): \(sample)") }
        }
    }

    func testNoLookAlikeIsMatchedWholeByItsEntry() {
        for format in KeyFormats.all {
            for lookAlike in format.lookAlikes { XCTAssertFalse(KeyFormats.isWhole(format, lookAlike), "\(format.id): \(lookAlike)") }
        }
    }

    /// The engine finds each sample by its format alone: under names that say nothing.
    func testEverySampleIsReplacedWhereverItStands() {
        for format in KeyFormats.all {
            for sample in format.samples {
                let places = [
                    #"{"value": "\#(sample)"}"#, #"{"data": ["\#(sample)", "x"]}"#, #"{"note": "use \#(sample) here"}"#,
                    "config\n\(sample)\nend",
                ]
                for place in places {
                    let out = body(place)
                    XCTAssertFalse(out.contains(sample), "\(format.id): \(sample) survived in \(place) -> \(out)")
                }
                let r = redacted([makeEntry(url: "https://api.example.com/v1/items?value=\(sample.addingPercentEncodingForQuery())",
                                            requestHeaders: [("X-Telemetry-Thing", sample)])])
                XCTAssertFalse(text(r.bytes).contains(sample), "\(format.id): \(sample) survived in a URL or header")
            }
        }
    }

    /// Redacting twice changes nothing: a placeholder matches no format.
    func testPlaceholdersMatchNoEntry() {
        for placeholder in ["redacted-1", "redacted-12345", "user1@example.com", "internal-1.example.invalid"] {
            var copy = placeholder
            _ = copy
            for format in KeyFormats.all { XCTAssertFalse(KeyFormats.isWhole(format, placeholder), format.id) }
        }
    }
}

extension String {
    /// Percent-encodes what a query value cannot hold as it is.
    func addingPercentEncodingForQuery() -> String {
        var out = ""
        for b in utf8 {
            if RedactionEngine.isAlnum(b) || b == 0x2D || b == 0x5F || b == 0x2E || b == 0x7E {
                out.unicodeScalars.append(Unicode.Scalar(b))
            } else {
                out += "%" + String(b, radix: 16, uppercase: true).leftPadded(2)
            }
        }
        return out
    }

    fileprivate func leftPadded(_ n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}
