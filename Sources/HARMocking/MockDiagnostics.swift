// Why a request matched nothing: UnmatchedRequestError and its diagnosis.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: - Diagnostics

/// The error an unmatched request fails with. `description` (and `localizedDescription`) shows the
/// request, the nearest candidates, what differed for each (method, path, a query item, the body)
/// and what to do.
public struct UnmatchedRequestError: Error, CustomStringConvertible, LocalizedError {
    public var description: String

    /// The same text as `description`, so `localizedDescription` shows the whole diagnosis.
    public var errorDescription: String? { description }

    init(description: String) { self.description = description }

    init(request: RequestSnapshot, state: MockServer.State, reports: [CandidateReport], owner: String, activation: String,
         queryAdvice: QueryAdvice) {
        guard state.active else {
            var lines: [String] = []
            lines.append("\(owner): nothing is being served, so there is no response for \(request.requestLine).")
            lines.append("What to do: call \(activation) before the app makes requests (and not deactivate it too early).")
            self.init(description: lines.joined(separator: "\n"))
            return
        }
        self.init(description: state.queue.diagnosis(for: request.input, reports: reports, owner: owner,
                                                     activation: activation, queryAdvice: queryAdvice))
    }
}
