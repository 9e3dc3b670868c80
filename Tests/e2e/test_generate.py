"""`harrec generate` end to end (issue 6): record a session through harrec, generate Swift from the
(redacted) HAR, build the generated code in a temporary SwiftPM package that depends on this
repository's HARMocking library, and run an XCTest there that drives a real URLSession through
NetworkMock and fires the WebSocket triggers.

The origin is a small scripted HTTP/1.1 server (a feed whose body changes on every call, so
ordered repeats are visible; 404, 429 and 500 answers; a login that returns a token, an email and a
Set-Cookie) and a `websockets` server that greets on open and answers a subscribe message.
The swift build of the temporary package takes a minute or two: this module is one test.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import websockets
from websockets.asyncio.client import connect as ws_connect
from websockets.asyncio.server import serve as ws_serve

from helpers import HARREC_BIN, curl

REPO = Path(__file__).resolve().parents[2]
SECRET_TOKEN = "tok-live-93f0c1d2e3a4b5c6d7e8f9"
SECRET_EMAIL = "jane.doe@corp-mail.example.org"
SECRET_COOKIE = "sess-5f4e3d2c1b0a"
# The slow endpoint's wait, replayed with `--latency recorded`.
SLOW_SECONDS = 0.6


class Origin(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    feed_calls = 0
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def send(self, code, body: bytes, ctype="application/json", headers=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/v1/feed":
            with Origin.lock:
                Origin.feed_calls += 1
                n = Origin.feed_calls
            self.send(200, json.dumps({"version": n, "items": [f"item-{n}"]}).encode())
        elif path == "/v1/projects/42":
            self.send(200, json.dumps({"id": 42, "name": "Attachments \u2713", "owner": SECRET_EMAIL}).encode())
        elif path == "/v1/missing":
            self.send(404, b'{"error":"not found"}')
        elif path == "/v1/limited":
            self.send(429, b'{"error":"slow down"}', headers=[("Retry-After", "7")])
        elif path == "/v1/boom":
            self.send(500, b"internal error", ctype="text/plain")
        elif path == "/v1/slow":
            time.sleep(SLOW_SECONDS)
            self.send(200, b'{"slow":true}')
        else:
            self.send(404, b"no such path", ctype="text/plain")

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        body = json.dumps({"access_token": SECRET_TOKEN, "user": {"email": SECRET_EMAIL, "name": "Jane"}}).encode()
        self.send(200, body, headers=[("Set-Cookie", f"sid={SECRET_COOKIE}; Path=/; HttpOnly")])


class WSOrigin:
    """Greets on open; answers {"type":"subscribe","channel":C} with two messages."""

    def __init__(self):
        self.port = None
        self.loop = None
        self.ready = threading.Event()
        self.stop_event = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    async def _handler(self, ws):
        await ws.send(json.dumps({"type": "hello", "server": "test"}))
        async for message in ws:
            data = json.loads(message)
            if data.get("type") == "subscribe":
                await ws.send(json.dumps({"type": "subscribed", "channel": data["channel"]}))
                await ws.send(json.dumps({"type": "update", "channel": data["channel"], "n": 1}))

    async def _main(self):
        self.stop_event = asyncio.Event()
        async with ws_serve(self._handler, "127.0.0.1", 0, compression=None) as server:
            self.port = server.sockets[0].getsockname()[1]
            self.ready.set()
            await self.stop_event.wait()

    def _run(self):
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(self._main())

    def start(self):
        self.thread.start()
        assert self.ready.wait(10)
        return self

    def stop(self):
        self.loop.call_soon_threadsafe(self.stop_event.set)
        self.thread.join(10)


PACKAGE_SWIFT = """\
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "GeneratedCheck",
    dependencies: [.package(path: "{repo}")],
    targets: [
        .target(name: "Generated", dependencies: [.product(name: "HARMocking", package: "{package}")]),
        .testTarget(name: "GeneratedTests",
                    dependencies: ["Generated", .product(name: "HARMocking", package: "{package}"),
                                   .product(name: "HARMockingTesting", package: "{package}")]),
    ],
    swiftLanguageModes: [.v5]
)
"""

# The XCTest that runs the generated scenario. Placeholders: FIXTURES, PORT (recorded origin port).
SCENARIO_TEST = r"""
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HARMocking
import XCTest
@testable import Generated

final class GeneratedScenarioTests: XCTestCase {
    let base = "http://127.0.0.1:__PORT__"

    override func setUp() {
        FixtureLocator.setDirectories([URL(fileURLWithPath: "__FIXTURES__")])
        NetworkMock.activate(RecordedSessionHTTPScenario())
    }

    /// One request through a real URLSession whose configuration has NetworkMock first.
    func fetch(_ path: String, method: String = "GET", body: Data? = nil) -> (Int, [String: String], Data, Error?) {
        let session = URLSession(configuration: NetworkMock.configuration())
        var request = URLRequest(url: URL(string: path.hasPrefix("http") ? path : base + path)!)
        request.httpMethod = method
        request.httpBody = body
        let done = DispatchSemaphore(value: 0)
        final class Box: @unchecked Sendable { var value: (Int, [String: String], Data, Error?) = (0, [:], Data(), nil) }
        let box = Box()
        session.dataTask(with: request) { data, response, error in
            let http = response as? HTTPURLResponse
            var headers: [String: String] = [:]
            for (k, v) in http?.allHeaderFields ?? [:] { headers["\(k)".lowercased()] = "\(v)" }
            box.value = (http?.statusCode ?? 0, headers, data ?? Data(), error)
            done.signal()
        }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        return box.value
    }

    func json(_ data: Data) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }

    func testRecordedExchangesReplayInOrder() {
        // The feed was fetched three times and answered version 1, 2, 3: replayed in that order,
        // and the last answer stays.
        XCTAssertEqual(json(fetch("/v1/feed").2)["version"] as? Int, 1)
        XCTAssertEqual(json(fetch("/v1/feed").2)["version"] as? Int, 2)
        XCTAssertEqual(json(fetch("/v1/feed").2)["version"] as? Int, 3)
        XCTAssertEqual(json(fetch("/v1/feed").2)["version"] as? Int, 3)

        let project = fetch("/v1/projects/42")
        XCTAssertEqual(project.0, 200)
        XCTAssertEqual(project.1["content-type"], "application/json")
        XCTAssertNil(project.1["content-encoding"])
        XCTAssertEqual(json(project.2)["name"] as? String, "Attachments \u{2713}")
        // Redacted before generation: the email is a placeholder, still an email.
        XCTAssertEqual(json(project.2)["owner"] as? String, "user1@example.com")

        let missing = fetch("/v1/missing")
        XCTAssertEqual(missing.0, 404)
        XCTAssertEqual(json(missing.2)["error"] as? String, "not found")
        let limited = fetch("/v1/limited")
        XCTAssertEqual(limited.0, 429)
        XCTAssertEqual(limited.1["retry-after"], "7")
        let boom = fetch("/v1/boom")
        XCTAssertEqual(boom.0, 500)
        XCTAssertEqual(String(decoding: boom.2, as: UTF8.self), "internal error")

        let login = fetch("/v1/login", method: "POST", body: Data("{\"user\":\"jane\"}".utf8))
        XCTAssertEqual(login.0, 200)
        let token = json(login.2)["access_token"] as? String ?? ""
        XCTAssertTrue(token.hasPrefix("redacted-"), token)

        // The refused connection was recorded as a failure and replays as the URLError an app sees.
        let down = fetch("http://127.0.0.1:1/v1/down")
        XCTAssertEqual(down.0, 0)
        XCTAssertEqual((down.3 as? URLError)?.code, .cannotConnectToHost, "\(String(describing: down.3))")
        // --latency recorded: the slow endpoint waits its recorded time again.
        let start = Date()
        let slow = fetch("/v1/slow")
        XCTAssertEqual(slow.0, 200)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), __SLOW__ * 0.9)
        XCTAssertTrue(NetworkMock.unusedItems().isEmpty, "every recorded exchange was replayed: \(NetworkMock.unusedItems())")
    }

    func testARecordedDelayPastTheSessionTimeoutTimesOut() {
        let configuration = NetworkMock.configuration()
        configuration.timeoutIntervalForRequest = 0.2
        let session = URLSession(configuration: configuration)
        let done = DispatchSemaphore(value: 0)
        final class Box: @unchecked Sendable { var error: Error? }
        let box = Box()
        session.dataTask(with: URL(string: base + "/v1/slow")!) { _, _, error in box.error = error; done.signal() }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual((box.error as? URLError)?.code, .timedOut)
    }

    func testUnmatchedRequestExplainsWhatDiffered() {
        let result = fetch("/v1/projects/43")
        XCTAssertEqual(result.0, 0)
        let message = "\(result.3.map { ($0 as NSError).localizedDescription } ?? "")"
            + " " + "\(result.3.map { String(describing: $0) } ?? "")"
        XCTAssertTrue(message.contains("/v1/projects/43"), message)
        XCTAssertTrue(message.contains("/v1/projects/42"), "nearest candidate shown: " + message)
        XCTAssertTrue(message.contains("path: expected /v1/projects/42, got /v1/projects/43"),
                      "the differing part is named: " + message)
        XCTAssertTrue(message.contains("What to do"), message)
    }

    func testWebSocketTriggersDeliverRecordedServerMessages() {
        let center = WebSocketTriggerCenter()
        let simulator = WebSocketSimulator()
        RecordedSessionWebSocketEvents.register(with: simulator, center: center)
        XCTAssertEqual(center.registeredTriggers, RecordedSessionWebSocketEvents.triggers)
        // The client closed the socket and the server answered with its close frame.
        XCTAssertEqual(RecordedSessionWebSocketEvents.triggers, ["onOpen", "afterSubscribe", "afterClientClose"])
        center.post("onOpen")
        XCTAssertEqual(simulator.receivedEvents, [.text(#"{"type": "hello", "server": "test"}"#)])
        center.post("afterSubscribe")
        center.post("afterClientClose")
        XCTAssertEqual(simulator.receivedEvents, [
            .text(#"{"type": "hello", "server": "test"}"#),
            .text(#"{"type": "subscribed", "channel": "attachments"}"#),
            .text(#"{"type": "update", "channel": "attachments", "n": 1}"#),
            .close(code: 1000, reason: ""),
        ])
    }
}
"""


# Swift Testing in the consumer's package: one NetworkMock per test through the `.mocking` trait,
# the tests running in parallel, plus hand-written stubs beside the recorded items.
PARALLEL_TEST = r"""
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HARMocking
import HARMockingTesting
import Testing
@testable import Generated

func get(_ url: String, _ session: URLSession) async -> (Int, Data, Error?) {
    await withCheckedContinuation { continuation in
        session.dataTask(with: URL(string: url)!) { data, response, error in
            continuation.resume(returning: ((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data(), error))
        }.resume()
    }
}

@Suite(.mocking(RecordedSessionHTTPScenario()))
struct ParallelMockTests {
    let base = "http://127.0.0.1:__PORT__"

    @Test(arguments: 0..<6)
    func eachTestHasItsOwnQueues(_ n: Int) async throws {
        let mock = try #require(NetworkMock.current)
        if n % 2 == 0 { mock.stub(.get("/v1/feed")) { .json(["version": 100 + n]) } }
        let session = URLSession(configuration: mock.configuration())
        for expected in n % 2 == 0 ? [100 + n, 100 + n, 100 + n] : [1, 2, 3] {
            let (status, data, _) = await get(base + "/v1/feed", session)
            #expect(status == 200)
            let version = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["version"] as? Int
            #expect(version == expected)
        }
        #expect(mock.calls.count == 3)
    }

    @Test func failuresAreURLErrors() async throws {
        let mock = try #require(NetworkMock.current)
        let (_, _, error) = await get("http://127.0.0.1:1/v1/down", URLSession(configuration: mock.configuration()))
        #expect((error as? URLError)?.code == .cannotConnectToHost)
    }
}

// `requireAllItemsServed`: a test (each of its cases) that makes every recorded request passes.
@Suite struct EveryItemServedTests {
    let base = "http://127.0.0.1:__PORT__"

    @Test(.mocking(LogInHTTPScenario(), requireAllItemsServed: true), arguments: [1, 2])
    func logInServesEveryItem(_ n: Int) async throws {
        let mock = try #require(NetworkMock.current)
        #expect(mock.calls.isEmpty)
        var request = URLRequest(url: URL(string: base + "/v1/login")!)
        request.httpMethod = "POST"
        request.httpBody = Data(#"{"user":"jane"}"#.utf8)
        let session = URLSession(configuration: mock.configuration())
        let status: Int = await withCheckedContinuation { continuation in
            session.dataTask(with: request) { _, response, _ in
                continuation.resume(returning: (response as? HTTPURLResponse)?.statusCode ?? 0)
            }.resume()
        }
        #expect(status == 200)
        #expect(mock.unusedItems().isEmpty)
    }
}
"""


def record_session(harrec, tmp_path) -> Path:
    origin = ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    threading.Thread(target=origin.serve_forever, daemon=True).start()
    ws = WSOrigin().start()
    try:
        px = harrec.start()
        base = f"http://127.0.0.1:{origin.server_address[1]}"
        proxy = ["-x", px.http_proxy]
        # Two marked scenarios (HAR pages), for --scenario-per-page.
        assert curl(*proxy, "http://harrec/mark?name=browse").rc == 0
        for _ in range(3):
            assert curl(*proxy, base + "/v1/feed").rc == 0
        assert curl(*proxy, base + "/v1/projects/42").rc == 0
        for path in ("/v1/missing", "/v1/limited", "/v1/boom", "/v1/slow"):
            assert curl(*proxy, base + path).rc == 0
        # Nothing listens on port 1: harrec records the refused connection (and answers 502).
        assert curl(*proxy, "http://127.0.0.1:1/v1/down").rc == 0
        assert curl(*proxy, "http://harrec/mark?name=log%20in").rc == 0
        assert curl(*proxy, "-X", "POST", "-H", "Content-Type: application/json",
                    "-H", f"Authorization: Bearer {SECRET_TOKEN}",
                    "--data", '{"user":"jane"}', base + "/v1/login").rc == 0

        async def talk():
            async with ws_connect(f"ws://127.0.0.1:{ws.port}/socket", proxy=px.http_proxy,
                                  compression=None) as conn:
                assert json.loads(await conn.recv())["type"] == "hello"
                await conn.send(json.dumps({"type": "subscribe", "channel": "attachments"}))
                assert json.loads(await conn.recv())["type"] == "subscribed"
                assert json.loads(await conn.recv())["type"] == "update"
        asyncio.run(asyncio.wait_for(talk(), 20))
        px.stop()
        return px.har_path
    finally:
        origin.shutdown()
        ws.stop()


def test_generated_code_builds_and_replays(harrec, tmp_path):
    har = record_session(harrec, tmp_path)
    raw = har.read_bytes()
    for secret in (SECRET_TOKEN, SECRET_EMAIL, SECRET_COOKIE):
        assert secret.encode() not in raw, f"{secret} reached the default (redacted) HAR"
    port = json.loads(raw)["log"]["entries"][0]["request"]["url"].split(":")[2].split("/")[0]

    pkg = tmp_path / "pkg"
    sources = pkg / "Sources" / "Generated"
    fixtures = pkg / "Fixtures" / "API" / "v1"
    sources.mkdir(parents=True)
    gen = subprocess.run([HARREC_BIN, "generate", str(har), "--scenario", "recordedSession",
                          "--out", str(sources), "--fixtures", str(fixtures), "--latency", "recorded"],
                         capture_output=True, text=True, timeout=60)
    assert gen.returncode == 0, gen.stderr
    scenario_source = (sources / "RecordedSessionHTTPScenario.swift").read_text()
    assert "// Recorded failure: cannot connect to 127.0.0.1:1: connection refused" in scenario_source
    assert "response: .failure(.cannotConnectToHost" in scenario_source
    assert "delay: 0." in scenario_source
    # Recorded times are rounded to the millisecond.
    delays = re.findall(r"delay: ([0-9.e+]+)", scenario_source)
    assert delays and all(re.fullmatch(r"\d+\.\d{1,3}", d) for d in delays), delays
    names = sorted(p.name for p in sources.iterdir())
    assert names == ["RecordedSessionHTTPScenario.swift", "RecordedSessionWebSocketEvents.swift"], names
    # Fixtures: a directory per scenario, each named after its request's path.
    assert sorted(p.name for p in fixtures.iterdir()) == ["recordedSession"]
    fixture_names = sorted(p.name for p in (fixtures / "recordedSession").iterdir())
    assert "v1-projects-42.json" in fixture_names and "v1-feed-3.json" in fixture_names, fixture_names
    assert '.fixture("recordedSession/v1-projects-42.json")' in scenario_source
    project = json.loads((fixtures / "recordedSession" / "v1-projects-42.json").read_text())
    assert project["owner"] == "user1@example.com"

    # Deterministic: generating again rewrites nothing and gives the same bytes.
    before = {p: p.read_bytes() for p in list(sources.iterdir()) + list(fixtures.rglob("*")) if p.is_file()}
    again = subprocess.run([HARREC_BIN, "generate", str(har), "--scenario", "recordedSession",
                            "--out", str(sources), "--fixtures", str(fixtures), "--latency", "recorded"],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert "harrec: unchanged " in again.stderr and "harrec: wrote" not in again.stderr, again.stderr
    assert {p: p.read_bytes() for p in before} == before

    # One scenario per page, into the same package: they must compile against HARMocking too.
    per_page = subprocess.run([HARREC_BIN, "generate", str(har), "--scenario-per-page",
                               "--out", str(sources), "--fixtures", str(fixtures)],
                              capture_output=True, text=True, timeout=60)
    assert per_page.returncode == 0, per_page.stderr
    assert 'page "browse" -> scenario browse (9 exchanges)' in per_page.stderr, per_page.stderr
    assert 'page "log in" -> scenario logIn (2 exchanges)' in per_page.stderr, per_page.stderr
    added = sorted(p.name for p in sources.iterdir() if p.name not in names)
    assert added == ["BrowseHTTPScenario.swift", "LogInHTTPScenario.swift", "LogInWebSocketEvents.swift"], added
    assert "(9 responses)" in (sources / "BrowseHTTPScenario.swift").read_text()
    assert "(1 response)" in (sources / "LogInHTTPScenario.swift").read_text()
    # Each scenario's fixtures in its own directory: nothing of recordedSession's was touched.
    assert sorted(p.name for p in fixtures.iterdir()) == ["browse", "logIn", "recordedSession"]
    assert {p: p.read_bytes() for p in before} == before

    package_name = REPO.name
    (pkg / "Package.swift").write_text(PACKAGE_SWIFT.format(repo=REPO, package=package_name))
    tests = pkg / "Tests" / "GeneratedTests"
    tests.mkdir(parents=True)
    (tests / "GeneratedScenarioTests.swift").write_text(
        SCENARIO_TEST.replace("__FIXTURES__", str(fixtures)).replace("__PORT__", port)
        .replace("__SLOW__", str(SLOW_SECONDS)))
    (tests / "ParallelMockTests.swift").write_text(PARALLEL_TEST.replace("__PORT__", port))
    env = dict(os.environ)
    env["HARMOCKING_FIXTURES"] = str(fixtures)
    result = subprocess.run(["swift", "test"], cwd=pkg, capture_output=True, text=True, timeout=1200, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert "Executed 4 tests, with 0 failures" in output, output[-3000:]
    assert re.search(r"Test run with 3 tests in 2 suites passed", output), output[-3000:]


def test_generate_refuses_unredacted_input(harrec, tmp_path):
    """A raw HAR (--no-redact) is refused with the findings; --allow-unredacted generates."""
    origin = ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    threading.Thread(target=origin.serve_forever, daemon=True).start()
    try:
        px = harrec.start("--no-redact")
        base = f"http://127.0.0.1:{origin.server_address[1]}"
        assert curl("-x", px.http_proxy, "-X", "POST", "--data", "{}", base + "/v1/login").rc == 0
        px.stop()
    finally:
        origin.shutdown()
    out = tmp_path / "gen"
    refused = subprocess.run([HARREC_BIN, "generate", str(px.har_path), "--scenario", "login", "--out", str(out),
                              "--fixtures", str(out / "fixtures")], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1
    assert "not redacted" in refused.stderr and "harrec redact" in refused.stderr
    assert SECRET_TOKEN not in refused.stderr and SECRET_COOKIE not in refused.stderr
    assert not out.exists() or not any(out.iterdir()), "nothing is written when refused"
    allowed = subprocess.run([HARREC_BIN, "generate", str(px.har_path), "--scenario", "login", "--out", str(out),
                              "--fixtures", str(out / "fixtures"), "--allow-unredacted"],
                             capture_output=True, text=True, timeout=60)
    assert allowed.returncode == 0, allowed.stderr
    assert (out / "LoginHTTPScenario.swift").exists()
