import GentleNetworking

/// The refresh bookkeeping of one ``NetworkManager``: the core's single-flight
/// `RefreshCoordinatorState` (with its loop guard), plus the waiters of the refresh in flight and
/// which credentials' refreshes failed.
struct SessionRefreshState {
    let policy: SessionRefreshPolicy
    var coordinator: RefreshCoordinatorState
    /// How many refreshes have ended, whatever their outcome (the coordinator's count).
    var finishedRefreshes: Int { coordinator.finishedRefreshes }
    /// For credentials (by fingerprint) whose refresh failed: ``finishedRefreshes`` after it
    /// ended. A 401 to a request sent with that credential before then fails without a refresh.
    /// Emptied when a refresh succeeds.
    var failures: [String: Int] = [:]
    /// The number of the last refresh started, and of the one in flight.
    var refreshNumber = 0
    var activeRefresh: Int?
    /// The task running the refresh in flight, to cancel it when it times out.
    var refreshTask: Task<Void, Never>?
    /// Callers waiting for refresh `key`, by waiter id.
    var waiters: [Int: [Int: CheckedContinuation<Bool, any Error>]] = [:]
    /// The outcomes of the most recent refreshes, by number.
    var outcomes: [Int: Bool] = [:]
    var nextWaiterID = 0

    init(policy: SessionRefreshPolicy) {
        self.policy = policy
        self.coordinator = RefreshCoordinatorState(maxRefreshes: policy.maxRefreshes, window: policy.window)
    }
}
