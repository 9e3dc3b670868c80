// swift-tools-version:6.0
import PackageDescription

// Swift 6 language mode throughout. State that crosses threads is Sendable by type; the few
// `@unchecked Sendable` types each say why they are safe (one owner at a time, or immutable after
// setup), and the event loop's per-connection state never leaves its thread.

let package = Package(
    name: "harrec",
    // HARMocking's Apple minimums: Synchronization's Mutex and String(validating:as:) (ignored on Linux).
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "harrec", targets: ["harrec"]),
        // What generated scenarios compile against, and HAR replay for XCTest (Linux and Apple).
        .library(name: "HARMocking", targets: ["HARMocking"]),
        // Test-only helpers on top of HARMocking: the `.mocking(...)` Swift Testing trait and XCTest
        // assertions (link it into test targets only).
        .library(name: "HARMockingTesting", targets: ["HARMockingTesting"]),
    ],
    targets: [
        // C shims: the headers Swift's Glibc module lacks and one-line functions for C macros, split
        // by what they link, so a module links only its own C libraries.
        .target(name: "CSystemShims"),
        .target(name: "CCompressionShims", linkerSettings: [
            .linkedLibrary("z"), .linkedLibrary("brotlidec"), .linkedLibrary("zstd"), .linkedLibrary("deflate"),
        ]),
        .target(name: "COpenSSLShims", linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]),
        .target(name: "CNghttp2Shims", linkerSettings: [.linkedLibrary("nghttp2")]),
        // libqrencode, for the device setup page's QR code (`record --device`, `ca show --qr`).
        .target(name: "CQRShims", linkerSettings: [.linkedLibrary("qrencode")]),
        // Sans-IO protocol cores: bytes in, events out. No sockets, no runtime.
        .target(name: "HTTP1"),
        .target(name: "SOCKS5"),
        // Sans-IO HTTP/2 connections (RFC 9113) over libnghttp2: frames in, events out.
        .target(name: "HTTP2", dependencies: ["CNghttp2Shims", "HTTP1"]),
        // Base64 (RFC 4648) and percent-decoding (RFC 3986), shared by the HAR model and the proxy.
        .target(name: "TextEncodings"),
        .target(name: "HAR", dependencies: ["TextEncodings"]),
        .target(name: "Codecs", dependencies: ["CCompressionShims"]),
        // Whole-file reads and atomic, crash-safe file writes.
        .target(name: "Files", dependencies: ["CSystemShims"]),
        // OpenSSL over memory BIOs, ClientHello sniffing, CA and leaf issuance.
        .target(name: "TLS", dependencies: ["COpenSSLShims", "TextEncodings"]),
        // Sans-IO WebSocket frame parser, message assembler, permessage-deflate.
        .target(name: "WebSocket", dependencies: ["Codecs"]),
        // The one export pipeline: entries from a source, an optional two-pass transform, a HAR out,
        // bounded by bytes (kept entries, a private spill file).
        .target(name: "Export", dependencies: ["HAR", "Files"]),
        .target(name: "Recording", dependencies: ["HTTP1", "HAR", "TextEncodings", "Codecs", "Files", "Export", "CSystemShims", "CCompressionShims"]),
        // Redaction on the typed HAR model: rules, placeholders, format-preserving JSON rewriting.
        // Release builds skip the dynamic exclusivity checks here (2% of a redaction's
        // instructions: the engine is a class read and written per byte scanned); debug builds,
        // which run the tests, keep them.
        .target(name: "Redaction", dependencies: ["HAR", "TextEncodings"],
                swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        // The scenario model, the HAR-to-items builder and value matching: pure (no URLSession),
        // shared by the generator (so the harrec binary links no URLProtocol code) and HARMocking.
        .target(name: "HARScenarios", dependencies: ["HAR", "TextEncodings"]),
        // The test runtime: scenarios, NetworkMock and HARReplayProtocol (URLProtocol), triggers.
        .target(name: "HARMocking", dependencies: ["HAR", "HARScenarios", "TextEncodings"]),
        // The `.mocking(...)` Swift Testing trait and XCTest assertions, for test targets.
        .target(name: "HARMockingTesting", dependencies: ["HARMocking"]),
        // `harrec generate`: HAR -> Swift scenarios, WebSocket triggers and JSON fixtures (pure).
        .target(name: "HARGenerator", dependencies: ["HAR", "HARScenarios", "Files", "TextEncodings"]),
        // The proxy: sessions, the HTTP/2 layer, interception. Knows no HAR: a replay answers
        // through a `Responder`.
        .target(name: "ProxyCore", dependencies: ["HTTP1", "HTTP2", "SOCKS5", "Recording", "TLS", "WebSocket", "TextEncodings"]),
        // `harrec replay`: the responder that answers from a HAR (HARMocking's matching and queues).
        .target(name: "HARReplay", dependencies: ["ProxyCore", "HTTP1", "HAR", "HARScenarios", "WebSocket", "TLS", "TextEncodings"]),
        // `record --web`: the live view's index, JSON API, event streams and page (a service
        // session the runtime hosts on its own listener).
        .target(name: "LiveView", dependencies: ["ProxyCore", "HTTP1", "HAR", "Recording", "TextEncodings"]),
        // The only I/O: epoll, non-blocking sockets, timers.
        .target(name: "ProxyRuntime", dependencies: ["ProxyCore", "Recording", "Codecs", "CSystemShims"]),
        .target(name: "CLI"),
        .executableTarget(
            name: "harrec",
            dependencies: ["CLI", "ProxyRuntime", "ProxyCore", "Recording", "Files", "Export", "HAR", "TLS", "Redaction", "HARGenerator", "HARScenarios", "HARReplay", "LiveView", "TextEncodings", "CSystemShims", "CQRShims", "CCompressionShims"]
        ),
        // Helpers every test target shares: the seeded generator and the fixture folders.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "HTTP1Tests", dependencies: ["HTTP1", "TestSupport"]),
        .testTarget(name: "SOCKS5Tests", dependencies: ["SOCKS5", "TestSupport"]),
        .testTarget(name: "HTTP2Tests", dependencies: ["HTTP2", "HTTP1"], exclude: ["Peers"]),
        .testTarget(name: "HARTests", dependencies: ["HAR", "TextEncodings", "TestSupport"]),
        .testTarget(name: "CodecsTests", dependencies: ["Codecs", "TestSupport"]),
        .testTarget(name: "RecordingTests", dependencies: ["Recording", "Files", "Export", "HAR", "HTTP1"]),
        .testTarget(name: "LiveViewTests", dependencies: ["LiveView", "ProxyCore", "HTTP1", "HAR", "Recording"]),
        .testTarget(name: "ProxyCoreTests", dependencies: ["ProxyCore", "HTTP1", "HTTP2", "SOCKS5", "Recording", "TLS", "WebSocket", "HARScenarios", "HAR", "HARReplay"]),
        .testTarget(name: "CLITests", dependencies: ["CLI"]),
        .testTarget(name: "ProxyRuntimeTests", dependencies: ["ProxyRuntime", "ProxyCore"]),
        .testTarget(name: "TLSTests", dependencies: ["TLS", "COpenSSLShims", "TestSupport"]),
        .testTarget(name: "WebSocketTests", dependencies: ["WebSocket", "TestSupport"]),
        .testTarget(name: "RedactionTests", dependencies: ["Redaction", "HAR", "TextEncodings", "TestSupport"]),
        .testTarget(name: "HARGeneratorTests", dependencies: ["HARGenerator", "HARMocking", "HAR", "TextEncodings", "TestSupport"]),
        .testTarget(name: "HARMockingTests", dependencies: ["HARMocking", "HARMockingTesting", "HAR"], resources: [.copy("Fixtures")]),
    ],
    swiftLanguageModes: [.v6]
)
