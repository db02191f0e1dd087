import Foundation
import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The 25-byte model every throughput run decodes.
struct BenchModel: Decodable, Sendable {
    let id: Int
    let property: String
}

/// Marks the measured window for `scripts/callgrind-requests`: callgrind dumps its counters when
/// either function is entered (`--dump-before`), so the second dump holds exactly the window's
/// instructions. Both do next to nothing otherwise; with `GENTLE_BENCH_MARKERS` set, the window's
/// request count goes to standard error, for the script to divide by.
enum ProfilerMarkers {
    nonisolated(unsafe) static var sink = 0
    static let reportsCount = ProcessInfo.processInfo.environment["GENTLE_BENCH_MARKERS"] != nil

    @inline(never) static func windowStart() {
        sink &+= 1
    }

    @inline(never) static func windowEnd(requests: Int) {
        sink &+= requests
        if reportsCount {
            FileHandle.standardError.write(Data("gentle-bench markers: \(requests) requests in the window\n".utf8))
        }
    }
}

/// Requests per second of `operation`, run by `concurrency` workers for `seconds` after a warm-up.
func throughput(
    concurrency: Int, seconds: Double, warmUp: Double = 0.5, _ operation: @escaping @Sendable () async throws -> Void
) async throws -> Double {
    try await runWorkers(concurrency: concurrency, seconds: warmUp, operation)
    ProfilerMarkers.windowStart()
    let started = DispatchTime.now().uptimeNanoseconds
    let count = try await runWorkers(concurrency: concurrency, seconds: seconds, operation)
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    ProfilerMarkers.windowEnd(requests: count)
    return Double(count) / elapsed
}

/// One client's figures from one measured window.
struct ClientSample: Sendable {
    /// Completed requests per second.
    var rate: Double
    /// The process's CPU time (user + system) per request, in µs: this process for in-process
    /// clients, the child for the curl CLI.
    var cpuMicroseconds: Double
    /// Each request's wall time in µs, when asked for (1 in flight).
    var latencies: [Double] = []
}

/// Like ``throughput(concurrency:seconds:warmUp:_:)``, also measuring this process's CPU time
/// over the window and, with `latencies`, each request's wall time.
func measureClient(
    concurrency: Int, seconds: Double, latencies: Bool, warmUp: Double = 0.5,
    _ operation: @escaping @Sendable () async throws -> Void
) async throws -> ClientSample {
    await waitUntilIdle()
    try await runWorkers(concurrency: concurrency, seconds: warmUp, operation)
    let timed: @Sendable () async throws -> Void
    let recorded = LatencyRecorder()
    if latencies {
        timed = {
            let started = DispatchTime.now().uptimeNanoseconds
            try await operation()
            recorded.add(Double(DispatchTime.now().uptimeNanoseconds - started) / 1000)
        }
    } else {
        timed = operation
    }
    let cpuBefore = ObservationBench.cpuSeconds().total
    let started = DispatchTime.now().uptimeNanoseconds
    let count = try await runWorkers(concurrency: concurrency, seconds: seconds, timed)
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    let cpu = ObservationBench.cpuSeconds().total - cpuBefore
    guard count > 0 else { throw BenchError("no request completed") }
    return ClientSample(
        rate: Double(count) / elapsed, cpuMicroseconds: cpu / Double(count) * 1e6, latencies: recorded.values)
}

/// Waits until this process uses less than 2% of a core over 50 ms (at most `limit` seconds), so
/// work a previous client left running is not counted as the next client's CPU (in 2026-12-02's
/// full runs it waited 0.4–2.6 s one to three times per run; which client left the work is not
/// known), then until libdispatch has let go of the extra worker threads a previous client made
/// it start (see ``waitForRestingWorkerPool(limit:)``). Says on standard error when a wait was
/// long or did not end.
func waitUntilIdle(limit: Double = 5) async {
    let started = DispatchTime.now().uptimeNanoseconds
    var last = ObservationBench.cpuSeconds().total
    while true {
        try? await Task.sleep(nanoseconds: 50_000_000)
        let now = ObservationBench.cpuSeconds().total
        let used = now - last
        last = now
        let waited = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        if used < 0.001 || waited >= limit {
            if waited >= 0.2 {
                FileHandle.standardError.write(
                    Data(
                        String(
                            format:
                                "gentle-bench: waited %.2f s for the process to go idle (last 50 ms: %.1f ms of CPU)\n",
                            waited, used * 1000
                        ).utf8))
            }
            break
        }
    }
    await waitForRestingWorkerPool()
}

/// Waits (at most `limit` seconds) until libdispatch's worker threads of each kind (the global
/// queues' `default-qos` workers, where Swift's global executor runs jobs on Linux, and the
/// overcommitting ones) number no more than the machine's cores.
///
/// libdispatch on Linux starts more workers than cores when the ones it has look blocked, and
/// keeps each until it has had no job for 5 s. After `URLSessionTransport`'s rows five
/// `default-qos` workers stood on this 2-core machine (three after raw URLSession's; more than
/// two after the other clients too). A client measured meanwhile has its jobs spread
/// over all of them, with more thread wake-ups per request: HTTP/2 over `CurlTransport`
/// measured right after `URLSessionTransport` used 69.6 µs of CPU per request and made 0.96x
/// the curl CLI's requests, 7 s later 47.9 µs and 1.42x (stop 47). Each client is measured from
/// the pool's resting state, as in a process of its own. The wait costs about 5 s per client.
///
/// `GENTLE_BENCH_NO_POOL_WAIT=1` skips it (to compare with runs made before it existed).
func waitForRestingWorkerPool(limit: Double = 10) async {
    if ProcessInfo.processInfo.environment["GENTLE_BENCH_NO_POOL_WAIT"] == "1" { return }
    // Polled from a thread of its own: a `Task.sleep` here is a job on those very workers
    // every time it wakes, which kept all of them busy enough never to exit.
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread {
            let started = DispatchTime.now().uptimeNanoseconds
            let cores = ProcessInfo.processInfo.activeProcessorCount
            while true {
                let names = dispatchWorkerNames()
                let standing = names.filter { $0.hasSuffix("default-qos") }.count
                let overcommit = names.filter { $0.hasSuffix("overcommit") }.count
                let waited = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
                if standing <= cores && overcommit <= cores || waited >= limit {
                    if waited >= 0.2 {
                        FileHandle.standardError.write(
                            Data(
                                String(
                                    format:
                                        "gentle-bench: waited %.2f s for libdispatch's workers to exit (%d default-qos, "
                                        + "%d overcommit left)\n", waited, standing, overcommit
                                ).utf8))
                    }
                    continuation.resume()
                    return
                }
                Thread.sleep(forTimeInterval: 0.1)
            }
        }.start()
    }
}

/// The names of this process's threads that libdispatch's global queues run (`…-qos`, with
/// `.overcommit` for the overcommitting ones), as `/proc/self/task/*/comm` gives them (the last
/// 15 characters). Empty where `/proc` is not there.
func dispatchWorkerNames() -> [String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap { task -> String? in
        guard let data = FileManager.default.contents(atPath: "/proc/self/task/\(task)/comm") else { return nil }
        let name = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return name.contains("qos") ? name : nil
    }
}

/// Reads `file` through once, 4 MiB at a time, so that the first client to fetch it from nginx
/// does not pay for the kernel filling its page cache. The benches' big files are sparse (made
/// with `truncate`), and the first transfer of one (nginx's `sendfile` of the holes) ran at a
/// sixth of the speed of the next ones: the client measured first in each run got 0.16x–0.18x
/// the curl CLI in its first round, whoever it was (stop 45's and 47's runs).
func warmPageCache(of file: URL) throws {
    let handle = try FileHandle(forReadingFrom: file)
    defer { try? handle.close() }
    while let chunk = try handle.read(upToCount: 4 << 20), !chunk.isEmpty {}
}

/// Request wall times from concurrent workers.
final class LatencyRecorder: Sendable {
    private let storage = Locked<[Double]>([])

    func add(_ microseconds: Double) {
        storage.withLock { $0.append(microseconds) }
    }

    var values: [Double] { storage.withLock { $0 } }
}

/// The value below which `fraction` of `values` fall (nearest rank; NaN when empty).
func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

/// Runs `operation` in `concurrency` workers until `seconds` have passed; returns how many times
/// it completed.
@discardableResult
func runWorkers(
    concurrency: Int, seconds: Double, _ operation: @escaping @Sendable () async throws -> Void
)
    async throws -> Int
{
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
    return try await withThrowingTaskGroup(of: Int.self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                var done = 0
                while DispatchTime.now().uptimeNanoseconds < deadline {
                    try await operation()
                    done += 1
                }
                return done
            }
        }
        return try await group.reduce(0, +)
    }
}

/// Raw URLSession with JSONDecoder, no library in between: the baseline.
func rawURLSessionFetch(_ session: URLSession, _ url: URL) async throws -> BenchModel {
    let data: Data = try await withCheckedThrowingContinuation { continuation in
        session.dataTask(with: url) { data, response, error in
            if let error {
                continuation.resume(throwing: error)
            } else if (response as? HTTPURLResponse)?.statusCode == 200, let data {
                continuation.resume(returning: data)
            } else {
                continuation.resume(throwing: URLError(.badServerResponse))
            }
        }.resume()
    }
    return try JSONDecoder().decode(BenchModel.self, from: data)
}

/// The curl command-line tool fetching `count` URLs with `--parallel-max` connections: the
/// libcurl ceiling. Its CPU time is the child's (`RUSAGE_CHILDREN` across the run: nginx, the
/// other child, is still running and so not counted); each transfer's `time_total` is kept when
/// `latencies` is set.
func curlCLI(
    url: URL, count: Int, parallel: Int, workDirectory: URL, latencies: Bool = false, extraArguments: [String] = []
) throws -> ClientSample {
    let config = workDirectory.appendingPathComponent("curl-\(parallel).config")
    var lines = ""
    for _ in 0..<count {
        lines += "url = \"\(url.absoluteString)\"\noutput = \"/dev/null\"\n"
    }
    try Data(lines.utf8).write(to: config)
    let timings = workDirectory.appendingPathComponent("curl-\(parallel).times")
    guard FileManager.default.createFile(atPath: timings.path, contents: nil) else {
        throw BenchError("cannot create \(timings.path)")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    var arguments = ["curl", "--silent", "--show-error", "--fail", "--config", config.path]
    if parallel > 1 { arguments += ["-Z", "--parallel-max", String(parallel)] }
    if latencies { arguments += ["--write-out", "%{time_total}\\n"] }
    arguments += extraArguments
    process.arguments = arguments
    let output = try FileHandle(forWritingTo: timings)
    defer { try? output.close() }
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice  // curl's parallel progress meter
    let cpuBefore = childCPUSeconds()
    let started = DispatchTime.now().uptimeNanoseconds
    try process.run()
    while process.isRunning { Thread.sleep(forTimeInterval: 0.002) }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    let cpu = childCPUSeconds() - cpuBefore
    guard process.terminationStatus == 0 else { throw BenchError("curl exited with \(process.terminationStatus)") }
    var sample = ClientSample(rate: Double(count) / elapsed, cpuMicroseconds: cpu / Double(count) * 1e6)
    if latencies {
        let text = String(decoding: try Data(contentsOf: timings), as: UTF8.self)
        sample.latencies = text.split(separator: "\n").compactMap { Double($0).map { $0 * 1e6 } }
        guard sample.latencies.count == count else {
            throw BenchError("curl reported \(sample.latencies.count) transfer times for \(count) transfers")
        }
    }
    return sample
}

/// User + system CPU time of this process's terminated and waited-for children, in seconds.
func childCPUSeconds() -> Double {
    var usage = rusage()
    guard getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage) == 0 else { return .nan }
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Peak resident memory of this process (VmHWM), in bytes.
func peakResidentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first ?? -1
        return kilobytes * 1024
    }
    return -1
}

/// Nanoseconds per call of `operation`, over `iterations` sequential calls after a warm-up.
func nanosecondsPerCall(iterations: Int, _ operation: () async throws -> Void) async throws -> Double {
    for _ in 0..<min(1000, iterations) { try await operation() }
    let started = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<iterations { try await operation() }
    return Double(DispatchTime.now().uptimeNanoseconds - started) / Double(iterations)
}

/// The median of `values` (NaN when empty).
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
