// The scenario model that generated code builds (copied from the HARMocking API contract).

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// MARK: - Scenario model (what generated code builds)

/// Names a scenario; `-scenario NAME` on the command line selects it.
public struct ScenarioIdentifier: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The name as given on the command line.
    public var rawValue: String
    /// Creates an identifier from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates an identifier from its name.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// Creates an identifier from a string literal.
    public init(stringLiteral value: String) { self.rawValue = value }
    /// The name.
    public var description: String { rawValue }
}

/// A set of canned responses, served in order.
public protocol Scenario: Sendable {
    /// The name `-scenario NAME` selects.
    var scenarioId: ScenarioIdentifier { get }
    /// The items, in the order they are tried.
    var responseQueue: [ResponseQueueItem] { get }
}

/// How many times an item may be served.
public enum Repeatability: Sendable, Equatable {
    /// Served for one matching request.
    case once
    /// Served for every matching request (after earlier items are used up).
    case always
    /// Served for this many matching requests; 0 or less never serves.
    case times(Int)
}

/// One query item a request must carry.
public enum QueryItemMatch: Sendable, Equatable {
    /// The name with exactly this value (`nil`: the item has no `=`, as in `?flag`).
    case equals(String, String?)
    /// The name with any value (used for redacted or volatile values).
    case present(String)
}

/// What a request's query items that a condition does not list do to the match.
public enum UnlistedQueryItems: Sendable, Equatable {
    /// The request fails the match, except for items with these names (compared lowercased), which
    /// it may carry or not (cache busters): the request's items are the listed ones, as a
    /// multiset, in any order. Generated and replayed items match this way.
    case rejected(except: Set<String> = [])
    /// Ignored: the listed items must be there, and any others may be. Hand-written stubs
    /// (`.get("/v1/search").query("q", "swift")`) match this way.
    case allowed
}

/// What a request body must be, when it matters.
public enum BodyMatch: Sendable, Equatable {
    /// Byte-exact text (UTF-8).
    case text(String)
    /// Equal as JSON values (key order and whitespace ignored).
    case json(String)
    /// JSON that contains this JSON: every key given, with a value that contains the one given
    /// (arrays element by element, same length); other keys are ignored.
    case jsonSubset(String)
}

/// A path that matches more than one value. When a condition has one, its `path` is not compared.
public enum PathPattern: Sendable, Equatable, CustomStringConvertible {
    /// `/v1/orders/{id}`: each `{name}` segment matches exactly one non-empty segment; the other
    /// segments must be equal (percent-encoded, as in the URL). A last segment `{name...}` matches
    /// one or more segments.
    case template(String)
    /// A regular expression (`NSRegularExpression` syntax) that must match the whole path.
    case regex(String)

    public var description: String {
        switch self {
        case .template(let t): return "template \(t)"
        case .regex(let r): return "regex \(r)"
        }
    }
}

/// A request header condition. Names are case-insensitive; repeated headers are compared joined
/// with ",", as URLRequest joins them.
public enum HeaderMatch: Sendable, Equatable {
    /// The header with exactly this value.
    case equals(String, String)
    /// The header with any value.
    case present(String)
    /// No such header.
    case absent(String)

    package var name: String {
        switch self {
        case .equals(let n, _), .present(let n), .absent(let n): return n
        }
    }
}

/// A request as matching sees it, for predicates: what URLSession sent, or what a client sent to
/// `harrec replay`.
public struct MockRequest: Sendable, Equatable {
    /// Uppercased.
    public var method: String
    /// The absolute URL as sent.
    public var url: String
    /// Header values by lowercased name (repeated headers joined with ",").
    public var headers: [String: String]
    /// The body bytes (empty when there was none).
    public var body: [UInt8]

    /// Creates a request; header names are lowercased.
    public init(method: String, url: String, headers: [String: String] = [:], body: [UInt8] = []) {
        self.method = method.uppercased()
        self.url = url
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[name.lowercased()] = value }
        self.headers = lowered
        self.body = body
    }

    /// The value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The body as UTF-8 text, nil when it is not valid UTF-8.
    public var bodyText: String? { String(validating: body, as: UTF8.self) }
}

/// Any test of the whole request (its body included), for what no other condition expresses.
/// Two predicates are equal only when they are the same one.
public struct RequestPredicate: Sendable, Equatable {
    /// Shown in diagnostics: "has a cart id: false for this request".
    public let name: String
    package let test: @Sendable (MockRequest) -> Bool
    private let identity = UUID()

    /// A predicate named `name` (for diagnostics).
    public init(_ name: String = "predicate", _ test: @escaping @Sendable (MockRequest) -> Bool) {
        self.name = name
        self.test = test
    }

    public static func == (a: RequestPredicate, b: RequestPredicate) -> Bool { a.identity == b.identity }
}

/// What a request must look like for an item to answer it.
public struct RequestCondition: Sendable, Equatable {
    /// "GET"; compared case-sensitively after uppercasing both. "*" matches any method.
    public var method: String
    /// "http" / "https"; compared lowercased. "*" matches any scheme.
    public var scheme: String
    /// Compared lowercased. "*" matches any host (and then any port, unless `port` is given).
    public var host: String
    /// nil: the scheme's default port. An explicit default port in the request (`:443`) matches nil.
    public var port: Int?
    /// As written in the URL (percent-encoded), "/" when empty; compared exactly, unless
    /// `pathPattern` is set.
    public var path: String
    /// A template or regex the path must match instead of `path`.
    public var pathPattern: PathPattern?
    /// Header conditions, each required.
    public var headers: [HeaderMatch]
    /// A test of the whole request, required when set.
    public var predicate: RequestPredicate?
    /// Each must be present in the request; order is ignored. Listing a name twice requires it
    /// twice (a multiset). Names and values are compared percent-decoded.
    public var query: [QueryItemMatch]
    /// What request items not listed in `query` do: by default they fail the match.
    public var unlistedQueryItems: UnlistedQueryItems
    /// nil: any body.
    public var body: BodyMatch?
    /// Creates a condition; `port` nil means the scheme's default port.
    public init(method: String, scheme: String, host: String, port: Int? = nil, path: String,
                query: [QueryItemMatch] = [], unlistedQueryItems: UnlistedQueryItems = .rejected(),
                body: BodyMatch? = nil, headers: [HeaderMatch] = [],
                pathPattern: PathPattern? = nil, predicate: RequestPredicate? = nil) {
        self.method = method; self.scheme = scheme; self.host = host; self.port = port; self.path = path
        self.query = query; self.unlistedQueryItems = unlistedQueryItems; self.body = body; self.headers = headers
        self.pathPattern = pathPattern; self.predicate = predicate
    }
}

/// One response header, in recorded order.
public struct HTTPHeader: Sendable, Equatable {
    /// The name as recorded (served with this spelling).
    public var name: String
    /// The value.
    public var value: String
    /// Creates a header.
    public init(_ name: String, _ value: String) { self.name = name; self.value = value }
}

/// A response body.
public enum ResponseBody: Sendable, Equatable {
    /// No body bytes.
    case empty
    /// UTF-8 text, served as its UTF-8 bytes.
    case text(String)
    /// Bytes given as base64 (binary bodies, or text that a Swift literal cannot hold exactly).
    case base64(String)
    /// A file looked up by name in the fixture directories (see `FixtureLocator`), served byte for byte.
    case fixture(String)
}

/// A canned response.
public struct MockResponse: Sendable, Equatable {
    /// The HTTP status code.
    public var status: Int
    /// Headers in served order; a repeated name is served joined with ", ".
    public var headers: [HTTPHeader]
    /// The body bytes' source.
    public var body: ResponseBody
    /// Seconds to wait before answering; nil or 0 answers at once. A delay longer than the
    /// session's `timeoutIntervalForRequest` (or the request's own `timeoutInterval`) fails the
    /// task with `URLError(.timedOut)` when the timeout passes, as a slow server would.
    public var delay: TimeInterval?
    /// When set, the task fails with `URLError` of this code (after `delay`) instead of getting a
    /// response. HARMocking's `failure` property reads and writes it as a `URLError.Code`.
    public var failureCode: MockFailureCode?
    /// When set, the response was cut short: the head and `body` (what arrived) are delivered,
    /// then the task fails with `URLError` of this code, as when a connection breaks mid-body
    /// (`.networkConnectionLost`) or the app stopped waiting (`.timedOut`). HARMocking's
    /// `interruption` property reads and writes it as a `URLError.Code`.
    public var interruptionCode: MockFailureCode?
    /// When set, the body is delivered at about this many bytes a second (see `bandwidth(bytesPerSecond:)`).
    public var bytesPerSecond: Int?
    /// Whether the exchange ends in a transport failure: before a response (`failureCode`) or
    /// after part of one (`interruptionCode`).
    public var endsInFailure: Bool { failureCode != nil || interruptionCode != nil }

    /// Creates a response; `interruption` cuts it short after `body` (see `interruptionCode`).
    public init(status: Int, headers: [HTTPHeader] = [], body: ResponseBody = .empty, delay: TimeInterval? = nil,
                interruption: MockFailureCode? = nil) {
        self.status = status; self.headers = headers; self.body = body; self.delay = delay
        interruptionCode = interruption
    }

    /// A transport failure (see HARMocking's `failure(_:delay:)`, which takes a `URLError.Code`).
    public static func failure(code: MockFailureCode, delay: TimeInterval? = nil) -> MockResponse {
        var response = MockResponse(status: 0, delay: delay)
        response.failureCode = code
        return response
    }
}

/// A transport failure's `URLError.Code` raw value. The scenario model is Foundation-free, so
/// `harrec` links FoundationEssentials only; HARMocking converts to and from `URLError.Code`.
public struct MockFailureCode: RawRepresentable, Hashable, Sendable {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    // The values of URLError.Code (NSURLError*), the same on every platform.
    public static let unknown = MockFailureCode(rawValue: -1)
    public static let timedOut = MockFailureCode(rawValue: -1001)
    public static let cannotFindHost = MockFailureCode(rawValue: -1003)
    public static let cannotConnectToHost = MockFailureCode(rawValue: -1004)
    public static let networkConnectionLost = MockFailureCode(rawValue: -1005)
    public static let notConnectedToInternet = MockFailureCode(rawValue: -1009)
    public static let secureConnectionFailed = MockFailureCode(rawValue: -1200)
    public static let serverCertificateUntrusted = MockFailureCode(rawValue: -1202)

    /// The `URLError.Code` member's name, for generated source; nil for codes without one here.
    public var name: String? {
        switch self {
        case .unknown: "unknown"
        case .timedOut: "timedOut"
        case .cannotFindHost: "cannotFindHost"
        case .cannotConnectToHost: "cannotConnectToHost"
        case .networkConnectionLost: "networkConnectionLost"
        case .notConnectedToInternet: "notConnectedToInternet"
        case .secureConnectionFailed: "secureConnectionFailed"
        case .serverCertificateUntrusted: "serverCertificateUntrusted"
        default: nil
        }
    }
}

/// One entry of a scenario's queue.
public struct ResponseQueueItem: Sendable, Equatable {
    /// What a request must look like.
    public var condition: RequestCondition
    /// What it gets.
    public var response: MockResponse
    /// How many requests the item answers.
    public var repeatability: Repeatability
    /// Shown in diagnostics. Generated and replayed items have "#<n> <METHOD> <path>", n counting
    /// recorded exchanges from 1 ("#3 GET /v1/projects"); items without one are shown as
    /// "#<place in the queue, from 1> <METHOD> <path>".
    public var label: String?
    /// What the request this item answers must also be. They take no part in choosing the item: a
    /// request that matches `condition` but not these is still answered, and the difference is
    /// kept in the mock's `expectationFailures`, which the test helpers report as failures.
    public var expectations: [RequestExpectation]
    /// Creates an item; by default it answers every matching request.
    public init(condition: RequestCondition, response: MockResponse, repeatability: Repeatability = .always,
                label: String? = nil, expectations: [RequestExpectation] = []) {
        self.condition = condition; self.response = response; self.repeatability = repeatability; self.label = label
        self.expectations = expectations
    }
}

/// Something the app's request must have, checked when an item answers it (see
/// `ResponseQueueItem.expectations`): a missing version header, a wrong body or a double-encoded
/// parameter then fails the test with a readable difference.
public enum RequestExpectation: Sendable, Equatable {
    /// Header `name` with `value` (any value when nil).
    case header(String, String?)
    /// No header `name`.
    case noHeader(String)
    /// A query item.
    case query(QueryItemMatch)
    /// The body.
    case body(BodyMatch)
}

/// A request that was served (or refused), for call tracking.
public struct RequestResponseItem: Sendable, Equatable {
    /// The request's method, uppercased.
    public var method: String
    /// The request's absolute URL.
    public var url: String
    /// The 0-based index of the item that answered in the queue served (for code:
    /// `HARReplayProtocol.items[record.itemIndex!]`); nil when nothing matched. Messages and labels
    /// count from 1: see `itemNumber`.
    public var itemIndex: Int?
    /// The 1-based number of the item that answered (`itemIndex + 1`), as messages and labels write
    /// it (`#3`); nil when nothing matched.
    public var itemNumber: Int? { itemIndex.map { $0 + 1 } }
    /// The status served; nil when the request failed unmatched.
    public var status: Int?
    /// Creates a record; the runtime makes these, tests of app code may too.
    public init(method: String, url: String, itemIndex: Int?, status: Int?) {
        self.method = method; self.url = url; self.itemIndex = itemIndex; self.status = status
    }
}

