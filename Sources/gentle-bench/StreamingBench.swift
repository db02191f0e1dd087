import Foundation
import GentleNetworking
import GentleNetworkingTesting

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Streaming figures, each transport in a child process of its own (so its peak RSS counts
/// that stream only), beside the curl CLI fetching the same file (the transfer alone, nothing
/// parsed: the ceiling). Rounds are interleaved; medians and ranges are printed.
/// - Server-Sent Events: 1,000,000 small events (`id: N`, `data: tick N`) parsed by
///   `HTTPNetworkService.serverSentEvents`: events per second and peak RSS.
/// - A 1 GiB body read through `stream(for:)` and counted: MiB/s and peak RSS (constant memory).
enum StreamingBench {
    static let eventCount = 1_000_000
    static let bigSize = 1 << 30

    enum Transport: String, CaseIterable {
        case curl = "CurlTransport"
        case urlSession = "URLSessionTransport"

        func make() throws -> any HTTPTransportProtocol {
            switch self {
            case .urlSession:
                return URLSessionTransport(session: URLSession(configuration: .ephemeral))
            case .curl:
                #if canImport(CCurl)
                    return try CurlTransport()
                #else
                    throw BenchError("CurlTransport is Linux-only")
                #endif
            }
        }
    }

    /// `--stream-child URL curl|urlSession events|bytes`: streams URL and prints
    /// `<peak RSS bytes> <seconds>`; fails unless every event (or byte) arrived.
    static func child(url: URL, transport name: String, mode: String) async throws {
        guard let kind = Transport.allCases.first(where: { "\($0)" == name }) else {
            throw BenchError("unknown transport \(name)")
        }
        let transport = try kind.make()
        let started = DispatchTime.now().uptimeNanoseconds
        if mode == "events" {
            let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
            let environment = DefaultAPIEnvironment(baseURL: url.deletingLastPathComponent())
            var count = 0
            for try await _ in try await service.serverSentEvents(
                to: Endpoint(path: "/" + url.lastPathComponent, method: .get), via: environment)
            {
                count += 1
            }
            guard count == eventCount else { throw BenchError("\(count) events arrived") }
        } else {
            let (stream, response) = try await transport.stream(for: URLRequest(url: url))
            guard response.statusCode == 200 else { throw BenchError("status \(response.statusCode)") }
            var bytes = 0
            for try await chunk in stream { bytes += chunk.count }
            guard bytes == bigSize else { throw BenchError("\(bytes) bytes arrived") }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        print("\(peakResidentBytes()) \(seconds)")
    }

    /// The curl CLI fetching `url` to /dev/null: seconds.
    static func curlCLI(_ url: URL) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["curl", "--silent", "--show-error", "--fail", "--output", "/dev/null", url.absoluteString]
        let started = DispatchTime.now().uptimeNanoseconds
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("curl exited with \(process.terminationStatus)") }
        return Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    }

    /// Writes the event stream and the 1 GiB file into nginx's document root, measures `rounds`
    /// interleaved rounds, prints the table, and removes the files.
    static func measure(nginx: NginxServer, rounds: Int) throws {
        let root = nginx.documentRoot
        let events = root.appendingPathComponent("events.txt")
        var text = ""
        text.reserveCapacity(eventCount * 26)
        for index in 1...eventCount { text += "id: \(index)\ndata: tick \(index)\n\n" }
        try Data(text.utf8).write(to: events)
        let big = root.appendingPathComponent("stream-1GiB.bin")
        guard FileManager.default.createFile(atPath: big.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: big)
        else { throw BenchError("cannot create the 1 GiB file") }
        try handle.truncate(atOffset: UInt64(bigSize))
        try handle.close()
        defer {
            try? FileManager.default.removeItem(at: events)
            try? FileManager.default.removeItem(at: big)
        }
        try warmPageCache(of: big)
        try warmPageCache(of: events)

        var eventSeconds: [String: [Double]] = [:]
        var eventPeaks: [String: [Int]] = [:]
        var bigSeconds: [String: [Double]] = [:]
        var bigPeaks: [String: [Int]] = [:]
        var failures: [String: String] = [:]
        let cli = "curl CLI (transfer only)"
        /// Runs one child; a failure (a typed error the child printed) is recorded, not thrown.
        func measureChild(_ path: String, _ transport: Transport, _ mode: String) -> (Int, Double)? {
            do {
                return try runChild(["--stream-child", nginx.url(path).absoluteString, "\(transport)", mode])
            } catch {
                failures["\(transport.rawValue) \(mode)"] = "\(error)"
                return nil
            }
        }
        for _ in 0..<max(1, rounds) {
            for transport in Transport.allCases {
                if let (peak, seconds) = measureChild("/events.txt", transport, "events") {
                    eventSeconds[transport.rawValue, default: []].append(seconds)
                    eventPeaks[transport.rawValue, default: []].append(peak)
                }
                if let (peak, seconds) = measureChild("/stream-1GiB.bin", transport, "bytes") {
                    bigSeconds[transport.rawValue, default: []].append(seconds)
                    bigPeaks[transport.rawValue, default: []].append(peak)
                }
            }
            eventSeconds[cli, default: []].append(try curlCLI(nginx.url("/events.txt")))
            bigSeconds[cli, default: []].append(try curlCLI(nginx.url("/stream-1GiB.bin")))
        }

        let eventBytes = text.utf8.count
        print("")
        print(
            "Streaming (child process per transport, median of \(max(1, rounds)) rounds, range in brackets):")
        print(
            "  \(GentleBench.pad("", 26)) \(GentleBench.pad("1M SSE events/s", 30)) peak RSS   "
                + "1 GiB stream MiB/s           peak RSS")
        for name in Transport.allCases.map(\.rawValue) + [cli] {
            let rates = (eventSeconds[name] ?? []).map { Double(eventCount) / $0 }
            let speeds = (bigSeconds[name] ?? []).map { Double(bigSize) / 1_048_576 / $0 }
            let eventPeak =
                eventPeaks[name].map { "\(GentleBench.mebibytes(Int(median($0.map(Double.init))))) MiB" } ?? "-"
            let bigPeak = bigPeaks[name].map { "\(GentleBench.mebibytes(Int(median($0.map(Double.init))))) MiB" } ?? "-"
            print(
                "  \(GentleBench.pad(name, 26)) \(GentleBench.pad(spread(rates), 30)) \(GentleBench.pad(eventPeak, 10)) "
                    + "\(GentleBench.pad(spread(speeds), 28)) \(bigPeak)")
        }
        print("  (events file \(eventBytes / 1_048_576) MiB; the curl CLI only transfers it: no parsing, the ceiling)")
        for (what, failure) in failures.sorted(by: { $0.key < $1.key }) {
            print("  \(what) failed (at least once): \(failure.prefix(240))")
        }
    }

    /// "median [min–max]".
    static func spread(_ values: [Double]) -> String {
        guard let low = values.min(), let high = values.max() else { return "-" }
        return String(format: "%.0f [%.0f–%.0f]", median(values), low, high)
    }
}
