@testable import CLI
import XCTest

final class ArgumentsTests: XCTestCase {
    let spec = CommandSpec(name: "record", abstract: "Record.", usage: "harrec record --out F",
                           options: [OptionSpec("out", short: "o", .value(placeholder: "<file>"), help: "Output."),
                                     OptionSpec("http", .value(placeholder: "<port>"), help: "Port."),
                                     OptionSpec("quiet", short: "q", .flag, help: "Quiet.")])

    func testValuesFlagsAndInlineValues() throws {
        let parsed = try spec.parse(["--out", "a.har", "--http=8888", "-q"])
        XCTAssertEqual(parsed.value("out"), "a.har")
        XCTAssertEqual(parsed.value("http"), "8888")
        XCTAssertTrue(parsed.flag("quiet"))
        XCTAssertEqual(try spec.parse(["-o", "b.har"]).value("out"), "b.har")
    }

    func testRepeatedOptionsKeepEveryValue() throws {
        let parsed = try spec.parse(["--out", "a", "--out", "b"])
        XCTAssertEqual(parsed.allValues("out"), ["a", "b"])
        XCTAssertEqual(parsed.value("out"), "b")
    }

    func testUnknownOptionSuggestsTheNearestOne() {
        XCTAssertThrowsError(try spec.parse(["--otu", "x"])) { error in
            XCTAssertEqual((error as? UsageError)?.message, "unknown option '--otu'; did you mean '--out'?")
        }
        XCTAssertThrowsError(try spec.parse(["--zzzzzzzz"])) { error in
            XCTAssertTrue((error as? UsageError)?.message.contains("see 'harrec record --help'") == true)
        }
    }

    func testMissingValueSaysWhatToType() {
        XCTAssertThrowsError(try spec.parse(["--out"])) { error in
            XCTAssertEqual((error as? UsageError)?.message, "option '--out' needs a value: --out <file>")
        }
        XCTAssertThrowsError(try spec.parse(["--quiet=yes"]))
    }

    func testPositionals() throws {
        let validate = CommandSpec(name: "validate", abstract: "", usage: "harrec validate <file>", options: [], positionals: ["file"])
        XCTAssertEqual(try validate.parse(["x.har"]).positionals, ["x.har"])
        XCTAssertThrowsError(try validate.parse([]))
        XCTAssertThrowsError(try validate.parse(["a", "b"]))
        XCTAssertEqual(try validate.parse(["--", "-weird.har"]).positionals, ["-weird.har"])
        XCTAssertTrue(try validate.parse(["--help"]).flag("help"), "help needs no positional")
    }

    func testHelpTextHasTheStandardSections() {
        let help = spec.helpText(subcommands: [spec])
        for section in ["OVERVIEW:", "USAGE:", "OPTIONS:", "SUBCOMMANDS:", "-o, --out <file>", "--version"] {
            XCTAssertTrue(help.contains(section), "missing \(section) in\n\(help)")
        }
    }

    func testPortsAndByteCounts() throws {
        XCTAssertEqual(try parsePort("0", option: "http"), 0)
        XCTAssertEqual(try parsePort("65535", option: "http"), 65535)
        XCTAssertThrowsError(try parsePort("65536", option: "http"))
        XCTAssertThrowsError(try parsePort("-1", option: "http"))
        XCTAssertEqual(try parseByteCount("1000", option: "max-body"), 1000)
        XCTAssertEqual(try parseByteCount("64k", option: "max-body"), 65536)
        XCTAssertEqual(try parseByteCount("64MiB", option: "max-body"), 64 << 20)
        XCTAssertEqual(try parseByteCount("1g", option: "max-body"), 1 << 30)
        XCTAssertThrowsError(try parseByteCount("12x", option: "max-body"))
        XCTAssertThrowsError(try parseByteCount("", option: "max-body"))
        XCTAssertThrowsError(try parseByteCount("99999999999999999999g", option: "max-body"))
    }

    func testSeconds() throws {
        XCTAssertEqual(try parseSeconds("15", option: "t"), 15)
        XCTAssertEqual(try parseSeconds("0.5", option: "t"), 0.5)
        XCTAssertThrowsError(try parseSeconds("0", option: "t"))
        XCTAssertThrowsError(try parseSeconds("-1", option: "t"))
        XCTAssertThrowsError(try parseSeconds("nan", option: "t"))
        XCTAssertThrowsError(try parseSeconds("1e9", option: "t"))
    }

    func testEditDistance() {
        XCTAssertEqual(editDistance("kitten", "sitting"), 3)
        XCTAssertEqual(editDistance("", "abc"), 3)
        XCTAssertEqual(editDistance("same", "same"), 0)
    }
}
