import Foundation
import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `gentle-bench --scale`: N requests started at once on the default transport against nginx,
/// each level in a fresh child process (so its thread, descriptor and RSS peaks are its own).
enum ScaleBench {
    /// What one child reports, as one JSON line.
    struct Result: Codable {
        var inFlight: Int
        var completed: Int
        var succeeded: Int
        var outcomes: [String: Int]
        var wallSeconds: Double
        var peakInFlight: Int
        var threadsBefore: Int
        var peakThreads: Int
        var descriptorsBefore: Int
        var peakDescriptors: Int
        var residentBefore: Int
        var peakResident: Int
        var descriptorLimit: Int
    }

    /// The parent: starts nginx sized for the largest level, runs each level in a child, prints
    /// the table. Returns whether every level accounted for every request with a bounded thread count.
    static func run(levels: [Int], maxConnectionsPerHost: Int?) async throws -> Bool {
        let (soft, hard) = raiseDescriptorLimit()
        let largest = levels.max() ?? 0
        // nginx inherits the raised limit; one connection per client plus its listener and logs.
        let connections = max(1024, min(hard - 64, largest + 1024))
        let nginx = try BenchNginx(
            files: ["model.json": Data(#"{"id":1,"property":"abc"}"#.utf8)], workerConnections: connections,
            rlimitNoFile: hard, accessLog: false)
        defer { nginx.stop() }
        print(
            "gentle-bench --scale: nginx on \(nginx.baseURL) (worker_connections \(connections), worker_rlimit_nofile \(hard), listen backlog 4096)"
        )
        print("  RLIMIT_NOFILE raised to \(soft) (hard \(hard))")
        if let maxConnectionsPerHost {
            print(
                "  transport: CurlTransport(configuration: .init(maxConnectionsPerHost: \(maxConnectionsPerHost))): "
                    + "CURLMOPT_MAX_HOST_CONNECTIONS, libcurl queues the transfers beyond it")
        } else {
            print(
                "  transport: the default (CurlTransport.shared): CURLMOPT_MAX_HOST_CONNECTIONS and "
                    + "MAX_TOTAL_CONNECTIONS unset; at most 1,024 transfers run at once, the rest wait in order")
        }
        print(
            "  each level: N HTTPNetworkService.request calls decoding the 25-byte model, all started at once, in a fresh child process"
        )
        var results: [Result] = []
        for level in levels {
            let output = try runChildProcess(
                ["--scale-child", nginx.baseURL.absoluteString, String(level)]
                    + (maxConnectionsPerHost.map { ["--max-connections-per-host", String($0)] } ?? []))
            guard let line = output.split(separator: "\n").last,
                let result = try? JSONDecoder().decode(Result.self, from: Data(line.utf8))
            else {
                throw BenchError("the --scale-child \(level) run failed: \(output)")
            }
            results.append(result)
            FileHandle.standardError.write(Data("  level \(level) done\n".utf8))
        }
        let alerts = nginx.errorLog.split(separator: "\n").filter { $0.contains("[alert]") || $0.contains("[crit]") }
        print("")
        print(
            GentleBench.pad("in flight", 11) + GentleBench.pad("peak", 7) + GentleBench.pad("ok", 8)
                + GentleBench.pad("failed", 8) + GentleBench.pad("wall (s)", 10) + GentleBench.pad("req/s", 9)
                + GentleBench.pad("threads", 14) + GentleBench.pad("descriptors", 17) + "RSS (MiB)")
        for result in results {
            print(
                GentleBench.pad("\(result.inFlight)", 11) + GentleBench.pad("\(result.peakInFlight)", 7)
                    + GentleBench.pad("\(result.succeeded)", 8)
                    + GentleBench.pad("\(result.completed - result.succeeded)", 8)
                    + GentleBench.pad(String(format: "%.2f", result.wallSeconds), 10)
                    + GentleBench.pad(String(format: "%.0f", Double(result.completed) / result.wallSeconds), 9)
                    + GentleBench.pad("\(result.threadsBefore) → \(result.peakThreads)", 14)
                    + GentleBench.pad("\(result.descriptorsBefore) → \(result.peakDescriptors)", 17)
                    + "\(GentleBench.mebibytes(result.residentBefore)) → \(GentleBench.mebibytes(result.peakResident))")
        }
        print("  (threads, descriptors, RSS: before the burst → peak during it; RSS peak is VmHWM)")
        for result in results where result.completed != result.succeeded {
            print(
                "  \(result.inFlight): "
                    + result.outcomes.sorted { $0.value > $1.value }.map { "\($0.value) \($0.key)" }.joined(
                        separator: ", "))
        }
        if !alerts.isEmpty { print("  nginx error log alerts: \(alerts.prefix(3).joined(separator: " | "))") }
        print("")
        print("Targets:")
        var met = true
        for result in results {
            let accounted = result.completed == result.inFlight
            GentleBench.report("\(result.inFlight): every request completed or failed with a typed error", accounted)
            met = met && accounted
        }
        if let small = results.first, let big = results.last, results.count > 1 {
            // Bounded: the transport adds one thread; libcurl and the cooperative pool none per request.
            let bounded = big.peakThreads <= small.peakThreads + 4
            GentleBench.report(
                "thread count independent of in-flight: \(small.peakThreads) at \(small.inFlight), "
                    + "\(big.peakThreads) at \(big.inFlight) (≤ +4)", bounded)
            met = met && bounded
        }
        return met
    }

    /// The child: `--scale-child BASE_URL N`.
    static func child(baseURL: URL, count: Int, maxConnectionsPerHost: Int?) async throws {
        let (soft, _) = raiseDescriptorLimit()
        var transport = DefaultTransport.make()
        #if canImport(CCurl)
            if let maxConnectionsPerHost {
                transport = try CurlTransport(
                    configuration: CurlTransport.Configuration(maxConnectionsPerHost: maxConnectionsPerHost))
            }
        #endif
        let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
        let environment = DefaultAPIEnvironment(baseURL: baseURL)
        let endpoint = Endpoint(path: "/model.json", method: .get)
        // One request first, so the transport (and its loop thread) exists before the baseline.
        let _: BenchModel = try await service.request(to: endpoint, via: environment)
        let start = DispatchTime.now().uptimeNanoseconds
        // 0.1 s: reading /proc/self/fd costs a lookup per descriptor, and there are thousands.
        let sampler = ProcessSampler(interval: 0.1, start: start)
        let before = ProcessSample.now(since: start)  // after the sampler's thread started
        let inFlight = Locked((now: 0, peak: 0))
        let outcomes = await withTaskGroup(of: String.self) { group -> [String: Int] in
            for _ in 0..<count {
                group.addTask {
                    inFlight.withLock {
                        $0.now += 1
                        $0.peak = max($0.peak, $0.now)
                    }
                    defer { inFlight.withLock { $0.now -= 1 } }
                    do {
                        let _: BenchModel = try await service.request(to: endpoint, via: environment)
                        return "200"
                    } catch {
                        return SoakBench.label(error)
                    }
                }
            }
            var counts: [String: Int] = [:]
            for await outcome in group { counts[outcome, default: 0] += 1 }
            return counts
        }
        let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let samples = sampler.finish()
        let result = Result(
            inFlight: count, completed: outcomes.values.reduce(0, +), succeeded: outcomes["200"] ?? 0,
            outcomes: outcomes, wallSeconds: wall, peakInFlight: inFlight.current.peak, threadsBefore: before.threads,
            peakThreads: samples.map(\.threads).max() ?? -1, descriptorsBefore: before.descriptors,
            peakDescriptors: samples.map(\.descriptors).max() ?? -1, residentBefore: before.residentBytes,
            peakResident: ProcessSample.statusField("VmHWM:"), descriptorLimit: soft)
        print(String(decoding: try JSONEncoder().encode(result), as: UTF8.self))
    }

    /// Runs this executable with `arguments` and returns its standard output.
    static func runChildProcess(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        if !FileManager.default.isExecutableFile(atPath: process.executableURL?.path ?? "") {
            process.executableURL = Bundle.main.executableURL
        }
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        while process.isRunning { Thread.sleep(forTimeInterval: 0.01) }
        guard process.terminationStatus == 0 else {
            throw BenchError("\(arguments.joined(separator: " ")) exited with \(process.terminationStatus): \(text)")
        }
        return text
    }
}
