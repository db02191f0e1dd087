import Foundation

/// A `Clock` whose time moves only when a test calls ``advance(by:)``, so that code sleeping on
/// it can be asserted exactly without waiting.
final class ManualClock: Clock, @unchecked Sendable {
    // @unchecked: `current` and `sleepers` are only touched while holding `lock`.
    struct Instant: InstantProtocol {
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let id: UUID
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let lock = NSLock()
    private var current = Instant(offset: .zero)
    private var sleepers: [Sleeper] = []

    var now: Instant {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    var minimumResolution: Duration { .zero }

    /// How many tasks are sleeping on this clock now.
    var sleeperCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return sleepers.count
    }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                lock.lock()
                if deadline <= current {
                    lock.unlock()
                    continuation.resume()
                } else if Task.isCancelled {
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                } else {
                    sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    lock.unlock()
                }
            }
        } onCancel: {
            lock.lock()
            let cancelled = sleepers.filter { $0.id == id }
            sleepers.removeAll { $0.id == id }
            lock.unlock()
            for sleeper in cancelled { sleeper.continuation.resume(throwing: CancellationError()) }
        }
    }

    /// Moves time forward and wakes the sleepers whose deadline has come.
    func advance(by duration: Duration) {
        lock.lock()
        current = current.advanced(by: duration)
        let due = sleepers.filter { $0.deadline <= current }
        sleepers.removeAll { $0.deadline <= current }
        lock.unlock()
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Waits (by yielding, never by sleeping) until `count` tasks sleep on this clock; `false`
    /// when that does not happen within many scheduler turns.
    func waitForSleepers(_ count: Int = 1) async -> Bool {
        for _ in 0..<100_000 {
            if sleeperCount >= count { return true }
            await Task.yield()
        }
        return false
    }
}
