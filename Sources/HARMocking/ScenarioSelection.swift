// Picking a scenario from the launch arguments of a UI-test run.

import Foundation

/// Reads `-scenario NAME` (and `-scenario=NAME`) from launch arguments.
public enum LaunchArguments {
    /// The scenario name, or nil when `-scenario` is absent or has no value. The first occurrence
    /// wins; a following argument that starts with "-" is another option, not a value.
    public static func scenarioName(in arguments: [String] = ProcessInfo.processInfo.arguments) -> String? {
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            if argument == "-scenario" {
                guard i + 1 < arguments.count else { return nil }
                let value = arguments[i + 1]
                return value.isEmpty || value.hasPrefix("-") ? nil : value
            }
            if argument.hasPrefix("-scenario=") {
                let value = String(argument.dropFirst("-scenario=".count))
                return value.isEmpty ? nil : value
            }
            i += 1
        }
        return nil
    }
}

/// Why `AppEnvironment.selectedScenario(arguments:)` could not pick a scenario.
public enum ScenarioSelectionError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// No `-scenario NAME` argument; carries the known names.
    case missingArgument(known: [String])
    /// `-scenario NAME` names no registered scenario.
    case unknownScenario(String, known: [String])

    public var description: String {
        switch self {
        case .missingArgument(let known):
            return "HARMocking: no scenario selected. Launch with -scenario NAME (or -scenario=NAME). "
                + AppEnvironment.knownList(known)
        case .unknownScenario(let name, let known):
            return "HARMocking: unknown scenario \"\(name)\". " + AppEnvironment.knownList(known)
        }
    }

    public var errorDescription: String? { description }
}

/// A registry of the app's scenarios, so a UI-test launch can pick one by name.
public struct AppEnvironment: Sendable {
    /// The registered scenarios, in registration order.
    public let scenarios: [any Scenario]

    /// Registers `scenarios`; when two share a name, the first one is selected.
    public init(scenarios: [any Scenario]) {
        self.scenarios = scenarios
    }

    /// The registered names, in registration order without repeats.
    public var scenarioNames: [String] {
        var seen = Set<String>()
        return scenarios.map(\.scenarioId.rawValue).filter { seen.insert($0).inserted }
    }

    /// The scenario registered under `name`, if any.
    public func scenario(named name: String) -> (any Scenario)? {
        scenarios.first { $0.scenarioId.rawValue == name }
    }

    /// The scenario named by the launch arguments; throws a clear error naming the known scenarios
    /// when the name is unknown, or when `-scenario` is missing (`ScenarioSelectionError`).
    public func selectedScenario(arguments: [String] = ProcessInfo.processInfo.arguments) throws -> any Scenario {
        guard let name = LaunchArguments.scenarioName(in: arguments) else {
            throw ScenarioSelectionError.missingArgument(known: scenarioNames)
        }
        guard let scenario = scenario(named: name) else {
            throw ScenarioSelectionError.unknownScenario(name, known: scenarioNames)
        }
        return scenario
    }

    static func knownList(_ known: [String]) -> String {
        known.isEmpty ? "No scenarios are registered in AppEnvironment."
            : "Known scenarios: " + known.joined(separator: ", ") + "."
    }
}
