import Foundation
import GentleNetworking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One reading of this process's resources, from `/proc/self` (Linux).
struct ProcessSample: Sendable {
    /// Seconds since the measurement started.
    var elapsed: Double
    /// `VmRSS`, in bytes.
    var residentBytes: Int
    /// Open file descriptors (`/proc/self/fd`, without the one used to read it).
    var descriptors: Int
    /// Threads (`/proc/self/task`).
    var threads: Int

    static func now(since start: UInt64) -> ProcessSample {
        ProcessSample(
            elapsed: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9,
            residentBytes: statusField("VmRSS:"), descriptors: max(0, entries(in: "/proc/self/fd") - 1),
            threads: entries(in: "/proc/self/task"))
    }

    /// A `kB` field of `/proc/self/status`, in bytes; -1 when unreadable.
    static func statusField(_ name: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            return (line.split(separator: " ").compactMap { Int($0) }.first ?? -1) * 1024
        }
        return -1
    }

    /// The number of entries of a directory, without `.` and `..`; -1 when unreadable.
    static func entries(in path: String) -> Int {
        guard let directory = opendir(path) else { return -1 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = directoryEntryName(entry)
            if name != "." && name != ".." { count += 1 }
        }
        return count
    }
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit and returns (soft, hard) afterwards.
@discardableResult
func raiseDescriptorLimit() -> (soft: Int, hard: Int) {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (-1, -1) }
    if limit.rlim_cur < limit.rlim_max {
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
    }
    return (Int(clamping: limit.rlim_cur), Int(clamping: limit.rlim_max))
}

/// Samples the process every `interval` seconds on a thread of its own (not the cooperative
/// pool, which the load may saturate), keeping every sample and the maxima.
final class ProcessSampler: @unchecked Sendable {
    // @unchecked: `samples` and `stopped` are only touched inside `lock`.
    private let lock = NSLock()
    private var samples: [ProcessSample] = []
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)
    let start: UInt64

    /// Starts sampling at once and then every `interval` seconds; `onSample` runs on the
    /// sampler's thread.
    init(
        interval: Double, start: UInt64 = DispatchTime.now().uptimeNanoseconds,
        onSample: (@Sendable (ProcessSample) -> Void)? = nil
    ) {
        self.start = start
        samples.reserveCapacity(4096)
        let thread = Thread { [self] in
            var next = DispatchTime.now().uptimeNanoseconds
            while true {
                let sample = ProcessSample.now(since: start)
                let stop = lock.withLock { () -> Bool in
                    samples.append(sample)
                    return stopped
                }
                onSample?(sample)
                if stop { break }
                next += UInt64(interval * 1e9)
                while !lock.withLock({ stopped }) {
                    let now = DispatchTime.now().uptimeNanoseconds
                    guard now < next else { break }
                    usleep(useconds_t(min((next - now) / 1000, 50_000)))
                }
            }
            done.signal()
        }
        thread.name = "gentle-bench.sampler"
        thread.start()
    }

    /// Takes a last sample, stops, and returns every sample in order.
    func finish() -> [ProcessSample] {
        lock.withLock { stopped = true }
        done.wait()
        return lock.withLock { samples }
    }
}
