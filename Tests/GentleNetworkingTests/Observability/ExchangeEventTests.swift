import Foundation
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The lifecycle events one injected logger sees, in order, for retried, refreshed and
/// revalidated requests (decorators over a scripted transport: the exact sequence, with no
/// network timing in the way). The same sequences over real sockets are in
/// `TransactionMetricsWireTests`.
@Suite("Lifecycle events: one logger sees every step of a request, in order")
struct ExchangeEventTests {
    private let environment = DefaultAPIEnvironment(baseURL: URL(string: "https://api.example.com"))

    /// Every text a record holds, for "no secret anywhere" checks.
    static func allText(_ records: [NetworkLogRecord]) -> String {
        records.map { record in
            [
                record.description, record.url, record.headers.description, record.bodyExcerpt ?? "",
                record.errorDescription ?? "", String(describing: record.step), String(describing: record.metrics),
            ].joined(separator: "\n")
        }.joined(separator: "\n")
    }

    @Test("A retried request: request, one retry record per decision (attempt, delay, reason), then the response")
    func retries() async throws {
        let scripted = ScriptedTransport([.status(503), .status(503), .status(200, body: "{}")])
        let clock = RecordingClock(randomUnit: 0.5)
        let logger = RecordingLogger()
        let service = HTTPNetworkService(
            transport: RetryTransport(
                inner: scripted, policy: RetryPolicy(maxRetries: 3, baseDelay: 0.2, maxDelay: 5, jitter: nil),
                clock: clock.clock, budget: .unlimited()),
            authService: InMemoryAuthService(token: "retry-secret"), logger: logger)
        try await service.requestVoid(to: Endpoint(path: "/flaky", method: .get, requiresAuth: true), via: environment)

        let records = logger.records
        #expect(records.map(\.event) == [.request, .retry, .retry, .response])
        let delays = clock.recordedDelays
        #expect(delays == [0.2, 0.4])
        let expectedSteps: [ExchangeStep] = [
            .retrying(attempt: 1, delay: 0.2, reason: "HTTP 503"),
            .retrying(attempt: 2, delay: 0.4, reason: "HTTP 503"),
        ]
        #expect(records.compactMap(\.step) == expectedSteps)
        let metrics = try #require(records.last?.metrics)
        #expect(metrics.steps == expectedSteps)
        #expect(metrics.attempts == 3)
        #expect(Set(records.map(\.requestID)).count == 1 && records[0].requestID != 0)
        #expect(scripted.sent.count == 3)
        #expect(!Self.allText(records).contains("retry-secret"))
    }

    @Test("A refreshed request: refresh started, finished, re-sent, then the response; no token in any record")
    func refresh() async throws {
        let auth = InMemoryAuthService(token: "old-secret-token")
        let scripted = ScriptedTransport([.status(401), .status(200, body: "{}")])
        let logger = RecordingLogger()
        let service = HTTPNetworkService(
            transport: ReauthTransport(
                inner: scripted, authService: auth, refreshToken: { try await auth.saveAccessToken("new-secret-token") }
            ), authService: auth, logger: logger)
        try await service.requestVoid(to: Endpoint(path: "/me", method: .get, requiresAuth: true), via: environment)

        let records = logger.records
        #expect(records.map(\.event) == [.request, .refresh, .refresh, .refresh, .response])
        #expect(records.compactMap(\.step) == [.refreshStarted, .refreshFinished, .reauthorized])
        #expect(records.last?.metrics?.attempts == 2)
        #expect(
            scripted.sent.map { $0.value(forHTTPHeaderField: "Authorization") } == [
                "Bearer old-secret-token", "Bearer new-secret-token",
            ])
        let text = Self.allText(records)
        #expect(!text.contains("old-secret-token") && !text.contains("new-secret-token"))
    }

    @Test("A refresh that fails: refresh started, refresh failed (its code), then the failure with the metrics")
    func refreshFails() async throws {
        let auth = InMemoryAuthService(token: "expired-secret")
        struct RefreshDown: Error {}
        let logger = RecordingLogger()
        let service = HTTPNetworkService(
            transport: ReauthTransport(
                inner: ScriptedTransport([.status(401)]), authService: auth, refreshToken: { throw RefreshDown() }),
            authService: auth, logger: logger)
        await #expect(throws: NetworkError.self) {
            try await service.requestVoid(to: Endpoint(path: "/me", method: .get, requiresAuth: true), via: environment)
        }
        let records = logger.records
        #expect(records.map(\.event) == [.request, .refresh, .refresh, .failure])
        #expect(records.compactMap(\.step) == [.refreshStarted, .refreshFailed(reason: "refreshFailed")])
        #expect(records.last?.metrics?.steps == [.refreshStarted, .refreshFailed(reason: "refreshFailed")])
        #expect(!Self.allText(records).contains("expired-secret"))
    }

    @Test("A revalidated request: revalidating, served from the cache after the 304, then the 200 response")
    func revalidation() async throws {
        let scripted = ScriptedTransport([
            .status(200, headers: ["ETag": "\"v1\"", "Content-Type": "application/json"], body: #"{"id":1}"#),
            .status(304, headers: ["ETag": "\"v1\""]),
        ])
        let logger = RecordingLogger()
        let service = HTTPNetworkService(
            transport: ETagTransport(inner: scripted), authService: InMemoryAuthService(), logger: logger)
        let endpoint = Endpoint(path: "/item", method: .get)
        try await service.requestVoid(to: endpoint, via: environment)
        #expect(logger.records.map(\.event) == [.request, .response])
        #expect(logger.records.last?.metrics?.steps == [])

        try await service.requestVoid(to: endpoint, via: environment)
        let second = Array(logger.records.dropFirst(2))
        #expect(second.map(\.event) == [.request, .cache, .cache, .response])
        #expect(second.compactMap(\.step) == [.revalidating, .servedFromCache])
        #expect(second.last?.statusCode == 200)
        #expect(second.last?.metrics?.servedFromCache == true)
        #expect(scripted.sent.last?.value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
    }

    @Test("Nothing observes a request when no logger is enabled; requestWithMetrics observes it")
    func observationIsOptIn() async throws {
        /// Answers a model and notes whether the request it serves is observed.
        struct Probe: HTTPTransportProtocol {
            let seen: Locked<[Bool]>
            func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
                seen.withLock { $0.append(ExchangeRecorder.current != nil) }
                return try CannedResponse(string: #"{"id":1,"property":"x"}"#).makeResponse(for: request)
            }
        }
        let seen = Locked<[Bool]>([])
        let transport = Probe(seen: seen)
        let quiet = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
        let endpoint = Endpoint(path: "/m", method: .get)
        let _: Model = try await quiet.request(to: endpoint, via: environment)
        let (model, response, metrics): (Model, HTTPURLResponse, RequestMetrics) = try await quiet.requestWithMetrics(
            to: endpoint, via: environment)
        #expect(model.property == "x" && response.statusCode == 200)
        #expect(metrics.transactions.isEmpty && metrics.steps.isEmpty && metrics.attempts == 1)
        #expect(metrics.duration >= 0)
        #expect(seen.current == [false, true])
    }

    @Test("Step descriptions name codes and redacted URLs only")
    func descriptions() {
        #expect(
            ExchangeStep.retrying(attempt: 2, delay: 0.25, reason: "HTTP 503").description
                == "retrying after attempt 2 (HTTP 503) in 250.0 ms")
        #expect(
            ExchangeStep.redirected(statusCode: 302, to: "http://b.example/x", credentialsStripped: true).description
                == "redirected 302 to http://b.example/x (credentials stripped)")
        #expect(ExchangeStep.reason(for: .failure(TransportError(.timedOut, url: nil, message: "x"))) == "timedOut")
        #expect(TransactionMetrics.milliseconds(.nan) == "? ms")
        #expect(TransactionMetrics.milliseconds(-0.00125) == "-1.3 ms")
        #expect(TransactionMetrics.milliseconds(.infinity) == "? ms")
    }
}
