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
/// the sleeping task did; at most ``longestWait`` ahead) and looks at the calls that are due
/// only; a deadline that moved later (activity) is handed back then. When the last call ends
/// the timer is unset: with no call running, nothing is scheduled.
final class DeadlineTimer: Sendable {
    /// The timer every ``SessionCall`` uses.
    static let shared = DeadlineTimer()

    private struct Watched {
        weak var item: (any DeadlineWatched)?
        /// When to look at it next (uptime nanoseconds).
        var due: UInt64
    }

    private struct State {
        var watched: [ObjectIdentifier: Watched] = [:]
        /// When the timer is set to fire (uptime nanoseconds); `nil` while it is not set.
        var armedFor: UInt64?
    }

    /// The longest the timer is ever set for: a deadline further away is reached in steps.
    static let longestWait: UInt64 = 1_000 * 1_000_000_000

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
        state.withLock { state in
            state.watched[ObjectIdentifier(item)] = Watched(item: item, due: deadline)
            arm(for: deadline, in: &state)
        }
    }

    /// Stops watching `item` (it ended). The timer stays set unless nothing is left to watch
    /// (then it is unset): set for an item that ended, it fires once for nothing.
    func remove(_ item: any DeadlineWatched) {
        state.withLock { state in
            state.watched.removeValue(forKey: ObjectIdentifier(item))
            disarmIfIdle(&state)
        }
    }

    /// With nothing left to watch, the timer is unset: a timer left set would fire once more,
    /// for nothing, up to the last call's idle timeout after the traffic stopped.
    private func disarmIfIdle(_ state: inout State) {
        guard state.watched.isEmpty, state.armedFor != nil else { return }
        state.armedFor = nil
        timer.schedule(deadline: .distantFuture)
    }

    /// Sets the timer for `deadline` (at most ``longestWait`` from now, plus a millisecond) when
    /// that is earlier than it is set for, or it is not set. Called under the lock, so that what
    /// the timer is set for is always `armedFor`: a dispatch timer keeps its last setting only,
    /// and two settings made outside the lock could land in the other order (a later one last,
    /// and `armedFor` then said the timer fired earlier than it did: every deadline after it was
    /// missed until the later one).
    private func arm(for deadline: UInt64, in state: inout State) {
        let now = DispatchTime.now().uptimeNanoseconds
        let capped = min(deadline, now &+ Self.longestWait)
        if let current = state.armedFor, current <= capped { return }
        state.armedFor = capped
        // A `dispatch_time_t` with its top bits set means another clock; `capped` is an uptime
        // at most ``longestWait`` away, far below them.
        timer.schedule(deadline: DispatchTime(uptimeNanoseconds: capped &+ 1_000_000), leeway: .milliseconds(1))
    }

    /// The timer fired: looks at every item that is due (outside the lock, since an item that
    /// passed a deadline ends itself and removes itself), notes the next deadline each hands
    /// back, then sets the timer for the earliest one left. An item added meanwhile set the
    /// timer itself.
    private func fire() {
        let (due, pending) = state.withLock { state -> ([(ObjectIdentifier, (any DeadlineWatched)?)], UInt64?) in
            state.armedFor = nil
            let now = DispatchTime.now().uptimeNanoseconds
            var due: [(ObjectIdentifier, (any DeadlineWatched)?)] = []
            var pending: UInt64?
            for (key, entry) in state.watched {
                if entry.due <= now {
                    due.append((key, entry.item))
                } else {
                    pending = min(pending ?? entry.due, entry.due)
                }
            }
            return (due, pending)
        }
        let now = DispatchTime.now().uptimeNanoseconds
        let looked = due.map { key, item in (key, item, item.flatMap { $0.checkDeadlines(now: now) }) }
        // The items read under the lock below are let go of after it: one whose last other
        // owner let go meanwhile must not be freed (its deinit run) under the timer's lock.
        var current: [any DeadlineWatched] = []
        state.withLock { state in
            var next = pending
            for (key, item, deadline) in looked {
                // Only the entry looked at: an item freed since, whose address a new call took
                // (and added itself under), stays.
                guard let entry = state.watched[key] else { continue }
                if let watched = entry.item {
                    current.append(watched)
                    if item.map({ $0 !== watched }) ?? true { continue }
                }
                if let deadline {
                    state.watched[key]?.due = deadline
                    next = min(next ?? deadline, deadline)
                } else {
                    state.watched[key] = nil
                }
            }
            if let next { arm(for: next, in: &state) } else { disarmIfIdle(&state) }
        }
    }
}
