import HAR

/// HAR pages as scenarios: the entries of one page (`harrec generate --page`), or one scenario
/// per page (`--scenario-per-page`). Pages come from `harrec mark` or from Chrome DevTools' HARs,
/// which have a page per navigation.
public enum HARPages {
    public struct PageError: Error, CustomStringConvertible, Equatable {
        public var description: String

        public init(description: String) { self.description = description }
    }

    /// One page's log for the generator.
    public struct Scenario: Equatable {
        /// A name for `--scenario`: the title in lowerCamelCase words ("log in" -> "logIn").
        public var name: String
        public var title: String
        public var log: HARLog
    }

    /// The log with only the entries of the page whose title (or else id) is `page`.
    public static func select(_ log: HARLog, page: String) throws(PageError) -> HARLog {
        let pages = log.pages ?? []
        guard let found = pages.first(where: { $0.title == page }) ?? pages.first(where: { $0.id == page }) else {
            let known = pages.map { "\"\($0.title)\" (\($0.id))" }.joined(separator: ", ")
            throw PageError(description: pages.isEmpty
                ? "the HAR has no pages (record with `harrec mark NAME` between scenarios)"
                : "no page titled \"\(page)\"; the HAR has \(known)")
        }
        return restricted(log, to: found)
    }

    /// A scenario per page, in page order; entries of no page are left out. Names are unique.
    public static func scenarios(_ log: HARLog) -> [Scenario] {
        var used: [String: Int] = [:]
        return (log.pages ?? []).enumerated().map { index, page in
            var name = scenarioName(page.title, fallback: "page\(index + 1)")
            used[name, default: 0] += 1
            if used[name]! > 1 { name += "\(used[name]!)" }
            return Scenario(name: name, title: page.title, log: restricted(log, to: page))
        }
    }

    /// The title's letters and digits as lowerCamelCase words ("Send attachment!" ->
    /// "sendAttachment"), so it can prefix Swift type names; `fallback` when none are left or
    /// the first is a digit.
    public static func scenarioName(_ title: String, fallback: String) -> String {
        var words: [String] = []
        var current = ""
        for scalar in title.unicodeScalars {
            let isASCIIAlphanumeric = scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(Character(scalar)))
            if isASCIIAlphanumeric {
                current.unicodeScalars.append(scalar)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        guard let first = words.first, let lead = first.first, !lead.isNumber else { return fallback }
        return ([first.prefix(1).lowercased() + first.dropFirst()] + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() })
            .joined()
    }

    private static func restricted(_ log: HARLog, to page: HARPage) -> HARLog {
        var copy = log
        copy.pages = [page]
        copy.entries = log.entries.filter { $0.pageref == page.id }
        return copy
    }
}
