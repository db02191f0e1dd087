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
/// libcurl ceiling. Returns requests per second.
func curlCLI(url: URL, count: Int, parallel: Int, workDirectory: URL) throws -> Double {
    let config = workDirectory.appendingPathComponent("curl-\(parallel).config")
    var lines = ""
    for _ in 0..<count {
        lines += "url = \"\(url.absoluteString)\"\noutput = \"/dev/null\"\n"
    }
    try Data(lines.utf8).write(to: config)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    var arguments = ["curl", "--silent", "--show-error", "--fail", "--config", config.path]
    if parallel > 1 { arguments += ["-Z", "--parallel-max", String(parallel)] }
    process.arguments = arguments
    process.standardError = FileHandle.nullDevice  // curl's parallel progress meter
    let started = DispatchTime.now().uptimeNanoseconds
    try process.run()
    while process.isRunning { Thread.sleep(forTimeInterval: 0.002) }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    guard process.terminationStatus == 0 else { throw BenchError("curl exited with \(process.terminationStatus)") }
    return Double(count) / elapsed
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
