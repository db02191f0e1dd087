import Foundation

/// Collects the ``RequestMetrics`` of one logical request while it runs, and reports each
/// ``ExchangeStep`` to the request's log session as it happens.
///
/// ``HTTPNetworkService`` binds one to ``current`` (a task-local) around a request it observes
/// (a logger is enabled, or the caller asked for metrics); transports and decorators running in
/// that task find it there. Without one they do nothing: one task-local read per exchange.
///
/// Transactions may be added from any thread (libcurl's event loop, a URLSession delegate
/// queue); steps are recorded by the task that runs the request. The logger is always called
/// outside this recorder's lock.
package final class ExchangeRecorder: Sendable {
    /// The recorder of the request the current task runs, if it is observed.
    @TaskLocal static var current: ExchangeRecorder?

    private struct State {
        var transactions: [TransactionMetrics] = []
        var steps: [ExchangeStep] = []
        var attempt = 1
        /// Redirects followed in the current attempt: the next transaction's hop.
        var hop = 0
    }

    private let state = Locked(State())
    private let log: NetworkLogSession?
    let start = Date()
    private let startUptime = DispatchTime.now().uptimeNanoseconds

    /// - Parameter log: Where steps are reported as they happen; `nil` to collect only.
    ///
    /// What is collected is kept as the transports report it (URLs redacted of query values and
    /// user info): the caller who asked for the metrics made the request. The log records that
    /// carry it scrub the request's credential values when they are read.
    init(log: NetworkLogSession?) {
        self.log = log
    }

    /// Runs `operation` with `recorder` as ``current``.
    ///
    /// With `nil`, a recorder the task inherited (a request sent from inside another observed
    /// request: a token refresh, a logger, a task it spawned) is hidden, so the inner request's
    /// exchanges are not counted as the outer one's. When there is none to hide, `operation`
    /// runs as it is: an unobserved request pays one task-local read.
    static func observing<T>(
        _ recorder: ExchangeRecorder?, isolation: isolated (any Actor)? = #isolation,
        operation: () async throws -> T
    ) async rethrows -> T {
        guard recorder != nil || current != nil else { return try await operation() }
        return try await $current.withValue(recorder) { try await operation() }
    }

    /// What an unobserved request pays for observation, for gentle-bench: the two reads of
    /// ``current`` it makes (the service hiding an inherited recorder, the transport looking for
    /// one). `true` when nothing observes the calling task.
    package static func unobservedPathProbe() -> Bool {
        current == nil && current == nil
    }

    /// Records `step` for the request the current task runs, when it is observed.
    static func note(_ step: @autoclosure () -> ExchangeStep) {
        current?.record(step())
    }

    /// Tells the log records of the request the current task runs that `value` (a credential
    /// header's value, under `header`) was sent on its behalf after the request was made (a
    /// retry with a refreshed token), so it is scrubbed from what they quote, as the request's
    /// own credentials are. Nothing happens when nothing logs the request.
    static func noteCredential(_ value: @autoclosure () -> String?, header: String) {
        guard let log = current?.log, let value = value() else { return }
        log.addCredential(value, header: header)
    }

    /// Adds an exchange's figures, stamped with the current attempt and (unless `hop` is given)
    /// the current hop.
    func add(_ transaction: TransactionMetrics, hop: Int? = nil) {
        var transaction = transaction
        state.withLock { state in
            transaction.attempt = state.attempt
            transaction.hop = hop ?? state.hop
            state.transactions.append(transaction)
        }
    }

    /// Records `step` and reports it to the log session.
    func record(_ step: ExchangeStep) {
        state.withLock { state in
            state.steps.append(step)
            if step.startsAttempt {
                state.attempt += 1
                state.hop = 0
            } else if case .redirected = step {
                state.hop += 1
            }
        }
        log?.step(step)
    }

    /// What was collected so far, with the duration up to now.
    func snapshot() -> RequestMetrics {
        let elapsed = TimeInterval(DispatchTime.now().uptimeNanoseconds &- startUptime) / 1_000_000_000
        return state.withLock { state in
            RequestMetrics(start: start, duration: elapsed, transactions: state.transactions, steps: state.steps)
        }
    }
}
