import Foundation

@testable import GentleNetworking

/// The descriptors and threads this process holds, read from `/proc/self`: what the fault table
/// compares before and after each case, so a leaked socket or thread shows as a difference.
struct ProcessResources: Equatable, CustomStringConvertible {
    let descriptors: Int
    /// Every thread of the process but the poller's (see ``settled(to:extraDescriptors:extraThreads:poolWorkers:timeout:)``).
    let threads: Int
    /// The threads of libdispatch's shared pool (which also runs Swift concurrency's tasks):
    /// libdispatch names each after its root queue's label, cut to its last 15 bytes
    /// (`oot.default-qos`, `r-initiated-qos`, `-qos.overcommit`). They belong to no case: the
    /// test itself, corelibs' `Process` (nginx) and URLSession all run work on them, and
    /// libdispatch starts and retires them as it likes.
    let poolWorkers: Int
    /// The ids of the other threads: the ones a case can own (a transport's loop thread, a body
    /// reader, a server's connection threads), each named by whoever started it (the library
    /// starts every thread through `ThreadName.start`). Compared by id, not counted, so a thread
    /// that ended cannot hide one that leaked.
    let ownThreadIDs: Set<String>

    /// The number of ``ownThreadIDs``.
    var ownThreads: Int { ownThreadIDs.count }

    /// The name the polling thread gives itself; it is never counted.
    static let pollerName = "fault.poller"

    /// The current counts (`-1` where `/proc` is not available).
    static func now() -> ProcessResources {
        let manager = FileManager.default
        let descriptors = (try? manager.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
        guard let tasks = try? manager.contentsOfDirectory(atPath: "/proc/self/task") else {
            return ProcessResources(descriptors: descriptors, threads: -1, poolWorkers: 0, ownThreadIDs: [])
        }
        var pool = 0
        var own: Set<String> = []
        for task in tasks {
            let name = threadName(of: task)
            if name == pollerName {
                continue
            } else if isPoolWorker(name) {
                pool += 1
            } else {
                own.insert(task)
            }
        }
        return ProcessResources(
            descriptors: descriptors, threads: pool + own.count, poolWorkers: pool, ownThreadIDs: own)
    }

    /// Whether a thread named `name` is one of libdispatch's pool workers (see ``poolWorkers``).
    static func isPoolWorker(_ name: String) -> Bool {
        name.contains("-qos")
    }

    private static func threadName(of task: String) -> String {
        let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? "?"
        return name.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The own threads alive now that were not in `baseline`.
    func newOwnThreads(since baseline: ProcessResources) -> Int {
        ownThreadIDs.subtracting(baseline.ownThreadIDs).count
    }

    /// Waits (up to `timeout` seconds) until no descriptor or thread is left above `baseline`,
    /// and returns the counts then: sockets close and worker threads exit shortly after a
    /// transport is released. `extraDescriptors` and `extraThreads` are allowed above the
    /// baseline (a known, bounded leak). Own threads are compared by id (none started since the
    /// baseline may be alive) and pool workers by count; with `poolWorkers` false only the
    /// first: a case waits for its own threads, not for libdispatch to retire an idle worker
    /// (which took the whole 20 s wait in most cases, and once longer after a case on
    /// `CurlTransport` that launched nginx).
    ///
    /// It polls from a thread of its own, not from the concurrency pool: libdispatch retires a
    /// pool worker after a few seconds idle, but each wake-up of a task sleeping on the pool
    /// goes to one of the idle workers in turn, so polling from a task every 50 ms kept every
    /// worker alive (measured: four idle workers stayed for the whole of a 10 s poll, and left
    /// within 8 s of it ending). The table's end once saw one worker more than its baseline for
    /// the whole 60 s wait (TSan CI, 55ec0d6). The polling thread names itself and is not
    /// counted (unnamed, it would have taken the name of the pool worker that started it).
    static func settled(
        to baseline: ProcessResources, extraDescriptors: Int = 0, extraThreads: Int = 0, poolWorkers: Bool = true,
        timeout: TimeInterval = 20
    ) async -> ProcessResources {
        await withCheckedContinuation { continuation in
            ThreadName.start(pollerName) {
                let deadline = Date().addingTimeInterval(timeout)
                var current = now()
                while current.descriptors > baseline.descriptors + extraDescriptors
                    || current.newOwnThreads(since: baseline) > extraThreads
                    || (poolWorkers && current.poolWorkers > baseline.poolWorkers),
                    Date() < deadline
                {
                    Thread.sleep(forTimeInterval: 0.05)
                    current = now()
                }
                continuation.resume(returning: current)
            }
        }
    }

    var description: String { "\(descriptors) fds, \(threads) threads (\(poolWorkers) libdispatch pool workers)" }

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
            let name = threadName(of: entry)
            if name != pollerName { threads[entry] = name }
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
