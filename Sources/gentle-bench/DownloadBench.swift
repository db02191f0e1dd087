import Foundation
import GentleNetworkingTesting

/// A 1 GiB download to a file: the default transport in a child process (so only the download
/// counts toward its peak RSS) and the curl CLI writing the same file to the same directory,
/// interleaved over rounds. Prints MiB/s (median and range), the ratio of the medians and the
/// child's peak RSS.
enum DownloadBench {
    struct Result {
        /// The child's peak RSS, median over the rounds, in bytes.
        var peak: Int
        /// MiB/s, per round.
        var speeds: [Double]
        var cliSpeeds: [Double]
    }

    static let size = 1 << 30

    static func measure(nginx: NginxServer, work: URL, rounds: Int) throws -> Result {
        let big = nginx.documentRoot.appendingPathComponent("1GiB.bin")
        guard FileManager.default.createFile(atPath: big.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: big)
        else { throw BenchError("cannot create the 1 GiB file") }
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
        defer { try? FileManager.default.removeItem(at: big) }
        try warmPageCache(of: big)
        // On tmpfs when there is one: this measures the transport, and a disk's write-back made
        // rounds differ by 3x here (both writers alike).
        let shm = URL(fileURLWithPath: "/dev/shm")
        let shmFree =
            ((try? FileManager.default.attributesOfFileSystem(forPath: shm.path))?[.systemFreeSize] as? NSNumber)?
            .int64Value ?? 0
        let directory =
            FileManager.default.isWritableFile(atPath: shm.path) && shmFree > Int64(size) + (256 << 20) ? shm : work
        let destination = directory.appendingPathComponent("gentle-bench-download-\(getpid()).bin")
        defer { try? FileManager.default.removeItem(at: destination) }
        let url = nginx.url("/1GiB.bin")
        var peaks: [Double] = []
        var speeds: [Double] = []
        var cliSpeeds: [Double] = []
        for _ in 0..<max(1, rounds) {
            // Each writer starts with no dirty pages of the one before (when on a disk).
            sync()
            let (peak, seconds) = try GentleBench.measureDownloadChild(url: url, destination: destination)
            try? FileManager.default.removeItem(at: destination)
            peaks.append(Double(peak))
            speeds.append(Double(size) / 1_048_576 / seconds)
            sync()
            cliSpeeds.append(Double(size) / 1_048_576 / (try curlCLI(url, to: destination)))
            try? FileManager.default.removeItem(at: destination)
        }
        let result = Result(peak: Int(median(peaks)), speeds: speeds, cliSpeeds: cliSpeeds)
        print("")
        print(
            "1 GiB download to a file in \(directory.path) (median of \(max(1, rounds)) rounds, range in brackets):")
        print(
            "  default transport (child process): \(StreamingBench.spread(speeds)) MiB/s, peak RSS "
                + "\(GentleBench.mebibytes(result.peak)) MiB   target < 64 MiB")
        print("  curl CLI to the same directory:    \(StreamingBench.spread(cliSpeeds)) MiB/s")
        print(
            "  default / curl CLI: \(GentleBench.ratio(median(speeds), median(cliSpeeds)))   target >= 0.95x"
                + " (per round: \(zip(speeds, cliSpeeds).map { GentleBench.ratio($0, $1) }.joined(separator: ", ")))")
        return result
    }

    /// The curl CLI writing `url` to `destination`: seconds, process start included (a few ms).
    static func curlCLI(_ url: URL, to destination: URL) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "curl", "--silent", "--show-error", "--fail", "--output", destination.path, url.absoluteString,
        ]
        let started = DispatchTime.now().uptimeNanoseconds
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("curl exited with \(process.terminationStatus)") }
        return Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    }
}
