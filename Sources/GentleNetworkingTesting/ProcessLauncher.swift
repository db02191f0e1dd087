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

        /// Maps 120 KiB more of this thread's malloc arena readable, for good, before a launch,
        /// so that corelibs' `Process.run()` does not fault reading past its end.
        ///
        /// `Process.run()` on Linux lists `/proc/self/fd` and copies each entry's whole 256-byte
        /// `d_name`, which for the last entries of `readdir`'s full 32 KiB buffer (a test process
        /// has ~1,400 descriptors open) reads up to ~230 bytes past the buffer. Two fresh-clone
        /// CI runs died there ("Bad pointer dereference" in `memcpy`), each at a page 1.5 and
        /// 6.8 MiB into a 64 MiB-aligned region: a thread arena's heap, which glibc makes
        /// readable only as far as it has grown. Growing it by 120 KiB (below the 128 KiB at
        /// which a block gets a mapping of its own) and freeing that leaves it readable (glibc
        /// only advises the kernel the pages are unused, unless `vm.overcommit_memory` is 2), so
        /// a buffer carved from the top has readable bytes after it. Not reproduced outside the
        /// full suite (1,300–1,420 descriptors and 120 launches passed without this): the
        /// reasoning is glibc's. Fixed in corelibs upstream (swift-corelibs-foundation #5472),
        /// not in this toolchain.
        static func padAllocatorArena() {
            #if canImport(Glibc)
                let size = 120 * 1024
                guard let block = malloc(size) else { return }
                // Written to, so the pair is not optimized away.
                _ = memset(block, 0, 1)
                free(block)
            #endif
        }

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
                    Self.padAllocatorArena()
                    try job.process.run()
                } catch {
                    job.outcome = error
                }
                job.done.signal()
            }
        }
    }
}
