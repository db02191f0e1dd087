import Foundation

/// Something with deadlines that ``DeadlineTimer`` watches (a ``SessionCall``).
protocol DeadlineWatched: AnyObject, Sendable {
    /// Called by the timer once `now` (uptime nanoseconds) has reached the last deadline it
    /// was given: ends the watched thing if a deadline passed, and returns the next deadline to
    /// look again at, or `nil` when there is nothing left to watch (ended, now or before).
    func checkDeadlines(now: UInt64) -> UInt64?
}

/// One timer for the deadlines of every running ``SessionCall``: each call's idle and total
/// deadlines are looked at when the earliest of them comes, and a call that ends leaves nothing
/// behind.
///
/// Each call used to sleep in a task of its own until its next deadline (a minute away by
/// default) and cancel it when it ended: a task and a job per request, and more. A cancelled
/// `Task.sleep` ends its task at once, but the runtime's timer for it stays scheduled until the
/// deadline it was made for, and then runs (50,000 sleeps of 8 s, cancelled at once: 173 ms of
/// CPU 8 s later, about 3.5 µs each, Swift 6.3 on Linux). A client making thousands of requests
/// a second kept a minute's worth of them pending, and their firings, jobs on the global
/// executor, kept libdispatch's extra worker threads from going idle for a minute after the
/// traffic stopped (gentle-bench, stop 47).
///
/// Calls are held weakly: a call nobody keeps ends with its session task, and the timer drops
/// it at its next look. The timer fires at the earliest deadline given (plus a millisecond, as
/// the sleeping task did); a deadline that moved later (activity) is looked at then and handed
/// back. With no call running, nothing is scheduled.
final class DeadlineTimer: Sendable {
    /// The timer every ``SessionCall`` uses.
    static let shared = DeadlineTimer()

    private struct Watched {
        weak var item: (any DeadlineWatched)?
    }

    private struct State {
        var watched: [ObjectIdentifier: Watched] = [:]
        /// When the timer is set to fire (uptime nanoseconds); `nil` while it is not set.
        var armedFor: UInt64?
    }

    private let state = Locked(State())
    private let queue: DispatchQueue
    // Unchecked: a dispatch source may be scheduled from any thread.
    private nonisolated(unsafe) let timer: any DispatchSourceTimer

    init(label: String = "gentle.urlsession.deadlines") {
        queue = DispatchQueue(label: label)
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in self?.fire() }
        timer.schedule(deadline: .distantFuture)
        timer.resume()
    }

    deinit {
        timer.setEventHandler {}
        timer.cancel()
    }

    /// How many things are watched (for tests).
    var count: Int { state.withLock { $0.watched.count } }

    /// Watches `item`, first looking at it at `deadline` (uptime nanoseconds).
    func add(_ item: any DeadlineWatched, deadline: UInt64) {
        let arm = state.withLock { state -> UInt64? in
            state.watched[ObjectIdentifier(item)] = Watched(item: item)
            return Self.earlier(deadline, than: &state.armedFor)
        }
        if let arm { schedule(arm) }
    }

    /// Stops watching `item` (it ended). The timer is left as it is: at worst it fires once
    /// for nothing.
    func remove(_ item: any DeadlineWatched) {
        state.withLock { _ = $0.watched.removeValue(forKey: ObjectIdentifier(item)) }
    }

    /// Sets `armedFor` to `deadline` when that is earlier (or nothing is set): returns the time
    /// to schedule the timer for, or `nil` when it fires early enough already.
    private static func earlier(_ deadline: UInt64, than armedFor: inout UInt64?) -> UInt64? {
        if let current = armedFor, current <= deadline { return nil }
        armedFor = deadline
        return deadline
    }

    private func schedule(_ deadline: UInt64) {
        // A `dispatch_time_t` with its top bits set means another clock (or for ever): a
        // deadline that far (no total timeout) is for ever.
        let fireAt = deadline < 1 << 62 ? DispatchTime(uptimeNanoseconds: deadline + 1_000_000) : .distantFuture
        timer.schedule(deadline: fireAt, leeway: .milliseconds(1))
    }

    /// The timer fired: looks at every watched item (outside the lock, since an item that
    /// passed a deadline ends itself and removes itself), then sets the timer for the earliest
    /// deadline left. An item added meanwhile set the timer itself.
    private func fire() {
        let items = state.withLock { state -> [(ObjectIdentifier, (any DeadlineWatched)?)] in
            state.armedFor = nil
            return state.watched.map { ($0.key, $0.value.item) }
        }
        let now = DispatchTime.now().uptimeNanoseconds
        var next: UInt64?
        var gone: [(ObjectIdentifier, (any DeadlineWatched)?)] = []
        for (key, item) in items {
            guard let item, let deadline = item.checkDeadlines(now: now) else {
                gone.append((key, item))
                continue
            }
            next = min(next ?? deadline, deadline)
        }
        let arm = state.withLock { state -> UInt64? in
            // Only the entry looked at: an item freed since, whose address a new call took
            // (and added itself under), stays.
            for (key, item) in gone {
                guard let entry = state.watched[key] else { continue }
                if let current = entry.item, item.map({ $0 !== current }) ?? true { continue }
                state.watched[key] = nil
            }
            guard let next else { return nil }
            return Self.earlier(next, than: &state.armedFor)
        }
        if let arm { schedule(arm) }
    }
}
