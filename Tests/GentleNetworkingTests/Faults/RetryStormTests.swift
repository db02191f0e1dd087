import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A 503 storm: 64 requests in flight through `RetryTransport` on each real transport, against a
/// server that fails each of them twice (transient) or always (persistent). Retries must stay
/// within budget: exactly the retries the policy allows (counted by the server), and with the
/// default ``RetryBudget`` no more than it pays for across all requests. They must not
/// synchronize: the jittered delays spread over their window instead of arriving together.
/// The delay histogram is printed with the fault table.
@Suite("503 storms: retries within budget, jittered apart", .serialized)
struct RetryStormTests {
    static let inFlight = 64
    static let policy = RetryPolicy(maxRetries: 3, baseDelay: 0.2, maxDelay: 2)

    struct Storm {
        var statuses: [Int] = []
        var requestsPerPath: [String: Int] = [:]
        var delaysByRetry: [Int: [TimeInterval]] = [:]
        /// Attempts that ended in a transport error (not a status) and were retried, by path.
        var failedAttemptsPerPath: [String: [TransportError.Code]] = [:]

        /// Every path's attempts as the client counted them: seen by the server, or failed before.
        func clientAttempts(_ path: String) -> Int {
            requestsPerPath[path, default: 0] + (failedAttemptsPerPath[path]?.count ?? 0)
        }
    }

    /// Sends 64 concurrent GETs of `/storm/<n>` through a fresh `RetryTransport`; the server answers
    /// 503 to the first `failures` attempts of each path, then 200.
    func storm(_ kind: TransportKind, failures: Int, budget: RetryBudget = .unlimited()) async throws -> Storm {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let attempts = Locked<[String: Int]>([:])
        server.route("GET", prefix: "/storm/") { request in
            let attempt = attempts.withLock { counts -> Int in
                counts[request.path, default: 0] += 1
                return counts[request.path, default: 0]
            }
            return attempt <= failures ? .text("busy", status: 503) : .text("ok")
        }
        let delays = Locked<[Int: [TimeInterval]]>([:])
        let failed = Locked<[String: [TransportError.Code]]>([:])
        let transport = RetryTransport(
            inner: try kind.make(), policy: Self.policy,
            onRetry: { event in
                delays.withLock { $0[event.retryNumber, default: []].append(event.delay) }
                if case .failure(let error) = event.outcome, let path = event.request.url?.path {
                    let errorKind = (error as? TransportError)?.code ?? .other
                    failed.withLock { $0[path, default: []].append(errorKind) }
                }
            },
            budget: budget)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<Self.inFlight {
                // Short enough that a stalled attempt shows within the test, long enough for TSan.
                var request = URLRequest(url: server.url("/storm/\(index)"))
                request.timeoutInterval = 20
                group.addTask { [request] in try await transport.data(for: request).1.statusCode }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        return Storm(
            statuses: statuses, requestsPerPath: attempts.current, delaysByRetry: delays.current,
            failedAttemptsPerPath: failed.current)
    }

    /// Checks that every request made exactly `attempts` attempts, counted by the server. An attempt
    /// that never reached the server (the client saw a transport error and retried it) still counts
    /// toward the policy, so the retry count is checked either way; but it is a failure of the
    /// transport, recorded as such: on corelibs URLSession (Linux) a known intermittent one (its
    /// libcurl multi handle can leave a transfer unserviced under load until it times out), on
    /// every other transport a plain failure.
    func expectAttempts(_ storm: Storm, _ kind: TransportKind, exactly attempts: Int) {
        let paths = (0..<Self.inFlight).map { "/storm/\($0)" }
        for path in paths {
            #expect(
                storm.clientAttempts(path) == attempts, "\(kind): \(path) made \(storm.clientAttempts(path)) attempts")
        }
        let failures = storm.failedAttemptsPerPath.values.flatMap { $0 }
        guard !failures.isEmpty else {
            let total = storm.requestsPerPath.values.reduce(0, +)
            #expect(total == Self.inFlight * attempts, "\(kind): the server saw \(total) requests")
            #expect(paths.allSatisfy { storm.requestsPerPath[$0] == attempts }, "\(kind): \(storm.requestsPerPath)")
            return
        }
        let summary = "\(kind): \(failures.count) attempts failed before reaching the server: \(failures)"
        #if canImport(FoundationNetworking)
            if kind == .urlSession {
                withKnownIssue("corelibs URLSession stalls a transfer under load", isIntermittent: true) {
                    Issue.record(Comment(rawValue: summary))
                }
                return
            }
        #endif
        Issue.record(Comment(rawValue: summary))
    }

    @Test("64 in flight, each failing twice then succeeding: exactly 2 retries each, spread apart")
    func transientStorm() async throws {
        var report: [String] = []
        for kind in TransportKind.all {
            let storm = try await storm(kind, failures: 2)
            #expect(storm.statuses == Array(repeating: 200, count: Self.inFlight), "\(kind)")
            expectAttempts(storm, kind, exactly: 3)
            for (retry, window) in [(1, 0.2), (2, 0.4)] {
                let delays = storm.delaysByRetry[retry] ?? []
                #expect(delays.count == Self.inFlight, "\(kind): retry \(retry)")
                #expect(delays.allSatisfy { $0 >= 0 && $0 < window }, "\(kind): retry \(retry) outside [0, \(window))")
                // Not synchronized: nearly all distinct, and spread over the window (full jitter:
                // uniform, so a quarter of the window in each quarter, give or take).
                #expect(Set(delays).count >= Self.inFlight - 2, "\(kind): retry \(retry) delays collide")
                let quarters = (0..<4).map { q in
                    delays.filter { $0 >= window * Double(q) / 4 && $0 < window * Double(q + 1) / 4 }.count
                }
                #expect(quarters.allSatisfy { $0 >= 4 }, "\(kind): retry \(retry) quarters \(quarters)")
                report.append(Self.histogram(of: delays, window: window, title: "\(kind), retry \(retry)"))
            }
        }
        FaultReport.publish(
            "503 storm, \(Self.inFlight) in flight, full jitter over 0.2 s × 2^n (each request: 503, 503, 200):\n\n"
                + report.joined(separator: "\n\n"))
    }

    @Test("64 in flight against a server that is always 503: exactly maxRetries each, then the 503")
    func persistentStorm() async throws {
        for kind in TransportKind.all {
            let storm = try await storm(kind, failures: .max)
            #expect(storm.statuses == Array(repeating: 503, count: Self.inFlight), "\(kind)")
            expectAttempts(storm, kind, exactly: Self.policy.maxRetries + 1)
        }
    }

    @Test("The default budget: a server that is always 503 receives 100 retries in all, not 192")
    func budgetedStorm() async throws {
        for kind in TransportKind.all {
            let storm = try await storm(kind, failures: .max, budget: RetryBudget())
            #expect(storm.statuses == Array(repeating: 503, count: Self.inFlight), "\(kind)")
            let retries = storm.requestsPerPath.values.reduce(0, +) - Self.inFlight
            // 500 tokens at 5 a retry; no success ever refills the bucket.
            #expect(retries == 100, "\(kind): \(retries) retries")
            #expect(storm.requestsPerPath.values.allSatisfy { $0 <= Self.policy.maxRetries + 1 })
        }
    }

    /// A text histogram of `delays` in eight buckets over `[0, window)`, in a code block.
    static func histogram(of delays: [TimeInterval], window: TimeInterval, title: String) -> String {
        let buckets = 8
        var counts = Array(repeating: 0, count: buckets)
        for delay in delays {
            counts[min(buckets - 1, max(0, Int(delay / window * Double(buckets))))] += 1
        }
        var lines = ["```", title]
        for (index, count) in counts.enumerated() {
            let low = window * Double(index) / Double(buckets)
            let high = window * Double(index + 1) / Double(buckets)
            lines.append(
                String(format: "%.3f–%.3f s ", low, high) + String(repeating: "#", count: count) + " \(count)")
        }
        lines.append("```")
        return lines.joined(separator: "\n")
    }
}
