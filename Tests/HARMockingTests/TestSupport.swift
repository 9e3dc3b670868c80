import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import HARMocking

struct TestScenario: Scenario {
    var scenarioId: ScenarioIdentifier
    var responseQueue: [ResponseQueueItem]
    init(_ items: [ResponseQueueItem], id: ScenarioIdentifier = "test") {
        scenarioId = id; responseQueue = items
    }
}

/// The outcome of one request through a real URLSession.
struct Fetched {
    var data: Data?
    var response: HTTPURLResponse?
    var error: Error?

    var status: Int? { response?.statusCode }
    var text: String? { data.map { String(decoding: $0, as: UTF8.self) } }
    /// The error's full text (UnmatchedRequestError's diagnosis).
    var errorText: String {
        guard let error else { return "" }
        if let unmatched = error as? UnmatchedRequestError { return unmatched.description }
        return error.localizedDescription
    }
}

enum HTTP {
    static func session(_ configuration: URLSessionConfiguration = NetworkMock.configuration()) -> URLSession {
        configuration.timeoutIntervalForRequest = 10
        return URLSession(configuration: configuration)
    }

    static func request(_ method: String = "GET", _ url: String, body: String? = nil,
                        headers: [String: String] = [:]) -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        if let body { request.httpBody = Data(body.utf8) }
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        return request
    }

    /// Runs a data task and waits for it.
    static func fetch(_ request: URLRequest, session: URLSession) -> Fetched {
        final class Box: @unchecked Sendable { var value = Fetched() }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        session.dataTask(with: request) { data, response, error in
            box.value = Fetched(data: data, response: response as? HTTPURLResponse, error: error)
            done.signal()
        }.resume()
        if done.wait(timeout: .now() + 15) == .timedOut { XCTFail("request timed out: \(request)") }
        return box.value
    }

    static func fetch(_ method: String = "GET", _ url: String, body: String? = nil, session: URLSession) -> Fetched {
        fetch(request(method, url, body: body), session: session)
    }
}

func item(_ method: String, _ path: String, host: String = "api.example.com", scheme: String = "https",
          port: Int? = nil, query: [QueryItemMatch] = [], unlisted: UnlistedQueryItems = .rejected(),
          body: BodyMatch? = nil, status: Int = 200, text: String = "", repeatability: Repeatability = .always,
          delay: TimeInterval? = nil, label: String? = nil) -> ResponseQueueItem {
    ResponseQueueItem(condition: RequestCondition(method: method, scheme: scheme, host: host, port: port, path: path,
                                                  query: query, unlistedQueryItems: unlisted, body: body),
                      response: MockResponse(status: status, headers: [HTTPHeader("Content-Type", "text/plain")],
                                             body: text.isEmpty ? .empty : .text(text), delay: delay),
                      repeatability: repeatability, label: label)
}
