import Foundation

/// How many retries a ``RetryTransport`` may still make, across all of its requests: the guard
/// that keeps a failing server from being sent several times its normal load.
///
/// A token bucket, as in the "standard" retry mode of the AWS SDKs. It starts full
/// (``capacity`` tokens). Each retry costs ``retryCost`` tokens (``timeoutRetryCost`` after a
/// timeout, which ties up the server longer); a retry that would overdraw the bucket is not made,
/// and the response or error is returned as it is. A success gives back what its own retry cost,
/// or ``successRefund`` when it needed no retry, up to the capacity.
///
/// With the defaults (500, 5, 10, 1), a healthy client never notices it; a server that fails
/// everything receives at most 100 retries, however many requests are in flight, until
/// successes refill the bucket. Share one budget between transports to share the allowance.
public final class RetryBudget: Sendable {
    /// The most tokens the bucket holds, and what it starts with; 500 by default.
    public let capacity: Int
    /// What one retry costs; 5 by default.
    public let retryCost: Int
    /// What a retry after a timeout costs; 10 by default.
    public let timeoutRetryCost: Int
    /// What a success that needed no retry gives back; 1 by default.
    public let successRefund: Int

    private let state: Locked<RetryBudgetState>

    /// Creates a full budget. Negative values count as 0.
    ///
    /// - Parameters:
    ///   - capacity: 500 by default.
    ///   - retryCost: 5 by default. 0 makes retries free (the budget never refuses one).
    ///   - timeoutRetryCost: 10 by default.
    ///   - successRefund: 1 by default.
    public init(capacity: Int = 500, retryCost: Int = 5, timeoutRetryCost: Int = 10, successRefund: Int = 1) {
        self.capacity = max(0, capacity)
        self.retryCost = max(0, retryCost)
        self.timeoutRetryCost = max(0, timeoutRetryCost)
        self.successRefund = max(0, successRefund)
        self.state = Locked(RetryBudgetState(capacity: max(0, capacity)))
    }

    /// A budget that never refuses a retry: only ``RetryPolicy/maxRetries`` limits them.
    public static func unlimited() -> RetryBudget {
        RetryBudget(capacity: 0, retryCost: 0, timeoutRetryCost: 0, successRefund: 0)
    }

    /// The tokens left now.
    public var availableTokens: Int { state.current.tokens }

    /// What a retry after `outcome` costs.
    public func cost(ofRetryAfter outcome: RetryContext.Outcome) -> Int {
        if case .failure(let error) = outcome, Self.isTimeout(error) { return timeoutRetryCost }
        return retryCost
    }

    /// Takes the cost of a retry after `outcome`; `nil` (and nothing taken) when the bucket
    /// cannot pay it.
    func withdraw(forRetryAfter outcome: RetryContext.Outcome) -> Int? {
        let cost = cost(ofRetryAfter: outcome)
        return state.withLock { $0.withdraw(cost) } ? cost : nil
    }

    /// Records a success: gives back `retryCost` (what the request's last retry took), or
    /// ``successRefund`` when it was not retried.
    func recordSuccess(afterRetryCosting retryCost: Int) {
        let amount = retryCost > 0 ? retryCost : successRefund
        guard amount > 0 else { return }
        state.withLock { $0.deposit(amount) }
    }

    /// Gives back the `cost` of a retry that was never sent (the wait before it was cancelled).
    func refund(_ cost: Int) {
        guard cost > 0 else { return }
        state.withLock { $0.deposit(cost) }
    }

    private static func isTimeout(_ error: any Error) -> Bool {
        if let error = error as? TransportError { return error.code == .timedOut }
        if let error = error as? NetworkError, case .transport(.timedOut) = error.kind { return true }
        if let error = error as? URLError { return error.code == .timedOut }
        return false
    }
}

/// The tokens of a ``RetryBudget``: a plain value, so its arithmetic is tested without
/// concurrency.
struct RetryBudgetState: Sendable, Equatable {
    let capacity: Int
    private(set) var tokens: Int

    init(capacity: Int) {
        self.capacity = max(0, capacity)
        self.tokens = max(0, capacity)
    }

    /// Takes `cost` tokens when there are that many; otherwise takes none and returns `false`.
    mutating func withdraw(_ cost: Int) -> Bool {
        guard cost > 0 else { return true }
        guard tokens >= cost else { return false }
        tokens -= cost
        return true
    }

    /// Gives back `amount` tokens, up to the capacity.
    mutating func deposit(_ amount: Int) {
        guard amount > 0 else { return }
        tokens = amount >= capacity - tokens ? capacity : tokens + amount
    }
}
