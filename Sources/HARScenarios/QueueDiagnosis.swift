// Why a request matched nothing: the diagnosis HARMocking's UnmatchedRequestError and
// `harrec replay`'s 599 answer both carry, written once.

/// What a diagnosis tells its reader to do about query items, in the words of the runtime that
/// serves (Swift code for HARMocking, flags for `harrec replay`).
package struct QueryAdvice: Sendable {
    /// How to match an item by presence, given its name.
    package var presence: @Sendable (String) -> String
    /// How to let requests carry an item the recording lacks, given its name.
    package var unlisted: @Sendable (String) -> String
    /// What to do about values that change from run to run, when no item is named.
    package var general: String

    package init(presence: @escaping @Sendable (String) -> String, unlisted: @escaping @Sendable (String) -> String,
                 general: String) {
        self.presence = presence
        self.unlisted = unlisted
        self.general = general
    }

    /// HARMocking's items and stubs.
    package static let code = QueryAdvice(
        presence: { "match it with .present(\"\($0)\")" },
        unlisted: { "allow it with unlistedQueryItems: .rejected(except: [\"\($0)\"]), or any item with .allowed" },
        general: "add a .present query match for values that change from run to run")
}

extension ServingQueue {
    /// The text for a request no entry answered: the request, the nearest candidates and what
    /// differed for each (method, path, a query item, the body), what was used up, and what to do.
    /// `reports`: from `pick`'s `.unmatched`. `activation` says how to choose what is served;
    /// `queryAdvice` what to do about query items.
    package func diagnosis(for request: MatchInput, reports: [CandidateReport], owner: String, activation: String,
                           queryAdvice: QueryAdvice) -> String {
        var lines: [String] = []
        lines.append("\(owner): no response for \(request.requestLine) in \(source) (\(entries.count == 1 ? "1 item" : "\(entries.count) items")).")

        // Full matches that had no uses left.
        var usedUp: [String] = []
        for (i, report) in reports.map({ ($0.index, $0.report) }) where report.matches {
            let n = served[i]
            let times = n == 1 ? "once" : "\(n) times"
            usedUp.append("  \(label(i)): already served \(times)")
        }
        // Ranked by how many parts match, then how few differ, then how much of the path is
        // shared (so /v1/projects/42 comes before /v1/feed for /v1/projects/43); one candidate
        // per distinct condition, since repeats of one request say the same thing.
        let requestPath = request.parts?.path ?? ""
        typealias Candidate = (offset: Int, element: MatchReport, affinity: Int)
        let ranked: [Candidate] = reports.filter { !$0.report.matches }
            .map { (offset: $0.index, element: $0.report,
                    affinity: ServingQueue.pathAffinity(entries[$0.index].item.condition.path, requestPath)) }
            .sorted { a, b in
                if a.element.matchedParts != b.element.matchedParts { return a.element.matchedParts > b.element.matchedParts }
                if a.element.mismatches.count != b.element.mismatches.count {
                    return a.element.mismatches.count < b.element.mismatches.count
                }
                if a.affinity != b.affinity { return a.affinity > b.affinity }
                return a.offset < b.offset
            }
        var seen = Set<String>()
        var nearest: [Candidate] = []
        for candidate in ranked where seen.insert(distinctionKey(candidate.offset)).inserted {
            // One per distinct condition, read only as far as the three nearest.
            nearest.append(candidate)
            if nearest.count == 3 { break }
        }
        if !nearest.isEmpty {
            lines.append("Nearest candidates:")
            for (rank, candidate) in nearest.enumerated() {
                let differences = candidate.element.mismatches.map(\.explanation).joined(separator: "; ")
                lines.append("  \(rank + 1). \(label(candidate.offset)): \(differences)")
            }
        } else if entries.isEmpty {
            lines.append("The queue is empty.")
        }
        if !usedUp.isEmpty {
            lines.append("Matched but used up:")
            lines += usedUp.prefix(5)
            if usedUp.count > 5 { lines.append("  … and \(usedUp.count - 5) more") }
        }

        var advice: [String] = []
        if !usedUp.isEmpty {
            advice.append("the app made this request more often than recorded: re-record, or give the item .always or .times(n)")
        } else {
            advice.append("re-record the scenario if the app's requests changed")
        }
        // The nearest candidate with a query item that differs says what to do about it.
        let queryAdviceText = nearest.lazy.compactMap { candidate -> String? in
            for m in candidate.element.mismatches {
                if m.isQueryValue, case .query(let name, _, _) = m {
                    return "if \"\(name)\" changes from run to run, " + queryAdvice.presence(name)
                }
                if case .unlistedQuery(let name, _) = m { return "if the app may send \"\(name)\" or not, " + queryAdvice.unlisted(name) }
            }
            return nil
        }.first
        advice.append(queryAdviceText ?? queryAdvice.general)
        if let first = nearest.first?.element.mismatches, first.count == 1, case .body = first[0] {
            advice.append("if the body changes from run to run, leave it out of matching (bodyMatching: .never)")
        }
        advice.append("check that \(activation) was called with the intended scenario")
        lines.append("What to do: " + advice.joined(separator: "; ") + ".")
        return lines.joined(separator: "\n")
    }

    /// What tells entry `i`'s condition from another's in a diagnosis: its request, and the
    /// header conditions, path pattern, predicate and query rule the request key leaves out.
    private func distinctionKey(_ i: Int) -> String {
        let condition = entries[i].item.condition
        return HARScenarioBuilder.conditionKey(condition) + "\u{0}" + "\(condition.headers)" + "\u{0}"
            + "\(condition.pathPattern.map(\.description) ?? "")\u{0}\(condition.predicate?.name ?? "")\u{0}"
            + "\(condition.unlistedQueryItems)\u{0}\(entries[i].headers.map { "\($0.name)=\($0.value ?? "\u{1}")" })"
    }

    /// How alike two paths are: shared leading segments first, then shared leading characters.
    package static func pathAffinity(_ a: String, _ b: String) -> Int {
        let sa = a.split(separator: "/"), sb = b.split(separator: "/")
        let segments = zip(sa, sb).prefix { $0 == $1 }.count
        let characters = zip(a.utf8, b.utf8).prefix { $0 == $1 }.count
        return segments * 10_000 + min(characters, 9_999)
    }
}
