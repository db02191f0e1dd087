import Foundation
import GentleNetworking
import GentleNetworkingTesting

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `swift run -c release gentle-bench [--seconds N] [--rounds N]`
///
/// Starts nginx on loopback and measures, in one run and side by side:
/// - `HTTPNetworkService.request` decoding a 25-byte JSON model, at 1 and 16 requests in
///   flight, over CurlTransport, over URLSessionTransport, and raw URLSession + JSONDecoder;
/// - the curl CLI (`-Z --parallel-max 16`) on the same URL, as the libcurl ceiling;
/// - the peak RSS of a 1 GiB download to a file (in a child process, so nothing else counts);
/// - the time the stack Reauth(Retry(ETag(canned))) adds per request over canned alone;
/// - the peak RSS of a 50 MB multipart upload through YNetwork, streamed vs built in memory;
/// - streaming: 1,000,000 Server-Sent Events and a 1 GiB body per transport (events/s, MiB/s,
///   peak RSS), beside the curl CLI transferring the same files (see `StreamingBench`).
/// Throughput figures are medians over interleaved rounds (3 by default, 2 s each).
/// It prints requests per second, the ratios, and each target as met or missed.
///
/// Two more modes, each one command (build first: `swift build -c release --product gentle-bench`):
///
/// `.build/release/gentle-bench --soak [--requests 100000] [--in-flight 64] [--duration 600]
/// [--seed N] [--sample-interval 10] [--warm-up 60]`: the soak. The requests are paced at
/// `requests / duration` per second (at most `in-flight` at once) through
/// `HTTPNetworkService` → `ReauthTransport(RetryTransport(ETagTransport(default transport)))`
/// against an nginx that injects faults (see `SoakBench.serverConfig`): ETag'd files (304s),
/// 401 unless the token rotated every 20 s is current, 503s with and without `Retry-After: 0`,
/// `return 444`, a slow location, a permanent 503 and a 404, picked by a seeded mix. It samples
/// VmRSS, open descriptors and threads every 10 s, prints the table, the outcome counts and the
/// latency percentiles, and exits 1 unless, after the warm-up, RSS ends ≤ start + 10% + 8 MiB,
/// descriptors end ≤ start + in-flight, and every request ended (success or typed error).
///
/// `.build/release/gentle-bench --scale [--in-flight 1000,10000]`: N requests started at once on
/// the default transport (10,000 by default; a comma list runs each level), in a fresh child
/// process per level, after raising `RLIMIT_NOFILE` to the hard limit; nginx gets
/// `worker_connections` and `worker_rlimit_nofile` to match. Prints completions and typed
/// errors, wall time, requests/s, and peak threads, descriptors and RSS; exits 1 when a request
/// is unaccounted for or the peak thread count grows with the level (more than +4).
/// `--max-connections-per-host N` runs the levels on `CurlTransport` with that
/// `maxConnectionsPerHost` instead of the default transport.
@main
struct GentleBench {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            if arguments.first == "--download-child", arguments.count == 3, let url = URL(string: arguments[1]) {
                try await downloadChild(url: url, destination: URL(fileURLWithPath: arguments[2]))
                return
            }
            if arguments.first == "--multipart-child", arguments.count == 4, let url = URL(string: arguments[1]) {
                try await MultipartUploadBench.child(
                    url: url, file: URL(fileURLWithPath: arguments[2]), inMemory: arguments[3] == "in-memory")
                return
            }
            if arguments.first == "--stream-child", arguments.count == 4, let url = URL(string: arguments[1]) {
                try await StreamingBench.child(url: url, transport: arguments[2], mode: arguments[3])
                return
            }
            if arguments.first == "--observation-only" {
                let nginx = try NginxServer(files: ["model.json": Data(#"{"id":1,"property":"abc"}"#.utf8)])
                defer { nginx.stop() }
                let rounds = try intOption("--rounds", in: arguments) ?? 3
                let seconds = try doubleOption("--seconds", in: arguments) ?? 2
                try await ObservationBench.measure(baseURL: nginx.baseURL, seconds: seconds, rounds: rounds)
                return
            }
            if arguments.first == "--http2-only" {
                let rounds = try intOption("--rounds", in: arguments) ?? 3
                let seconds = try doubleOption("--seconds", in: arguments) ?? 2
                let work = FileManager.default.temporaryDirectory.appendingPathComponent("gentle-bench-\(getpid())")
                try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: work) }
                _ = try await HTTP2Bench.measure(work: work, seconds: seconds, rounds: rounds)
                return
            }
            if arguments.first == "--transfers-only" {
                // The 1 GiB download and the streaming figures alone (for working on them).
                let nginx = try NginxServer(files: [:])
                defer { nginx.stop() }
                let rounds = try intOption("--rounds", in: arguments) ?? 3
                let work = FileManager.default.temporaryDirectory.appendingPathComponent("gentle-bench-\(getpid())")
                try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: work) }
                _ = try DownloadBench.measure(nginx: nginx, work: work, rounds: rounds)
                try StreamingBench.measure(nginx: nginx, rounds: rounds)
                return
            }
            if arguments.first == "--load-only", arguments.count >= 2, let seconds = Double(arguments[1]) {
                try await loadOnly(
                    seconds: seconds, concurrency: arguments.count > 2 ? Int(arguments[2]) ?? 16 : 16,
                    mode: arguments.count > 3 ? arguments[3] : "off")
                return
            }
            if arguments.first == "--scale-child", arguments.count >= 3, let url = URL(string: arguments[1]),
                let count = Int(arguments[2])
            {
                try await ScaleBench.child(
                    baseURL: url, count: count,
                    maxConnectionsPerHost: try intOption("--max-connections-per-host", in: arguments))
                return
            }
            if arguments.contains("--soak") {
                var options = SoakBench.Options()
                options.requests = try intOption("--requests", in: arguments) ?? options.requests
                options.inFlight = try intOption("--in-flight", in: arguments) ?? options.inFlight
                options.duration = try doubleOption("--duration", in: arguments) ?? options.duration
                options.seed =
                    try intOption("--seed", in: arguments).map { UInt64(truncatingIfNeeded: $0) } ?? options.seed
                options.sampleInterval = try doubleOption("--sample-interval", in: arguments) ?? options.sampleInterval
                options.warmUp = try doubleOption("--warm-up", in: arguments) ?? options.warmUp
                guard options.requests > 0, options.inFlight > 0, options.duration > 0, options.sampleInterval > 0
                else {
                    throw BenchError("--requests, --in-flight, --duration and --sample-interval must be positive")
                }
                exit(try await SoakBench.run(options) ? 0 : 1)
            }
            if arguments.contains("--scale") {
                var levels = [10_000]
                if let index = arguments.firstIndex(of: "--in-flight"), index + 1 < arguments.count {
                    levels = arguments[index + 1].split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
                    guard !levels.isEmpty else {
                        throw BenchError("--in-flight takes positive counts, such as 1000,10000")
                    }
                }
                let cap = try intOption("--max-connections-per-host", in: arguments)
                exit(try await ScaleBench.run(levels: levels, maxConnectionsPerHost: cap) ? 0 : 1)
            }
            // The full run takes `--seconds N` and `--rounds N` only: anything else (`--help`, a
            // misspelt mode) is refused instead of starting a run of several minutes.
            var index = 0
            while index < arguments.count {
                guard ["--seconds", "--rounds"].contains(arguments[index]) else {
                    throw BenchError(
                        "unknown argument \(arguments[index]): gentle-bench [--seconds N] [--rounds N], or one of the modes "
                            + "described at the top of Sources/gentle-bench/GentleBench.swift")
                }
                guard index + 1 < arguments.count else { throw BenchError("\(arguments[index]) takes a value") }
                index += 2
            }
            let seconds = try doubleOption("--seconds", in: arguments) ?? 2
            let rounds = try intOption("--rounds", in: arguments) ?? 3
            guard seconds.isFinite, seconds > 0, rounds > 0 else {
                throw BenchError("--seconds takes a positive finite number, --rounds a positive whole number")
            }
            try await run(seconds: seconds, rounds: rounds)
        } catch {
            FileHandle.standardError.write(Data("gentle-bench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run(seconds: Double, rounds: Int) async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("gentle-bench-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let model = Data(#"{"id":1,"property":"abc"}"#.utf8)
        let nginx = try NginxServer(files: ["model.json": model])
        defer { nginx.stop() }
        let url = nginx.url("/model.json")
        print(
            "gentle-bench: nginx on \(nginx.baseURL), \(model.count)-byte JSON, \(seconds) s per measurement, \(rounds) rounds"
        )
        print(
            "machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.operatingSystemVersionString)"
        )

        let environment = DefaultAPIEnvironment(baseURL: nginx.baseURL)
        let endpoint = Endpoint(path: "/model.json", method: .get)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 16
        configuration.urlCache = nil
        let session = URLSession(configuration: configuration)

        var transports: [(String, any HTTPTransportProtocol)] = []
        #if canImport(CCurl)
            transports.append(("CurlTransport", try CurlTransport()))
        #endif
        transports.append(("URLSessionTransport", URLSessionTransport(session: session)))

        // Every client is measured once per round, in turn, and each figure is the median of the
        // rounds: on a small shared machine one measurement can be off by 30%, and interleaving
        // keeps a slow spell from landing on one client only. Latencies are kept at 1 in flight,
        // for CurlTransport and the curl CLI.
        let cliName = "curl CLI (libcurl ceiling)"
        let stackName = "Reauth(Retry(ETag(Curl)))"
        let executorName = "CurlTransport, on its executor"
        var samples: [String: [Int: [ClientSample]]] = [:]
        for round in 1...rounds {
            for concurrency in [1, 16] {
                #if canImport(CCurl)
                    // The README's stack over the same transport: nginx's file has an ETag, so
                    // every request after the first is a 304 answered from the entry.
                    let stacked = HTTPNetworkService(
                        transport: fullStack(over: transports[0].1), authService: InMemoryAuthService())
                    samples[stackName, default: [:]][concurrency, default: []].append(
                        try await measureClient(concurrency: concurrency, seconds: seconds, latencies: false) {
                            let _: BenchModel = try await stacked.request(to: endpoint, via: environment)
                        })
                    // The same transport with each request's work on its loop thread (opt-in:
                    // `withTaskExecutorPreference(transport.executor)`).
                    if let curl = transports[0].1 as? CurlTransport {
                        let service = HTTPNetworkService(transport: curl, authService: InMemoryAuthService())
                        let executor = curl.executor
                        samples[executorName, default: [:]][concurrency, default: []].append(
                            try await measureClient(concurrency: concurrency, seconds: seconds, latencies: false) {
                                try await withTaskExecutorPreference(executor) {
                                    let _: BenchModel = try await service.request(to: endpoint, via: environment)
                                }
                            })
                    }
                #endif
                for (name, transport) in transports {
                    let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
                    samples[name, default: [:]][concurrency, default: []].append(
                        try await measureClient(
                            concurrency: concurrency, seconds: seconds,
                            latencies: concurrency == 1 && name == "CurlTransport"
                        ) {
                            let _: BenchModel = try await service.request(to: endpoint, via: environment)
                        })
                }
                samples["raw URLSession + JSONDecoder", default: [:]][concurrency, default: []].append(
                    try await measureClient(concurrency: concurrency, seconds: seconds, latencies: false) {
                        _ = try await rawURLSessionFetch(session, url)
                    })
                let expected = samples["CurlTransport"]?[concurrency]?.last?.rate ?? 5000
                let count = Int(max(concurrency == 1 ? 1000 : 2000, expected * seconds))
                samples[cliName, default: [:]][concurrency, default: []].append(
                    try curlCLI(
                        url: url, count: count, parallel: concurrency, workDirectory: work,
                        latencies: concurrency == 1))
            }
            FileHandle.standardError.write(Data("gentle-bench: round \(round) of \(rounds) done\n".utf8))
        }
        let results = samples.mapValues { $0.mapValues { median($0.map(\.rate)) } }
        let cpu = samples.mapValues { $0.mapValues { median($0.map(\.cpuMicroseconds)) } }

        print("")
        print(
            "Throughput, HTTPNetworkService.request decoding the model (requests/s, median of \(rounds) rounds), "
                + "and the client's CPU time per request (user + system, µs):")
        print(pad("client", 32) + pad("1 in flight", 14) + pad("16 in flight", 14) + "CPU µs/request (1 / 16)")
        for name in [
            "CurlTransport", executorName, stackName, "URLSessionTransport", "raw URLSession + JSONDecoder", cliName,
        ] {
            guard let row = results[name] else { continue }
            print(
                pad(name, 32) + pad(format(row[1]), 14) + pad(format(row[16]), 14)
                    + "\(oneDecimal(cpu[name]?[1])) / \(oneDecimal(cpu[name]?[16]))")
        }
        print("  (the curl CLI neither builds requests nor decodes JSON; its CPU is the child process's)")

        let defaultName = DefaultTransport.make() is URLSessionTransport ? "URLSessionTransport" : "CurlTransport"
        let raw16 = results["raw URLSession + JSONDecoder"]?[16] ?? .nan
        let default16 = results[defaultName]?[16] ?? .nan
        let cli16 = results[cliName]?[16] ?? .nan
        let raw1 = results["raw URLSession + JSONDecoder"]?[1] ?? .nan
        let default1 = results[defaultName]?[1] ?? .nan
        let cli1 = results[cliName]?[1] ?? .nan
        print("")
        print("Ratios (default transport on this platform: \(defaultName)):")
        print("  default / raw URLSession, 1 in flight:   \(ratio(default1, raw1))")
        print("  default / raw URLSession, 16 in flight:  \(ratio(default16, raw16))   target >= 5x")
        print("  default / curl CLI, 1 in flight:         \(ratio(default1, cli1))   target >= 0.85x")
        print("    (per round: \(roundRatios(samples[defaultName]?[1], samples[cliName]?[1])))")
        print("  default / curl CLI, 16 in flight:        \(ratio(default16, cli16))   target >= 1.05x (and >= 0.8x)")
        print("    (per round: \(roundRatios(samples[defaultName]?[16], samples[cliName]?[16])))")

        let stack1 = results[stackName]?[1] ?? .nan
        let stack16 = results[stackName]?[16] ?? .nan
        let curl1 = results["CurlTransport"]?[1] ?? .nan
        let curl16 = results["CurlTransport"]?[16] ?? .nan
        print("  stack / CurlTransport, 1 in flight:      \(ratio(stack1, curl1))   target >= 0.95x")
        print("  stack / CurlTransport, 16 in flight:     \(ratio(stack16, curl16))   target >= 0.95x")
        if let onLoop = results[executorName] {
            print(
                "  on its executor / CurlTransport:         \(ratio(onLoop[1] ?? .nan, curl1)) (1), "
                    + "\(ratio(onLoop[16] ?? .nan, curl16)) (16); CPU per request "
                    + "\(oneDecimal(cpu[executorName]?[1])) / \(oneDecimal(cpu[executorName]?[16])) µs against "
                    + "\(oneDecimal(cpu["CurlTransport"]?[1])) / \(oneDecimal(cpu["CurlTransport"]?[16]))")
            print(
                "    (per round at 16: \(roundRatios(samples[executorName]?[16], samples["CurlTransport"]?[16])))")
        }

        // Latency at 1 in flight: every request of every round, pooled.
        let ourLatencies = (samples["CurlTransport"]?[1] ?? []).flatMap(\.latencies)
        let cliLatencies = (samples[cliName]?[1] ?? []).flatMap(\.latencies)
        print("")
        print("Latency at 1 in flight, µs (every request of the \(rounds) rounds):")
        print(pad("client", 32) + pad("p50", 10) + pad("p99", 10) + "requests")
        for (name, values) in [
            ("CurlTransport (request + decode)", ourLatencies), ("curl CLI (time_total)", cliLatencies),
        ] {
            print(
                pad(name, 32) + pad(oneDecimal(percentile(values, 0.5)), 10)
                    + pad(oneDecimal(percentile(values, 0.99)), 10)
                    + "\(values.count)")
        }
        let defaultCPU16 = cpu[defaultName]?[16] ?? .nan

        let http2 = try await HTTP2Bench.measure(work: work, seconds: seconds, rounds: rounds)

        let download = try DownloadBench.measure(nginx: nginx, work: work, rounds: rounds)
        let peak = download.peak

        let (streamed, inMemory) = try MultipartUploadBench.measure(workDirectory: work)
        print("")
        print(
            "50 MB multipart upload (YNetwork NetworkManager, child process): peak RSS \(mebibytes(streamed.0)) MiB "
                + String(format: "(%.2f s)", streamed.1) + " streamed from a temporary file vs "
                + "\(mebibytes(inMemory.0)) MiB " + String(format: "(%.2f s)", inMemory.1)
                + " with the body built in memory: \(ratio(Double(streamed.0), Double(inMemory.0)))   target < 64 MiB")

        try StreamingBench.measure(nginx: nginx, rounds: rounds)

        try await ObservationBench.measure(baseURL: nginx.baseURL, seconds: seconds, rounds: rounds)

        // The decorator stack's own cost, over a canned transport so no I/O is measured.
        let canned = CannedResponseTransport(string: #"{"id":1,"property":"abc"}"#)
        let stack = ReauthTransport(
            inner: RetryTransport(inner: ETagTransport(inner: canned)), authService: InMemoryAuthService(token: "t"),
            refreshToken: {})
        var request = URLRequest(url: url)
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        let fixedRequest = request
        let iterations = 200_000
        let cannedOnly = try await nanosecondsPerCall(iterations: iterations) {
            _ = try await canned.data(for: fixedRequest)
        }
        let stacked = try await nanosecondsPerCall(iterations: iterations) {
            _ = try await stack.data(for: fixedRequest)
        }
        print("")
        print(
            String(
                format:
                    "Stack Reauth(Retry(ETag(canned))): %.2f µs per request vs canned %.2f µs: adds %.2f µs   target < 10 µs",
                stacked / 1000, cannedOnly / 1000, (stacked - cannedOnly) / 1000))

        print("")
        print("Targets:")
        report("default transport >= 5x raw URLSession at 16 in flight", default16 / raw16 >= 5)
        report("default transport >= 0.8x the curl CLI at 16 in flight", default16 / cli16 >= 0.8)
        report("default transport >= 1.05x the curl CLI at 16 in flight", default16 / cli16 >= 1.05)
        report("default transport <= 40 µs of CPU per request at 16 in flight", defaultCPU16 <= 40)
        report("default transport >= 0.85x the curl CLI at 1 in flight", default1 / cli1 >= 0.85)
        report(
            "HTTP/2 over TLS, 64 in flight on one connection: >= 1.0x the curl CLI",
            median(http2.rates) / median(http2.cliRates) >= 1.0)
        report("1 GiB download peak RSS < 64 MiB", peak > 0 && peak < 64 << 20)
        report(
            "1 GiB download >= 0.95x the curl CLI's MiB/s",
            median(download.speeds) / median(download.cliSpeeds) >= 0.95)
        report("stack adds < 10 µs per request", (stacked - cannedOnly) / 1000 < 10)
        if stack16.isFinite {
            report(
                "Reauth(Retry(ETag(CurlTransport))) within 5% of CurlTransport at 1 and 16 in flight",
                stack1 / curl1 >= 0.95 && stack16 / curl16 >= 0.95)
        }
        report("50 MB multipart upload peak RSS < 64 MiB", streamed.0 > 0 && streamed.0 < 64 << 20)
    }

    /// `--load-only SECONDS [IN_FLIGHT [off|response|metrics|logger|stack|etag|retry|reauth|executor]]`:
    /// only the default transport (16 in flight by default), for profilers; the mode picks the call
    /// (`request`, and by default no logger; `stack`: `request` through
    /// `Reauth(Retry(ETag(default)))`; `etag`, `retry`, `reauth`: through that decorator alone;
    /// `executor`: `request` under `withTaskExecutorPreference(CurlTransport.executor)`).
    static func loadOnly(seconds: Double, concurrency: Int, mode: String) async throws {
        let nginx = try NginxServer(files: ["model.json": Data(#"{"id":1,"property":"abc"}"#.utf8)])
        defer { nginx.stop() }
        let logger: any NetworkLogger =
            mode == "logger" ? ClosureNetworkLogger { record in _ = record.metrics } : NoOpNetworkLogger()
        let service: HTTPNetworkService
        if let decorated = decorated(mode: mode, over: DefaultTransport.make()) {
            service = HTTPNetworkService(transport: decorated, authService: InMemoryAuthService())
        } else {
            // The bare transport, as in every earlier measurement (`HTTPNetworkService()`'s
            // default retries over it).
            service = HTTPNetworkService(
                transport: DefaultTransport.make(), authService: InMemoryAuthService(), logger: logger)
        }
        let environment = DefaultAPIEnvironment(baseURL: nginx.baseURL)
        let endpoint = Endpoint(path: "/model.json", method: .get)
        // `executor`: `request` with the work on the transport's loop thread.
        let executor: (any TaskExecutor)? = mode == "executor" ? (service.transport as? CurlTransport)?.executor : nil
        if mode == "executor", executor == nil { throw BenchError("the executor mode needs CurlTransport") }
        let rate = try await throughput(concurrency: concurrency, seconds: seconds) {
            if let executor {
                try await withTaskExecutorPreference(executor) {
                    let _: BenchModel = try await service.request(to: endpoint, via: environment)
                }
                return
            }
            switch mode {
            case "response":
                let _: (BenchModel, HTTPURLResponse) = try await service.requestWithResponse(
                    to: endpoint, via: environment)
            case "metrics":
                let _: (BenchModel, HTTPURLResponse, RequestMetrics) = try await service.requestWithMetrics(
                    to: endpoint, via: environment)
            default:
                let _: BenchModel = try await service.request(to: endpoint, via: environment)
            }
        }
        print(String(format: "default transport, %d in flight: %.0f requests/s", concurrency, rate))
    }

    /// The stack the README recommends, `Reauth(Retry(ETag(transport)))`, with a static token.
    static func fullStack(over transport: any HTTPTransportProtocol) -> any HTTPTransportProtocol {
        ReauthTransport(
            inner: RetryTransport(inner: ETagTransport(inner: transport)), authService: InMemoryAuthService(token: "t"),
            refreshToken: {})
    }

    /// The transport a `--load-only` mode runs through when it is a decorator's: `stack` (the
    /// README's), or one decorator alone (`etag`, `retry`, `reauth`), to tell their costs apart.
    /// `transport` is made only for those modes (another mode runs no idle transport beside its own).
    static func decorated(
        mode: String, over transport: @autoclosure () -> any HTTPTransportProtocol
    ) -> (any HTTPTransportProtocol)? {
        switch mode {
        case "stack": fullStack(over: transport())
        case "etag": ETagTransport(inner: transport())
        case "retry": RetryTransport(inner: transport())
        case "reauth":
            ReauthTransport(inner: transport(), authService: InMemoryAuthService(token: "t"), refreshToken: {})
        default: nil
        }
    }

    /// Runs this executable as `--download-child` and reads the peak RSS it reports.
    static func measureDownloadChild(url: URL, destination: URL) throws -> (Int, Double) {
        try runChild(["--download-child", url.absoluteString, destination.path])
    }

    /// The child: download with the platform's default transport, print "<peak bytes> <seconds>".
    static func downloadChild(url: URL, destination: URL) async throws {
        let started = DispatchTime.now().uptimeNanoseconds
        #if canImport(CCurl)
            guard let transport = CurlTransport.shared else { throw BenchError("libcurl is unavailable") }
            let response = try await transport.download(for: URLRequest(url: url), to: destination)
        #else
            let (data, response) = try await URLSessionTransport().data(for: URLRequest(url: url))
            try data.write(to: destination)
        #endif
        guard response.statusCode == 200 else { throw BenchError("status \(response.statusCode)") }
        let size =
            (try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber)?.intValue ?? 0
        guard size == 1 << 30 else { throw BenchError("downloaded \(size) bytes") }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        print("\(peakResidentBytes()) \(seconds)")
    }

    /// The integer after `name`, if `name` is given; throws when it is not a number.
    static func intOption(_ name: String, in arguments: [String]) throws -> Int? {
        guard let index = arguments.firstIndex(of: name) else { return nil }
        guard index + 1 < arguments.count, let value = Int(arguments[index + 1]) else {
            throw BenchError("\(name) takes a whole number")
        }
        return value
    }

    /// The number after `name`, if `name` is given; throws when it is not a number.
    static func doubleOption(_ name: String, in arguments: [String]) throws -> Double? {
        guard let index = arguments.firstIndex(of: name) else { return nil }
        guard index + 1 < arguments.count, let value = Double(arguments[index + 1]) else {
            throw BenchError("\(name) takes a number")
        }
        return value
    }

    static func report(_ target: String, _ met: Bool) {
        print("  [\(met ? "met" : "MISSED")] \(target)")
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    static func format(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "-" }
        return String(format: "%.0f", value)
    }

    static func ratio(_ numerator: Double, _ denominator: Double) -> String {
        guard numerator.isFinite, denominator.isFinite, denominator > 0 else { return "-" }
        return String(format: "%.2fx", numerator / denominator)
    }

    static func oneDecimal(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "-" }
        return String(format: "%.1f", value)
    }

    /// Each round's ratio of the first client's rate to the second's.
    static func roundRatios(_ first: [ClientSample]?, _ second: [ClientSample]?) -> String {
        zip(first ?? [], second ?? []).map { ratio($0.rate, $1.rate) }.joined(separator: ", ")
    }

    static func mebibytes(_ bytes: Int) -> String {
        String(format: "%.1f", Double(bytes) / 1_048_576)
    }
}
