import Foundation
import GentleNetworking

/// A `TaskExecutor` that runs its jobs on one thread of its own, for tests whose assertions
/// depend on how long they wait between two steps.
///
/// The suite runs hundreds of tests in parallel on a two-thread cooperative pool. Under
/// ThreadSanitizer a CI run kept that pool busy for over two minutes at a time, so a test that
/// awaits one request and then sends the next could resume 118 s later, long enough for libcurl
/// to close the idle connection it meant to reuse (`CURLOPT_MAXAGE_CONN`). Run under
/// `withTaskExecutorPreference`, the test's own steps (and the transport's resumptions of them)
/// queue here instead of behind the rest of the suite.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var finishing = false
    private var running = true

    init(name: String = "gentle.test-executor") {
        ThreadName.start(name) { [self] in runLoop() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        if running {
            jobs.append(job)
            condition.signal()
            condition.unlock()
        } else {
            // A job that arrives after the thread ended (a late resumption) still runs.
            condition.unlock()
            let executor = asUnownedTaskExecutor()
            Thread.detachNewThread { job.runSynchronously(on: executor) }
        }
    }

    /// Lets the thread end once it has run every job it was given.
    func finish() {
        condition.lock()
        finishing = true
        condition.signal()
        condition.unlock()
    }

    private func runLoop() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while jobs.isEmpty && !finishing { condition.wait() }
            if jobs.isEmpty {
                running = false
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}

/// Runs `body` with its steps on a thread of their own rather than on the cooperative pool the
/// rest of the suite shares: for tests whose outcome depends on the time between two awaits.
/// Before macOS 15 (no task executors), `body` runs where it is.
func onDedicatedThread<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
    guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else { return try await body() }
    let executor = DedicatedThreadExecutor()
    defer { executor.finish() }
    return try await withTaskExecutorPreference(executor) { try await body() }
}
