import Foundation
import XCTest
@testable import HARMocking

final class ScenarioSelectionTests: XCTestCase {
    func testLaunchArgumentForms() {
        XCTAssertEqual(LaunchArguments.scenarioName(in: ["app", "-scenario", "login"]), "login")
        XCTAssertEqual(LaunchArguments.scenarioName(in: ["app", "-scenario=checkout", "-x"]), "checkout")
        XCTAssertEqual(LaunchArguments.scenarioName(in: ["app", "-scenario", "first", "-scenario", "second"]), "first")
        XCTAssertNil(LaunchArguments.scenarioName(in: ["app"]))
        XCTAssertNil(LaunchArguments.scenarioName(in: ["app", "-scenario"]))
        XCTAssertNil(LaunchArguments.scenarioName(in: ["app", "-scenario", "-other"]))
        XCTAssertNil(LaunchArguments.scenarioName(in: ["app", "-scenario="]))
        XCTAssertNil(LaunchArguments.scenarioName(in: ["app", "-scenarios", "x"]))
    }

    func testSelectionAndErrors() throws {
        let environment = AppEnvironment(scenarios: [TestScenario([], id: "login"), TestScenario([item("GET", "/", text: "x")], id: "checkout"),
                                                     TestScenario([], id: "login")])
        XCTAssertEqual(environment.scenarioNames, ["login", "checkout"])
        let selected = try environment.selectedScenario(arguments: ["app", "-scenario", "checkout"])
        XCTAssertEqual(selected.scenarioId, "checkout")
        XCTAssertEqual(selected.responseQueue.count, 1)

        XCTAssertThrowsError(try environment.selectedScenario(arguments: ["app"])) { error in
            XCTAssertEqual(error as? ScenarioSelectionError, .missingArgument(known: ["login", "checkout"]))
            XCTAssertEqual(error.localizedDescription,
                           "HARMocking: no scenario selected. Launch with -scenario NAME (or -scenario=NAME). Known scenarios: login, checkout.")
        }
        XCTAssertThrowsError(try environment.selectedScenario(arguments: ["app", "-scenario=logn"])) { error in
            XCTAssertEqual(error as? ScenarioSelectionError, .unknownScenario("logn", known: ["login", "checkout"]))
            XCTAssertEqual("\(error)", #"HARMocking: unknown scenario "logn". Known scenarios: login, checkout."#)
        }
        XCTAssertThrowsError(try AppEnvironment(scenarios: []).selectedScenario(arguments: ["-scenario", "a"])) { error in
            XCTAssertTrue("\(error)".contains("No scenarios are registered"), "\(error)")
        }
    }
}

final class WebSocketTests: XCTestCase {
    func testSimulatorRecordsAndForwards() {
        let forwarded = Locked<[WebSocketEvent]>([])
        let simulator = WebSocketSimulator { event in forwarded.withLock { $0.append(event) } }
        simulator.simulateReceive(event: .text("a"))
        simulator.simulateReceive(event: .binary(Data([1, 2])))
        XCTAssertEqual(simulator.receivedEvents, [.text("a"), .binary(Data([1, 2]))])
        XCTAssertEqual(forwarded.snapshot, simulator.receivedEvents)
    }

    func testTriggersDeliverInOrderAndAccumulate() {
        let center = WebSocketTriggerCenter()
        let one = WebSocketSimulator(), two = WebSocketSimulator()
        center.register("onOpen", events: [.text(#"{"type":"hello"}"#), .text("second")], to: one)
        center.register("afterSubscribe", events: [.binary(Data([0xFF])), .close(code: 1000, reason: "bye")], to: one)
        center.register("onOpen", events: [.text("for two")], to: two)
        XCTAssertEqual(center.registeredTriggers, ["onOpen", "afterSubscribe"])

        center.post("afterSubscribe")
        center.post("onOpen")
        center.post("unknown")
        XCTAssertEqual(one.receivedEvents, [.binary(Data([0xFF])), .close(code: 1000, reason: "bye"),
                                            .text(#"{"type":"hello"}"#), .text("second")])
        XCTAssertEqual(two.receivedEvents, [.text("for two")])

        center.post("onOpen")
        XCTAssertEqual(one.receivedEvents.count, 6, "a trigger can fire more than once")
        XCTAssertEqual(two.receivedEvents, [.text("for two"), .text("for two")])

        center.removeAll()
        XCTAssertEqual(center.registeredTriggers, [])
        center.post("onOpen")
        XCTAssertEqual(one.receivedEvents.count, 6)
    }

    func testHandlerMayPostAnotherTrigger() {
        let center = WebSocketTriggerCenter()
        let sink = WebSocketSimulator()
        final class Chain: WebSocketSimulating {
            let center: WebSocketTriggerCenter
            var seen: [WebSocketEvent] = []
            init(_ center: WebSocketTriggerCenter) { self.center = center }
            func simulateReceive(event: WebSocketEvent) {
                seen.append(event)
                if event == .text("ping") { center.post("pong") }
            }
        }
        let chain = Chain(center)
        center.register("ping", events: [.text("ping")], to: chain)
        center.register("pong", events: [.text("pong")], to: sink)
        center.post("ping")
        XCTAssertEqual(chain.seen, [.text("ping")])
        XCTAssertEqual(sink.receivedEvents, [.text("pong")], "posting from a handler does not deadlock")
    }

    func testSharedCenterIsOneInstance() {
        XCTAssertTrue(WebSocketTriggerCenter.shared === WebSocketTriggerCenter.shared)
        let simulator = WebSocketSimulator()
        WebSocketTriggerCenter.shared.register("sharedTest", events: [.text("x")], to: simulator)
        defer { WebSocketTriggerCenter.shared.removeAll() }
        WebSocketTriggerCenter.shared.post("sharedTest")
        XCTAssertEqual(simulator.receivedEvents, [.text("x")])
    }
}
