// Why a request matched nothing: the diagnosis HARMocking's UnmatchedRequestError and
// `harrec replay`'s 599 answer both carry, written once.

extension ServingQueue {
    /// The text for a request no entry answered: the request, the nearest candidates and what
    /// differed for each (method, path, a query item, the body), what was used up, and what to do.
    /// `reports`: from `pick`'s `.unmatched`. `activation` says how to choose what is served;
    /// `presenceAdvice` how to match a query item by presence, given its name.
    package func diagnosis(for request: MatchInput, reports: [MatchReport], owner: String, activation: String,
                           presenceAdvice: (String) -> String) -> String {
        var lines: [String] = []
        lines.append("\(owner): no response for \(request.requestLine) in \(source) (\(entries.count == 1 ? "1 item" : "\(entries.count) items")).")

        // Full matches that had no uses left.
        var usedUp: [String] = []
        for (i, report) in reports.enumerated() where report.matches {
            let n = served[i]
            let times = n == 1 ? "once" : "\(n) times"
            usedUp.append("  \(label(i)): already served \(times)")
        }
        // Ranked by how many parts match, then how few differ, then how much of the path is
        // shared (so /v1/projects/42 comes before /v1/feed for /v1/projects/43); one candidate
        // per distinct condition, since repeats of one request say the same thing.
        let requestPath = request.parts?.path ?? ""
        var seen: [RequestCondition] = []
        let nearest = reports.enumerated().filter { !$0.element.matches }
            .map { (offset: $0.offset, element: $0.element,
                    affinity: ServingQueue.pathAffinity(entries[$0.offset].item.condition.path, requestPath)) }
            .sorted { a, b in
                if a.element.matchedParts != b.element.matchedParts { return a.element.matchedParts > b.element.matchedParts }
                if a.element.mismatches.count != b.element.mismatches.count {
                    return a.element.mismatches.count < b.element.mismatches.count
                }
                if a.affinity != b.affinity { return a.affinity > b.affinity }
                return a.offset < b.offset
            }
            .filter { candidate in
                let condition = entries[candidate.offset].item.condition
                if seen.contains(condition) { return false }
                seen.append(condition)
                return true
            }
            .prefix(3)
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
        let queryNames = nearest.flatMap { $0.element.mismatches }.compactMap { m -> String? in
            if m.isQueryValue, case .query(let name, _, _) = m { return name }
            return nil
        }
        if let name = queryNames.first {
            advice.append("if \"\(name)\" changes from run to run, " + presenceAdvice(name))
        } else {
            advice.append("add a .present query match for values that change from run to run")
        }
        if let first = nearest.first?.element.mismatches, first.count == 1, case .body = first[0] {
            advice.append("if the body changes from run to run, leave it out of matching (bodyMatching: .never)")
        }
        advice.append("check that \(activation) was called with the intended scenario")
        lines.append("What to do: " + advice.joined(separator: "; ") + ".")
        return lines.joined(separator: "\n")
    }

    /// How alike two paths are: shared leading segments first, then shared leading characters.
    package static func pathAffinity(_ a: String, _ b: String) -> Int {
        let sa = a.split(separator: "/"), sb = b.split(separator: "/")
        let segments = zip(sa, sb).prefix { $0 == $1 }.count
        let characters = zip(a.utf8, b.utf8).prefix { $0 == $1 }.count
        return segments * 10_000 + min(characters, 9_999)
    }
}
