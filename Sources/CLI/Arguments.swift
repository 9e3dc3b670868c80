/// A small command-line parser with the surface of swift-argument-parser: subcommands, kebab-case
/// options with values, flags, repeatable options, positional arguments, and help text.
///
/// harrec cannot depend on swift-argument-parser (no outside packages), so this covers what the
/// commands need and nothing more.

/// One option a command accepts.
public struct OptionSpec: Sendable {
    public enum Kind: Sendable, Equatable {
        /// A boolean switch: `--quiet`.
        case flag
        /// An option with one value: `--out FILE` or `--out=FILE`. Repeating it keeps every value.
        case value(placeholder: String)
    }

    public var name: String
    public var short: Character?
    public var kind: Kind
    public var help: String

    public init(_ name: String, short: Character? = nil, _ kind: Kind, help: String) {
        self.name = name
        self.short = short
        self.kind = kind
        self.help = help
    }
}

/// A command (or subcommand) description: its options, positionals and help.
public struct CommandSpec: Sendable {
    public var name: String
    public var abstract: String
    public var usage: String
    public var options: [OptionSpec]
    /// Names of positional arguments, for help and for the count check.
    public var positionals: [String]
    /// When true, any number of positionals (at least `positionals.count`) is accepted.
    public var variadicPositionals: Bool
    public var discussion: String?

    public init(name: String, abstract: String, usage: String, options: [OptionSpec],
                positionals: [String] = [], variadicPositionals: Bool = false, discussion: String? = nil) {
        self.name = name
        self.abstract = abstract
        self.usage = usage
        self.options = options
        self.positionals = positionals
        self.variadicPositionals = variadicPositionals
        self.discussion = discussion
    }
}

/// The result of parsing: option values by name, flags, positionals.
public struct ParsedArguments: Sendable, Equatable {
    public var values: [String: [String]] = [:]
    public var flags: Set<String> = []
    public var positionals: [String] = []

    public init() {}

    /// The last value given for `name`, if any.
    public func value(_ name: String) -> String? { values[name]?.last }
    /// Every value given for a repeatable option, in order.
    public func allValues(_ name: String) -> [String] { values[name] ?? [] }
    public func flag(_ name: String) -> Bool { flags.contains(name) }
}

/// A usage error: the message says what was wrong and what to type instead.
public struct UsageError: Error, Equatable, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension CommandSpec {
    /// Parses `arguments` (without the program and subcommand names).
    ///
    /// `--help`/`-h` and `--version` are reported as flags named "help" and "version" so that the
    /// caller decides what to print.
    public func parse(_ arguments: [String]) throws(UsageError) -> ParsedArguments {
        var result = ParsedArguments()
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
                result.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            if argument == "--help" || argument == "-h" {
                result.flags.insert("help")
                continue
            }
            if argument == "--version" {
                result.flags.insert("version")
                continue
            }
            var name: String
            var inlineValue: String?
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                if let equals = body.firstIndex(of: "=") {
                    name = String(body[..<equals])
                    inlineValue = String(body[body.index(after: equals)...])
                } else {
                    name = String(body)
                }
            } else {
                let body = argument.dropFirst()
                guard body.count == 1, let character = body.first,
                      let spec = options.first(where: { $0.short == character }) else {
                    throw UsageError("unknown option '\(argument)'\(suggestion(for: String(body)))")
                }
                name = spec.name
            }
            guard let spec = options.first(where: { $0.name == name }) else {
                throw UsageError("unknown option '--\(name)'\(suggestion(for: name))")
            }
            switch spec.kind {
            case .flag:
                if inlineValue != nil {
                    throw UsageError("option '--\(name)' takes no value")
                }
                result.flags.insert(name)
            case .value(let placeholder):
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else if index < arguments.count {
                    value = arguments[index]
                    index += 1
                } else {
                    throw UsageError("option '--\(name)' needs a value: --\(name) \(placeholder)")
                }
                result.values[name, default: []].append(value)
            }
        }
        if !result.flags.contains("help") && !result.flags.contains("version") {
            if result.positionals.count < positionals.count {
                let missing = positionals[result.positionals.count]
                throw UsageError("missing argument <\(missing)>; usage: \(usage)")
            }
            if !variadicPositionals && result.positionals.count > positionals.count {
                let extra = result.positionals[positionals.count]
                throw UsageError("unexpected argument '\(extra)'; usage: \(usage)")
            }
        }
        return result
    }

    private func suggestion(for name: String) -> String {
        let names = options.map(\.name)
        guard let best = names.min(by: { editDistance($0, name) < editDistance($1, name) }),
              editDistance(best, name) <= max(2, name.count / 3) else {
            return "; see '\(self.name == "harrec" ? "harrec" : "harrec \(self.name)") --help'"
        }
        return "; did you mean '--\(best)'?"
    }

    /// The help text: OVERVIEW, USAGE, ARGUMENTS, OPTIONS (and SUBCOMMANDS when given).
    public func helpText(subcommands: [CommandSpec] = []) -> String {
        var lines: [String] = []
        lines.append("OVERVIEW: \(abstract)")
        lines.append("")
        lines.append("USAGE: \(usage)")
        if !positionals.isEmpty {
            lines.append("")
            lines.append("ARGUMENTS:")
            for positional in positionals { lines.append("  <\(positional)>") }
        }
        lines.append("")
        lines.append("OPTIONS:")
        var rows: [(String, String)] = options.map { option in
            var left = "--\(option.name)"
            if let short = option.short { left = "-\(short), " + left }
            if case .value(let placeholder) = option.kind { left += " \(placeholder)" }
            return (left, option.help)
        }
        rows.append(("-h, --help", "Show help information."))
        rows.append(("--version", "Show the version."))
        let width = min(34, (rows.map(\.0.count).max() ?? 0) + 2)
        for (left, help) in rows {
            if left.count + 2 > width {
                lines.append("  \(left)")
                lines.append("  " + String(repeating: " ", count: width) + help)
            } else {
                lines.append("  " + left + String(repeating: " ", count: width - left.count) + help)
            }
        }
        if !subcommands.isEmpty {
            lines.append("")
            lines.append("SUBCOMMANDS:")
            let subWidth = (subcommands.map(\.name.count).max() ?? 0) + 2
            for sub in subcommands {
                lines.append("  " + sub.name + String(repeating: " ", count: subWidth - sub.name.count) + sub.abstract)
            }
            lines.append("")
            lines.append("  See 'harrec help <subcommand>' for detailed help.")
        }
        if let discussion {
            lines.append("")
            lines.append(discussion)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Levenshtein distance, for "did you mean" suggestions.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}

/// Parses a TCP port: 0 (ephemeral) to 65535.
public func parsePort(_ text: String, option: String) throws(UsageError) -> UInt16 {
    guard let value = UInt16(text) else {
        throw UsageError("--\(option) needs a port number from 0 to 65535, not '\(text)'")
    }
    return value
}

/// Parses a byte count with an optional binary suffix: 1000, 64k, 64KiB, 64m, 1g.
public func parseByteCount(_ text: String, option: String) throws(UsageError) -> Int {
    let lower = text.lowercased()
    let digits = lower.prefix(while: { $0.isASCII && $0.isNumber })
    let suffix = lower.dropFirst(digits.count)
    let multipliers: [String: Int] = ["": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
                                      "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
                                      "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30]
    guard !digits.isEmpty, let base = Int(digits), let multiplier = multipliers[String(suffix)] else {
        throw UsageError("--\(option) needs a byte count such as 1000, 64k or 64m, not '\(text)'")
    }
    let (product, overflow) = base.multipliedReportingOverflow(by: multiplier)
    guard !overflow else { throw UsageError("--\(option) value '\(text)' is too large") }
    return product
}

/// Parses a positive number of seconds, with fractions: 15, 0.5.
public func parseSeconds(_ text: String, option: String) throws(UsageError) -> Double {
    guard let value = Double(text), value.isFinite, value > 0, value <= 86_400 else {
        throw UsageError("--\(option) needs a number of seconds greater than 0 (at most 86400), not '\(text)'")
    }
    return value
}
