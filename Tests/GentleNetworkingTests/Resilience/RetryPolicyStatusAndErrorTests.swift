import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("RetryPolicy in the seed's shape: shouldRetry(statusCode, error) and defaultShouldRetry(statusCode:error:)")
struct RetryPolicyStatusAndErrorTests {
    private func context(_ method: String, status: Int) throws -> RetryContext {
        let url = try #require(URL(string: "https://api.example.com/x"))
        var request = URLRequest(url: url)
        request.httpMethod = method
        let response = try #require(HTTPURLResponse(url: url, statusCode: status, httpVersion: nil, headerFields: [:]))
        return RetryContext(request: request, attempt: 0, outcome: .response(response))
    }

    @Test("The closure sees the status and a NetworkError that matches as the seed's users match it")
    func statusAndError() throws {
        let seen = Locked<[Int]>([])
        let policy = RetryPolicy(maxRetries: 2, jitter: nil) { statusCode, error in
            seen.withLock { $0.append(statusCode) }
            guard let networkError = error as? NetworkError, case .httpStatusError(let status) = networkError else {
                return false
            }
            switch status.error {
            case .serviceUnavailable: return true
            default: return false
            }
        }
        let now = Date()
        #expect(
            policy.decide(try context("GET", status: 503), previousDelay: nil, randomUnit: 0, now: now)
                == .retry(after: 0.5))
        #expect(
            policy.decide(try context("GET", status: 500), previousDelay: nil, randomUnit: 0, now: now)
                == .giveUp(.notRetryable))
        // Safety first: a POST without an Idempotency-Key is never retried, and the closure is not asked.
        #expect(
            policy.decide(try context("POST", status: 503), previousDelay: nil, randomUnit: 0, now: now)
                == .giveUp(.notRetryable))
        #expect(seen.current == [503, 500])
    }

    @Test("A thrown error is passed with status 0")
    func thrownError() throws {
        let seen = Locked<[String]>([])
        let policy = RetryPolicy(maxRetries: 1) { statusCode, error in
            seen.withLock { $0.append("\(statusCode) \((error as? TransportError).map { "\($0.code)" } ?? "?")") }
            return true
        }
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/x")))
        request.httpMethod = "GET"
        let failure = RetryContext(
            request: request, attempt: 0, outcome: .failure(TransportError(.timedOut, url: nil, message: "")))
        guard case .retry = policy.decide(failure, previousDelay: nil, randomUnit: 0.5, now: Date()) else {
            Issue.record("expected a retry")
            return
        }
        #expect(seen.current == ["0 timedOut"])
    }

    @Test("defaultShouldRetry(statusCode:error:) retries 429/5xx statuses and transient failures only")
    func defaultDecision() {
        let status = NetworkError(.httpStatusError(.serviceUnavailable), message: "503")
        #expect(RetryPolicy.defaultShouldRetry(statusCode: 503, error: status))
        #expect(RetryPolicy.defaultShouldRetry(statusCode: 429, error: status))
        #expect(!RetryPolicy.defaultShouldRetry(statusCode: 404, error: status))
        #expect(
            RetryPolicy.defaultShouldRetry(statusCode: 0, error: TransportError(.connectionLost, url: nil, message: ""))
        )
        #expect(!RetryPolicy.defaultShouldRetry(statusCode: 0, error: CocoaError(.fileNoSuchFile)))
        let explicit = RetryPolicy(maxRetries: 1, shouldRetry: RetryPolicy.defaultShouldRetry(statusCode:error:))
        #expect(explicit.maxRetries == 1)
    }

    @Test("On the wire: a seed-style policy retries 503 then gets the 200; the server sees two requests")
    func onTheWire() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/flaky", handler: LoopbackServer.sequence([.status(503), .text("ok")]))
        let clock = RecordingClock(randomUnit: 1)
        let policy = RetryPolicy(maxRetries: 3, baseDelay: 0.25, jitter: nil) { statusCode, _ in statusCode == 503 }
        let transport = RetryTransport(inner: DefaultTransport.make(), policy: policy, clock: clock.clock)
        let (data, response) = try await transport.data(for: URLRequest(url: server.url("/flaky")))
        #expect(response.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        #expect(server.requests(path: "/flaky").count == 2)
        #expect(clock.recordedDelays == [0.25])
    }
}
