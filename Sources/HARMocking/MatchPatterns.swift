// Matching beyond exact values, for hand-written and edited items: path templates and regexes,
// header conditions, JSON subsets and predicates.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HAR

extension RequestExpectation {
    /// A condition that matches any request but in this expectation's part.
    var condition: RequestCondition {
        var c = RequestCondition(method: "*", scheme: "*", host: "*", path: "", unlistedQueryItems: .allowed, pathPattern: .regex(".*"))
        switch self {
        case .header(let name, let value): c.headers = [value.map { .equals(name, $0) } ?? .present(name)]
        case .noHeader(let name): c.headers = [.absent(name)]
        case .query(let match): c.query = [match]
        case .body(let match): c.body = match
        }
        return c
    }
}

extension RequestMatcher {
    /// What `request` lacks of `expectations`, in words; empty when it has everything.
    static func unmet(_ expectations: [RequestExpectation], by request: RequestSnapshot) -> [String] {
        expectations.flatMap { evaluate($0.condition, against: request).mismatches.map(\.explanation) }
    }
}
