#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HAR
import HARScenarios

/// What `SwiftMockGenerator.generate` produces and how.
public struct GeneratorOptions: Sendable {
    /// Bodies up to this many (decoded) bytes are written into the Swift source; larger ones go to
    /// fixture files. `harrec generate --inline-limit BYTES`.
    public static let defaultInlineLimit = 4096
    /// Where `harrec generate` writes fixtures unless `--fixtures` says otherwise.
    public static let defaultFixturesDirectory = "Fixtures/API/v1"

    /// The scenario's name as given (`--scenario NAME`): the `scenarioId`, the prefix of the type
    /// names (in UpperCamelCase) and, made file-name-safe, the directory of its fixtures
    /// (`fixtureDirectoryName`).
    public var scenarioName: String
    /// See `defaultInlineLimit`. Negative values count as 0 (every non-empty body in a fixture).
    public var inlineLimit: Int
    /// When true (the default), every valid JSON response body goes to a pretty-printed,
    /// key-sorted `.json` fixture whatever its size, because reviewing recorded API responses in
    /// diffs is what fixtures are for. When false, JSON bodies follow `inlineLimit` like other
    /// text (inline as recorded up to the limit, a pretty-printed fixture beyond it).
    public var jsonBodiesInFixtures: Bool
    /// The HAR's file name, mentioned in the generated files' header comment (no path, so output
    /// does not depend on where the HAR was).
    public var sourceName: String?
    /// How entries become queue items (host filter, volatile query items, body matching, latency);
    /// passed to `HARScenarioBuilder.items(from:options:)`. The host filter also selects WebSockets.
    public var scenario: HARScenarioOptions

    public init(scenarioName: String, inlineLimit: Int = GeneratorOptions.defaultInlineLimit,
                jsonBodiesInFixtures: Bool = true, sourceName: String? = nil,
                scenario: HARScenarioOptions = HARScenarioOptions()) {
        self.scenarioName = scenarioName
        self.inlineLimit = inlineLimit
        self.jsonBodiesInFixtures = jsonBodiesInFixtures
        self.sourceName = sourceName
        self.scenario = scenario
    }

    /// The directory below the fixtures directory (`--fixtures`) that holds this scenario's
    /// fixtures: `scenarioName` reduced to file-name-safe ASCII (letters, digits, `_`, `-`, `.`;
    /// other runs become one `-`, no leading or trailing `-` or `.`), at most 64 characters,
    /// `scenario` when nothing is left. `.fixture(...)` names in the generated source start with it.
    public var fixtureDirectoryName: String { FixturePlanner.directoryName(scenarioName) }

    /// A host filter for `scenario.includeHost` from `--hosts REGEX`: keeps hosts the pattern
    /// matches anywhere, case-insensitively. Throws when the pattern does not compile.
    public static func hostFilter(pattern: String) throws -> @Sendable (String) -> Bool {
        // A compiled Regex is immutable once made, but not marked Sendable.
        let box = UncheckedSendable(try Regex(pattern).ignoresCase())
        return { host in (try? box.value.firstMatch(in: host)) != nil }
    }
}

/// One output file of the generator.
public struct GeneratedFile: Sendable, Equatable {
    /// What a file is, which also says which directory `relativePath` is relative to.
    public enum Role: String, Sendable, Equatable {
        /// `<Name>HTTPScenario.swift`, relative to the output directory (`--out`).
        case scenario
        /// `<Name>WebSocketEvents.swift`, relative to the output directory (`--out`).
        case webSocketEvents
        /// A response body, relative to the fixtures directory (`--fixtures`):
        /// `<scenario directory>/<name>.<ext>` (see `GeneratorOptions.fixtureDirectoryName`).
        case fixture
    }

    /// The file's path below the directory its role names: a plain file name for Swift sources, the
    /// scenario's fixture directory and a file name for fixtures (`browse/v1-orders.json`). No
    /// component is empty or starts with `.`.
    public var relativePath: String
    /// What the file is, and so which directory it goes to.
    public var role: Role
    /// The exact content (UTF-8 source, or a body's bytes).
    public var bytes: [UInt8]

    /// Creates a file description.
    public init(relativePath: String, role: Role, bytes: [UInt8]) {
        self.relativePath = relativePath
        self.role = role
        self.bytes = bytes
    }
}

/// Why the generator produced nothing.
public enum GeneratorError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing to generate: no HTTP exchange with a response and no WebSocket survived the filters.
    case nothingToGenerate(entries: Int)

    public var description: String {
        switch self {
        case .nothingToGenerate(let entries):
            return "nothing to generate: none of the \(entries) entries is an HTTP exchange with a response or a WebSocket (check --hosts)"
        }
    }
}
