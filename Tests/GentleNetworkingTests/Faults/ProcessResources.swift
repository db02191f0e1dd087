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
    /// `extraDescriptors` are allowed above the baseline (a known, bounded leak).
    static func settled(
        to baseline: ProcessResources, extraDescriptors: Int = 0, timeout: TimeInterval = 20
    ) async -> ProcessResources {
        let deadline = Date().addingTimeInterval(timeout)
        var current = now()
        while current.descriptors > baseline.descriptors + extraDescriptors || current.threads > baseline.threads,
            Date() < deadline
        {
            try? await Task.sleep(nanoseconds: 50_000_000)
            current = now()
        }
        return current
    }

    var description: String { "\(descriptors) fds, \(threads) threads" }
}
