import Foundation

/// The descriptors and threads this process holds, read from `/proc/self`: what the fault table
/// compares before and after each case, so a leaked socket or thread shows as a difference.
struct ProcessResources: Equatable, CustomStringConvertible {
    let descriptors: Int
    let threads: Int

    /// The current counts (`-1` where `/proc` is not available).
    static func now() -> ProcessResources {
        func count(_ path: String) -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: path).count) ?? -1
        }
        return ProcessResources(descriptors: count("/proc/self/fd"), threads: count("/proc/self/task"))
    }

    /// Waits (up to `timeout` seconds) until neither count is above `baseline`, and returns the
    /// counts then: sockets close and worker threads exit shortly after a transport is released.
    /// `extraDescriptors` and `extraThreads` are allowed above the baseline (a known, bounded
    /// leak).
    ///
    /// It polls from a thread of its own, not from the concurrency pool: libdispatch retires a
    /// pool worker after a few seconds idle, but each wake-up of a task sleeping on the pool
    /// goes to one of the idle workers in turn, so polling from a task every 50 ms kept every
    /// worker alive (measured: four idle workers stayed for the whole of a 10 s poll, and left
    /// within 8 s of it ending). The table's end once saw one worker more than its baseline for
    /// the whole 60 s wait (TSan CI, 55ec0d6). The polling thread is not counted.
    static func settled(
        to baseline: ProcessResources, extraDescriptors: Int = 0, extraThreads: Int = 0, timeout: TimeInterval = 20
    ) async -> ProcessResources {
        await withCheckedContinuation { continuation in
            let poller = Thread {
                func others() -> ProcessResources {
                    let counts = now()
                    return ProcessResources(descriptors: counts.descriptors, threads: counts.threads - 1)
                }
                let deadline = Date().addingTimeInterval(timeout)
                var current = others()
                while current.descriptors > baseline.descriptors + extraDescriptors
                    || current.threads > baseline.threads + extraThreads,
                    Date() < deadline
                {
                    Thread.sleep(forTimeInterval: 0.05)
                    current = others()
                }
                continuation.resume(returning: current)
            }
            poller.start()
        }
    }

    var description: String { "\(descriptors) fds, \(threads) threads" }

    /// What each open descriptor points at (`socket:[inode]`, `pipe:[inode]`, a path) and each
    /// thread's name, keyed by descriptor number and thread id: what a leak report names.
    static func inventory() -> (descriptors: [String: String], threads: [String: String]) {
        let manager = FileManager.default
        var descriptors: [String: String] = [:]
        for entry in (try? manager.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            descriptors[entry] = (try? manager.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)")) ?? "?"
        }
        var threads: [String: String] = [:]
        for entry in (try? manager.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
            let name = (try? String(contentsOfFile: "/proc/self/task/\(entry)/comm", encoding: .utf8)) ?? "?"
            threads[entry] = name.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return (descriptors, threads)
    }

    /// The descriptors and threads in `after` that are not in `before`, as text for a report.
    static func difference(
        from before: (descriptors: [String: String], threads: [String: String]),
        to after: (descriptors: [String: String], threads: [String: String])
    ) -> String {
        let newDescriptors = after.descriptors.filter { before.descriptors[$0.key] != $0.value }
            .sorted { $0.key < $1.key }.map { "fd \($0.key) → \($0.value)" }
        let newThreads = after.threads.filter { before.threads[$0.key] == nil }
            .sorted { $0.key < $1.key }.map { "thread \($0.key) '\($0.value)'" }
        let gone = before.threads.filter { after.threads[$0.key] == nil }
            .sorted { $0.key < $1.key }.map { "ended: thread \($0.key) '\($0.value)'" }
        return (newDescriptors + newThreads + gone).joined(separator: ", ")
    }
}
