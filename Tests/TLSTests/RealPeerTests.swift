import Foundation
import XCTest
@testable import TLS
#if canImport(Glibc)
import Glibc
private let streamType = Int32(SOCK_STREAM.rawValue)
private let sendFlags = Int32(MSG_NOSIGNAL)
private let systemListen = Glibc.listen, systemAccept = Glibc.accept, systemConnect = Glibc.connect
#elseif canImport(Darwin)
import Darwin
private let streamType = SOCK_STREAM
private let sendFlags: Int32 = 0  // SO_NOSIGPIPE on the socket instead
private let systemListen = Darwin.listen, systemAccept = Darwin.accept, systemConnect = Darwin.connect
#endif

/// A child process whose stdout and stderr are collected as they arrive.
final class SpawnedProcess: @unchecked Sendable {
    let process = Process()
    private let lock = NSCondition()
    private var collected = Data()
    private let stdin = Pipe()

    init(_ program: String, _ arguments: [String]) throws {
        if program.contains("/") {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [program] + arguments
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = stdin
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            self.lock.lock()
            if data.isEmpty {
                handle.readabilityHandler = nil
            } else {
                self.collected.append(data)
            }
            self.lock.broadcast()
            self.lock.unlock()
        }
        try process.run()
    }

    var output: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: collected, as: UTF8.self)
    }

    func write(_ text: String, closeAfter: Bool = true) {
        stdin.fileHandleForWriting.write(Data(text.utf8))
        if closeAfter { try? stdin.fileHandleForWriting.close() }
    }

    /// Waits until the output matches `pattern` (a regular expression); returns the match.
    func waitFor(_ pattern: String, timeout: TimeInterval = 10) -> String? {
        let started = Date()
        let deadline = started.addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while true {
            let text = String(decoding: collected, as: UTF8.self)
            if let range = text.range(of: pattern, options: .regularExpression) { return String(text[range]) }
            // Exited (allowing half a second for its last output to arrive), or out of time.
            if !process.isRunning && Date().timeIntervalSince(started) > 0.5 { return nil }
            if Date() >= deadline { return nil }
            _ = lock.wait(until: min(deadline, Date().addingTimeInterval(0.1)))
        }
    }

    /// Waits for exit; terminates the process after `timeout`.
    @discardableResult
    func waitExit(timeout: TimeInterval = 10) -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        // Let the reader drain the pipe.
        usleep(50_000)
        return process.terminationStatus
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}

/// Blocking loopback sockets for the tests. The engines stay sans-IO: these helpers own all I/O.
enum TestSocket {
    static func listen() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, systemListen(fd, 8) == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    static func accept(_ fd: Int32, timeout: TimeInterval = 10) -> Int32? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { return nil }
        let client = systemAccept(fd, nil, nil)
        return client >= 0 ? client : nil
    }

    static func connect(port: Int) -> Int32? {
        let fd = socket(AF_INET, streamType, 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if result != 0 { close(fd); return nil }
        return fd
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, sendFlags) }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    /// Runs `engine` over `fd` until `handle` returns true, the engine fails, or the peer is
    /// gone. `handle` sees each event and may write or close.
    @discardableResult
    static func drive(_ engine: TLSEngine, fd: Int32, timeout: TimeInterval = 15,
                      handle: (TLSEvent, TLSEngine) -> Bool = { _, _ in false }) -> [TLSEvent] {
        var events: [TLSEvent] = []
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var finished = false
        while Date() < deadline {
            if !writeAll(fd, engine.takeNetworkOutput()) { break }
            while let event = engine.next() {
                events.append(event)
                if handle(event, engine) { finished = true }
            }
            if !writeAll(fd, engine.takeNetworkOutput()) { break }
            if finished || engine.state == .failed { break }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) == 1 else { continue }
            let count = read(fd, &buffer, buffer.count)
            if count > 0 {
                engine.feedNetwork(buffer[0..<count])
            } else {
                engine.feedNetworkEOF()
                while let event = engine.next() {
                    events.append(event)
                    _ = handle(event, engine)
                }
                break
            }
        }
        return events
    }
}

final class RealPeerTests: XCTestCase {
    var directory: String!
    var pki: String!
    var ca: CertificateAuthority!

    override func setUpWithError() throws {
        directory = try makeTemporaryDirectory(self)
        pki = directory + "/pki"
        let result = try runCommand(packageRoot + "/certs/make-test-pki.sh", [pki])
        XCTAssertEqual(result.status, 0, result.output)
        ca = try CertificateAuthority.loadOrCreate(directory: directory + "/ca")
    }

    /// Starts `openssl s_server` with a certificate from the test PKI on an ephemeral port.
    func startServer(certificate: String, extra: [String] = []) throws -> (SpawnedProcess, Int) {
        let server = try SpawnedProcess("openssl", ["s_server", "-accept", "127.0.0.1:0", "-cert", pki + "/\(certificate).pem",
                                                    "-key", pki + "/\(certificate)-key.pem", "-www", "-naccept", "1",
                                                    "-alpn", "http/1.1"] + extra)
        addTeardownBlock { server.stop() }
        let line = try XCTUnwrap(server.waitFor(#"ACCEPT 127\.0\.0\.1:[0-9]+"#), server.output)
        let port = try XCTUnwrap(Int(line.split(separator: ":").last ?? ""))
        return (server, port)
    }

    /// Our client engine against s_server: sends `GET /` and returns events and the response.
    func fetch(port: Int, context: TLSClientContext, serverName: String) throws -> ([TLSEvent], String) {
        let fd = try XCTUnwrap(TestSocket.connect(port: port))
        defer { close(fd) }
        let engine = try TLSEngine.client(context: context, serverName: serverName)
        var response: [UInt8] = []
        let events = TestSocket.drive(engine, fd: fd) { event, engine in
            switch event {
            case .handshakeCompleted:
                engine.writePlaintext(Array("GET / HTTP/1.0\r\n\r\n".utf8))
            case .plaintext(let bytes):
                response += bytes
            case .closed:
                engine.close()
                return true
            case .failed:
                return true
            }
            return false
        }
        return (events, String(decoding: response, as: UTF8.self))
    }

    func testClientEngineAgainstOpenSSLServer() throws {
        let (server, port) = try startServer(certificate: "server")
        let context = try TLSClientContext(verification: .systemTrustStore(additionalAnchorFiles: [pki + "/ca.pem"]))
        let (events, response) = try fetch(port: port, context: context, serverName: "localhost")
        let done = try XCTUnwrap(completion(events), "\(events) \(server.output)")
        XCTAssertEqual(done.alpn, "http/1.1")
        XCTAssertEqual(done.version, "TLSv1.3")
        XCTAssertTrue(response.hasPrefix("HTTP/1.0 200 ok\r\n"), response)
        // s_server -www echoes the session it negotiated.
        XCTAssertTrue(response.contains(done.cipher), response)
        XCTAssertTrue(response.contains("TLSv1.3"), response)
        server.waitExit()
    }

    func testClientEngineTLS12AgainstOpenSSLServer() throws {
        let (_, port) = try startServer(certificate: "server", extra: ["-tls1_2"])
        let context = try TLSClientContext(verification: .anchorsOnly([pki + "/ca.pem"]))
        let (events, response) = try fetch(port: port, context: context, serverName: "127.0.0.1")
        XCTAssertEqual(completion(events)?.version, "TLSv1.2", "\(events)")
        XCTAssertTrue(response.hasPrefix("HTTP/1.0 200 ok"), response)
    }

    func testClientEngineRejectsBadOpenSSLServers() throws {
        let cases: [(String, TLSClientContext.Verification, String)] = [
            ("server", .systemTrustStore(additionalAnchorFiles: []), "certificate verify failed: unable to get local issuer certificate"),
            ("wrong-host", .anchorsOnly([pki + "/ca.pem"]), "certificate verify failed: hostname mismatch"),
            ("self-signed", .systemTrustStore(additionalAnchorFiles: [pki + "/ca.pem"]), "certificate verify failed: self-signed certificate"),
        ]
        for (certificate, verification, message) in cases {
            let (server, port) = try startServer(certificate: certificate)
            let (events, response) = try fetch(port: port, context: try TLSClientContext(verification: verification), serverName: "localhost")
            let error = try XCTUnwrap(failure(events), "\(certificate): \(events)")
            XCTAssertEqual(error.kind, .certificateVerifyFailed, certificate)
            XCTAssertEqual(error.message, message, certificate)
            XCTAssertEqual(response, "")
            server.waitExit()
        }
        // Verification off: the self-signed origin is accepted.
        let (_, port) = try startServer(certificate: "self-signed")
        let (events, response) = try fetch(port: port, context: try TLSClientContext(verification: .none), serverName: "localhost")
        XCTAssertNotNil(completion(events), "\(events)")
        XCTAssertTrue(response.hasPrefix("HTTP/1.0 200 ok"), response)
    }

    /// Serves one connection with our server engine: reads a request head, answers, closes.
    func serveOnce(listener: Int32, context: TLSServerContext, fallback: String? = nil, body: String = "hello from harrec") -> ([TLSEvent], String) {
        guard let fd = TestSocket.accept(listener) else { XCTFail("no connection"); return ([], "") }
        defer { close(fd) }
        guard let engine = try? TLSEngine.server(context: context, fallbackServerName: fallback) else { return ([], "") }
        var request: [UInt8] = []
        let events = TestSocket.drive(engine, fd: fd) { event, engine in
            switch event {
            case .plaintext(let bytes):
                request += bytes
                if String(decoding: request, as: UTF8.self).contains("\r\n\r\n") {
                    engine.writePlaintext(Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)".utf8))
                    engine.close()
                    return true
                }
            case .closed, .failed:
                return true
            case .handshakeCompleted:
                break
            }
            return false
        }
        return (events, String(decoding: request, as: UTF8.self))
    }

    func testServerEngineAgainstOpenSSLClient() throws {
        let (listener, port) = try TestSocket.listen()
        defer { close(listener) }
        let context = try TLSServerContext(certificateAuthority: ca)
        let client = try SpawnedProcess("openssl", ["s_client", "-connect", "127.0.0.1:\(port)", "-servername", "proxied.example",
                                                    "-CAfile", ca.certificatePath, "-verify_hostname", "proxied.example",
                                                    "-verify_return_error", "-x509_strict", "-alpn", "h2,http/1.1", "-ign_eof"])
        addTeardownBlock { client.stop() }
        client.write("GET / HTTP/1.1\r\nHost: proxied.example\r\n\r\n")
        let (events, request) = serveOnce(listener: listener, context: context)
        XCTAssertNotNil(completion(events), "\(events)")
        XCTAssertTrue(request.hasPrefix("GET / HTTP/1.1\r\n"), request)
        client.waitExit()
        let output = client.output
        XCTAssertTrue(output.contains("subject=CN = proxied.example\n"), output)
        XCTAssertTrue(output.contains("issuer=CN = \"\(ca.subjectCommonName)\", O = harrec\n"), output)
        XCTAssertTrue(output.contains("Verify return code: 0 (ok)"), output)
        XCTAssertTrue(output.contains("Verified peername: proxied.example"), output)
        XCTAssertTrue(output.contains("ALPN protocol: http/1.1"), output)
        XCTAssertTrue(output.contains("New, TLSv1.3"), output)
        XCTAssertTrue(output.contains("hello from harrec"), output)
    }

    func testServerEngineAgainstOpenSSLClientWithoutSNI() throws {
        let (listener, port) = try TestSocket.listen()
        defer { close(listener) }
        let client = try SpawnedProcess("openssl", ["s_client", "-connect", "127.0.0.1:\(port)", "-noservername",
                                                    "-CAfile", ca.certificatePath, "-verify_ip", "127.0.0.1",
                                                    "-verify_return_error", "-ign_eof", "-tls1_2"])
        addTeardownBlock { client.stop() }
        client.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let (events, _) = serveOnce(listener: listener, context: try TLSServerContext(certificateAuthority: ca), fallback: "127.0.0.1")
        XCTAssertEqual(completion(events)?.version, "TLSv1.2", "\(events)")
        client.waitExit()
        XCTAssertTrue(client.output.contains("subject=CN = 127.0.0.1\n"), client.output)
        XCTAssertTrue(client.output.contains("Verify return code: 0 (ok)"), client.output)
    }

    static let pythonClient = """
    import socket, ssl, sys
    port, cafile, host = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    ctx = ssl.create_default_context(cafile=cafile)
    assert ctx.verify_flags & ssl.VERIFY_X509_STRICT, "expected strict verification"
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    try:
        with socket.create_connection(("127.0.0.1", port)) as raw:
            with ctx.wrap_socket(raw, server_hostname=host) as tls:
                tls.sendall(b"GET / HTTP/1.1\\r\\nHost: " + host.encode() + b"\\r\\n\\r\\n")
                data = b""
                while True:
                    chunk = tls.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                print("version", tls.version())
                print("alpn", tls.selected_alpn_protocol())
                print("body", data.split(b"\\r\\n\\r\\n", 1)[1].decode())
    except ssl.SSLError as error:
        print("ssl error", error.reason, error.verify_message if hasattr(error, "verify_message") else "")
        sys.exit(3)
    """

    func runPython(port: Int, cafile: String, host: String) throws -> SpawnedProcess {
        let python = try XCTUnwrap(python313, "Python 3.13 (pyenv) is required for the strict verification test")
        let script = directory + "/client.py"
        try writeText(Self.pythonClient, to: script)
        let process = try SpawnedProcess(python, [script, String(port), cafile, host])
        addTeardownBlock { process.stop() }
        return process
    }

    func testPython313StrictClientAcceptsLeaf() throws {
        let (listener, port) = try TestSocket.listen()
        defer { close(listener) }
        let client = try runPython(port: port, cafile: ca.certificatePath, host: "strict.example")
        let (events, request) = serveOnce(listener: listener, context: try TLSServerContext(certificateAuthority: ca))
        XCTAssertNotNil(completion(events), "\(events)")
        XCTAssertTrue(request.contains("Host: strict.example"), request)
        XCTAssertEqual(client.waitExit(), 0, client.output)
        XCTAssertTrue(client.output.contains("version TLSv1.3"), client.output)
        XCTAssertTrue(client.output.contains("alpn http/1.1"), client.output)
        XCTAssertTrue(client.output.contains("body hello from harrec"), client.output)
    }

    func testPython313ClientNotTrustingCAIsReported() throws {
        let (listener, port) = try TestSocket.listen()
        defer { close(listener) }
        let client = try runPython(port: port, cafile: pki + "/ca.pem", host: "strict.example")
        let (events, _) = serveOnce(listener: listener, context: try TLSServerContext(certificateAuthority: ca))
        let error = try XCTUnwrap(failure(events), "\(events)")
        XCTAssertEqual(error.kind, .peerAlert)
        XCTAssertEqual(error.alert, 48, error.message)  // unknown_ca
        XCTAssertEqual(client.waitExit(), 3, client.output)
        XCTAssertTrue(client.output.contains("CERTIFICATE_VERIFY_FAILED"), client.output)
    }
}
