import Foundation
import Testing

@testable import GentleNetworking

@Suite("RetryBudget: a shared allowance of retries")
struct RetryBudgetTests {
    @Test("The token arithmetic: withdraw only what is there, refill up to the capacity")
    func state() {
        var state = RetryBudgetState(capacity: 10)
        let first = state.withdraw(5)
        let second = state.withdraw(5)
        #expect(first && second)
        #expect(state.tokens == 0)
        let overdraft = state.withdraw(1)
        #expect(!overdraft, "an overdraft is refused")
        #expect(state.tokens == 0, "and takes nothing")
        let free = state.withdraw(0)
        #expect(free, "a free retry is always allowed")
        state.deposit(3)
        #expect(state.tokens == 3)
        state.deposit(.max)
        #expect(state.tokens == 10, "never above the capacity, and no overflow")
        state.deposit(-4)
        #expect(state.tokens == 10)
        #expect(RetryBudgetState(capacity: -3).tokens == 0)
    }

    @Test("Costs: a retry after a timeout costs more; negative settings count as 0")
    func costs() {
        let budget = RetryBudget()
        let timeout = TransportError(.timedOut, url: nil, message: "slow")
        #expect(budget.cost(ofRetryAfter: .failure(timeout)) == 10)
        #expect(budget.cost(ofRetryAfter: .failure(TransportError(.connectionLost, url: nil, message: "x"))) == 5)
        #expect(budget.availableTokens == 500)
        let odd = RetryBudget(capacity: -1, retryCost: -5, timeoutRetryCost: -1, successRefund: -2)
        #expect(odd.capacity == 0 && odd.retryCost == 0 && odd.successRefund == 0)
    }

    @Test("A spent budget stops retrying across requests; the last answer is returned as it is")
    func spentBudget() async throws {
        let inner = ScriptedTransport([.status(503, body: "busy")])
        let budget = RetryBudget(capacity: 10, retryCost: 5, timeoutRetryCost: 10, successRefund: 1)
        let transport = RetryTransport(
            inner: inner, policy: RetryPolicy(maxRetries: 5), clock: RecordingClock().clock, budget: budget)
        let (body, first) = try await transport.data(for: request())
        #expect(first.statusCode == 503 && String(decoding: body, as: UTF8.self) == "busy")
        #expect(inner.sent.count == 3, "2 retries of 5 tokens each, then the bucket is empty")
        let (_, second) = try await transport.data(for: request())
        #expect(second.statusCode == 503)
        #expect(inner.sent.count == 4, "no retry at all while the budget is spent")
        #expect(budget.availableTokens == 0)
    }

    @Test("A retry cancelled during its wait is refunded: it was never sent")
    func cancelledWaitRefunded() async throws {
        let inner = ScriptedTransport([.status(503)])
        let budget = RetryBudget(capacity: 10, retryCost: 5, timeoutRetryCost: 10, successRefund: 1)
        let waiting = Locked(false)
        let clock = RetryClock(
            now: { Date() },
            sleep: { _ in
                waiting.withLock { $0 = true }
                try await Task.sleep(nanoseconds: 600_000_000_000)
            },
            randomUnit: { 0.5 })
        let transport = RetryTransport(inner: inner, clock: clock, budget: budget)
        let task = Task { try await transport.data(for: request()) }
        while !waiting.current { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(budget.availableTokens == 5, "the retry's cost is taken before its wait")
        task.cancel()
        _ = await task.result
        #expect(budget.availableTokens == 10)
        #expect(inner.sent.count == 1)
    }

    @Test("Successes refill the budget: 1 for a first-time success, the retry's cost after a retry")
    func refills() async throws {
        let budget = RetryBudget(capacity: 20, retryCost: 5, timeoutRetryCost: 10, successRefund: 1)
        let flaky = ScriptedTransport([.status(503), .status(200)])
        let transport = RetryTransport(inner: flaky, clock: RecordingClock().clock, budget: budget)
        _ = try await transport.data(for: request())
        #expect(flaky.sent.count == 2)
        #expect(budget.availableTokens == 20, "the retry's 5 tokens came back with its success")
        let timeouts = ScriptedTransport([
            .failure(TransportError(.timedOut, url: nil, message: "slow")), .status(503), .status(200),
        ])
        _ = try await RetryTransport(inner: timeouts, clock: RecordingClock().clock, budget: budget)
            .data(for: request())
        #expect(budget.availableTokens == 10, "10 for the timeout's retry, 5 for the 503's, the last 5 given back")
        _ = try await RetryTransport(inner: ScriptedTransport([.status(200)]), budget: budget).data(for: request())
        #expect(budget.availableTokens == 11)
    }

    @Test("An unlimited budget leaves only the policy's limit")
    func unlimited() async throws {
        let inner = ScriptedTransport([.status(503)])
        let transport = RetryTransport(
            inner: inner, policy: RetryPolicy(maxRetries: 3), clock: RecordingClock().clock, budget: .unlimited())
        for _ in 0..<50 { _ = try await transport.data(for: request()) }
        #expect(inner.sent.count == 200)
    }
}
