import Foundation
import GentleNetworking
import Testing

@Suite("RetryPolicy decisions")
struct RetryPolicyTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    let policy = RetryPolicy(maxRetries: 3, baseDelay: 1, maxDelay: 30, jitter: .full)

    func response(_ status: Int, headers: [String: String] = [:]) -> RetryContext.Outcome {
        .response(
            HTTPURLResponse(
                url: URL(string: "https://h/")!, statusCode: status, httpVersion: nil, headerFields: headers)!)
    }

    func decide(
        _ outcome: RetryContext.Outcome, method: String = "GET", headers: [String: String] = [:], attempt: Int = 0
    )
        -> RetryDecision
    {
        policy.decide(
            RetryContext(request: request(method, headers: headers), attempt: attempt, outcome: outcome),
            previousDelay: nil, randomUnit: 1, now: now)
    }

    @Test(
        "Retries 408, 429, 500, 502, 503, 504 and nothing else",
        arguments: [400, 401, 403, 404, 408, 409, 422, 429, 500, 501, 502, 503, 504, 505])
    func statuses(status: Int) {
        let expected: RetryDecision =
            [408, 429, 500, 502, 503, 504].contains(status) ? .retry(after: 1) : .giveUp(.notRetryable)
        #expect(decide(response(status)) == expected)
    }

    @Test("Retries transient transport failures, never others and never cancellation")
    func errors() {
        for code in [TransportError.Code.timedOut, .connectionLost, .cannotConnect, .cannotResolveHost] {
            #expect(decide(.failure(TransportError(code, url: nil, message: ""))) == .retry(after: 1))
        }
        for code in [TransportError.Code.tlsFailure, .tooManyRedirects, .badResponse, .pinMismatch] {
            #expect(decide(.failure(TransportError(code, url: nil, message: ""))) == .giveUp(.notRetryable))
        }
        #expect(decide(.failure(URLError(.timedOut))) == .retry(after: 1))
        #expect(decide(.failure(URLError(.notConnectedToInternet))) == .retry(after: 1))
        #expect(decide(.failure(TransportError(.notConnectedToInternet, url: nil, message: ""))) == .retry(after: 1))
        #expect(
            decide(.failure(NetworkError(.transport(.notConnectedToInternet), message: ""))) == .retry(after: 1))
        #expect(
            decide(.failure(TransportError(.notConnectedToInternet, url: nil, message: "")), method: "POST")
                == .giveUp(.notRetryable), "still only idempotent requests")
        #expect(decide(.failure(CancellationError())) == .giveUp(.cancelled))
        #expect(decide(.failure(URLError(.cancelled))) == .giveUp(.cancelled))
        let alwaysRetry = RetryPolicy(shouldRetry: { _ in true })
        #expect(
            alwaysRetry.decide(
                RetryContext(request: request(), attempt: 0, outcome: .failure(CancellationError())),
                previousDelay: nil,
                randomUnit: 0, now: now) == .giveUp(.cancelled))
    }

    @Test("Only idempotent methods, or POST/PATCH with an Idempotency-Key, are retried")
    func idempotency() {
        for method in ["GET", "HEAD", "OPTIONS", "PUT", "DELETE"] {
            #expect(decide(response(503), method: method) == .retry(after: 1))
        }
        for method in ["POST", "PATCH"] {
            #expect(decide(response(503), method: method) == .giveUp(.notRetryable))
            #expect(decide(response(503), method: method, headers: ["Idempotency-Key": "k1"]) == .retry(after: 1))
        }
    }

    @Test("Retry-After in seconds and as an HTTP date; above the cap surfaces the response")
    func retryAfter() {
        #expect(decide(response(503, headers: ["Retry-After": "7"])) == .retry(after: 7))
        #expect(decide(response(429, headers: ["Retry-After": "Tue, 14 Nov 2023 22:13:40 GMT"])) == .retry(after: 20))
        #expect(decide(response(503, headers: ["Retry-After": "Tue, 14 Nov 2023 22:10:00 GMT"])) == .retry(after: 0))
        #expect(decide(response(503, headers: ["Retry-After": "61"])) == .giveUp(.retryAfterTooLong(61)))
        #expect(decide(response(503, headers: ["Retry-After": "soon"])) == .retry(after: 1), "unparseable: backoff")
        let patient = RetryPolicy(retryAfterCap: 120)
        #expect(
            patient.decide(
                RetryContext(request: request(), attempt: 0, outcome: response(503, headers: ["Retry-After": "90"])),
                previousDelay: nil, randomUnit: 0, now: now) == .retry(after: 90))
        #expect(RetryAfter.delay(from: "Tuesday, 14-Nov-23 22:13:40 GMT", now: now) == 20)
        #expect(RetryAfter.delay(from: "Tue Nov 14 22:13:40 2023", now: now) == 20)
        // asctime pads a one-digit day with a space (RFC 9110 §5.6.7: `Nov  6`).
        #expect(RetryAfter.httpDate("Sun Nov  6 08:49:37 1994") == Date(timeIntervalSince1970: 784_111_777))
    }

    @Test("Gives up after maxRetries")
    func exhausted() {
        #expect(decide(response(503), attempt: 2) == .retry(after: 4))
        #expect(decide(response(503), attempt: 3) == .giveUp(.exhausted))
        #expect(
            RetryPolicy(maxRetries: 0).decide(
                RetryContext(request: request(), attempt: 0, outcome: response(503)), previousDelay: nil, randomUnit: 0,
                now: now) == .giveUp(.exhausted))
    }

    @Test("A streamed body is never replayed")
    func streamedBody() {
        var streamed = request("PUT")
        streamed.httpBodyStream = InputStream(data: Data("x".utf8))
        #expect(
            policy.decide(
                RetryContext(request: streamed, attempt: 0, outcome: response(503)), previousDelay: nil, randomUnit: 0,
                now: now) == .giveUp(.bodyNotReplayable))
    }

    @Test("NaN or negative durations set after init mean the default: a NaN cap still refuses a day-long Retry-After")
    func nanSettingsMeanDefaults() {
        var policy = RetryPolicy(jitter: nil)
        policy.retryAfterCap = .nan
        policy.maxDelay = .nan
        policy.baseDelay = -1
        let request = URLRequest(url: URL(string: "https://api.example.com/x")!)
        let day = HTTPURLResponse(
            url: request.url!, statusCode: 503, httpVersion: "HTTP/1.1", headerFields: ["Retry-After": "86400"])!
        let short = HTTPURLResponse(
            url: request.url!, statusCode: 503, httpVersion: "HTTP/1.1", headerFields: ["Retry-After": "1"])!
        let context = { (response: HTTPURLResponse) in
            RetryContext(request: request, attempt: 0, outcome: .response(response))
        }
        #expect(
            policy.decide(context(day), previousDelay: nil, randomUnit: 0.5, now: Date())
                == .giveUp(.retryAfterTooLong(86_400)))
        #expect(policy.decide(context(short), previousDelay: nil, randomUnit: 0.5, now: Date()) == .retry(after: 1))
        let plain = HTTPURLResponse(url: request.url!, statusCode: 503, httpVersion: "HTTP/1.1", headerFields: [:])!
        // Exact exponential backoff from the default 0.5 s base, capped by the default 30 s.
        #expect(policy.decide(context(plain), previousDelay: nil, randomUnit: 0.5, now: Date()) == .retry(after: 0.5))
        #expect(RetryPolicy(maxDelay: .nan).maxDelay == 30)
        var state = RefreshCoordinatorState(maxRefreshes: 1, window: .nan)
        #expect(state.unauthorized(sent: "a", current: "a", now: Date()) == .startRefresh)
        state.refreshFailed()
        #expect(state.unauthorized(sent: "a", current: "a", now: Date()) == .refuseLimitExceeded)
    }
}
