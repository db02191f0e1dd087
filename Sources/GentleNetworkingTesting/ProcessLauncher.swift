import Foundation
import GentleNetworking

/// Starts child processes from one long-lived thread of its own.
///
/// On Linux, `Process.run()` creates a run loop for the calling thread (an eventfd, an epoll
/// descriptor and a timerfd), which lives as long as that thread. Called from Swift concurrency's
/// pool, that leaves 3 descriptors on whichever worker happened to run it, until the worker
/// exits: a leak counter that compares `/proc/self/fd` before and after (the fault table) sees
/// them whenever a new worker runs a launch. Launching from this one thread creates that run loop
/// once per process.
package enum ProcessLauncher {
    private final class Job: @unchecked Sendable {
        // @unchecked: `outcome` is written on the launcher thread before `done` is signalled
        // and read by the caller only after waiting on it.
        let process: Process
        var outcome: (any Error)?
        let done = DispatchSemaphore(value: 0)

        init(_ process: Process) { self.process = process }
    }

    private static let queue = LaunchQueue()

    /// Runs `process` (`process.run()`) on the launcher thread and waits until it has started.
    ///
    /// - Throws: What `Process.run()` throws.
    package static func run(_ process: Process) throws {
        let job = Job(process)
        queue.submit(job)
        job.done.wait()
        if let outcome = job.outcome { throw outcome }
    }

    /// The jobs waiting for the launcher thread, started on first use.
    private final class LaunchQueue: @unchecked Sendable {
        // @unchecked: `jobs` and `started` are guarded by `condition`.
        private let condition = NSCondition()
        private var jobs: [Job] = []
        private var started = false

        func submit(_ job: Job) {
            condition.lock()
            jobs.append(job)
            if !started {
                started = true
                let thread = Thread { [self] in
                    ThreadName.setCurrent("gentle.launcher")
                    loop()
                }
                thread.start()
            }
            condition.signal()
            condition.unlock()
        }

        private func loop() {
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let job = jobs.removeFirst()
                condition.unlock()
                do {
                    try job.process.run()
                } catch {
                    job.outcome = error
                }
                job.done.signal()
            }
        }
    }
}
