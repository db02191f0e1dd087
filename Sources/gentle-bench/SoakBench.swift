import Foundation
import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `gentle-bench --soak`: a long, paced run through the full decorator stack against an nginx
/// that injects faults, watching the process's memory, descriptors and threads.
///
/// The stack is `ReauthTransport(RetryTransport(ETagTransport(SoakProbe(default transport))))`
/// behind `HTTPNetworkService.requestData`; `SoakProbe` only records what each network attempt
/// returned (so a 200 served from a 304 can be told from a fresh 200) and passes it through.
enum SoakBench {
    struct Options {
        var requests = 100_000
        var inFlight = 64
        var duration = 600.0
        var seed: UInt64 = 20_261_201
        var sampleInterval = 10.0
        var warmUp = 60.0
    }

    /// One kind of request in the mix: a weight (percent), the paths it picks from, whether it
    /// carries the token, and what nginx does with it.
    struct Route: Sendable {
        let name: String
        let weight: Int
        let directory: String
        let files: Int
        let requiresAuth: Bool
        let fault: String
    }

    static let routes: [Route] = [
        Route(
            name: "static", weight: 45, directory: "static", files: 32, requiresAuth: false,
            fault: "ETag'd files: 200, then 304 revalidations served from the cache"),
        Route(
            name: "auth", weight: 20, directory: "auth", files: 16, requiresAuth: true,
            fault: "401 unless Authorization carries the current token (rotated every 20 s), else as static"),
        Route(
            name: "flaky-503", weight: 10, directory: "flaky", files: 8, requiresAuth: false,
            fault: "30% of requests: 503 without Retry-After (backoff)"),
        Route(
            name: "flaky-503-ra0", weight: 10, directory: "flaky-ra", files: 8, requiresAuth: false,
            fault: "30% of requests: 503 with Retry-After: 0"),
        Route(
            name: "drop", weight: 8, directory: "drop", files: 8, requiresAuth: false,
            fault: "30% of requests: return 444 (connection closed, no response)"),
        Route(
            name: "slow", weight: 3, directory: "slow", files: 1, requiresAuth: false,
            fault: "40 KiB at limit_rate 16k: about 2 s"),
        Route(
            name: "down", weight: 2, directory: "down", files: 1, requiresAuth: false,
            fault: "always 503 with Retry-After: 0: retries run out, a typed error"),
        Route(
            name: "missing", weight: 2, directory: "missing", files: 1, requiresAuth: false,
            fault: "404: a typed error, not retried"),
    ]

    /// The nginx configuration at the `http` level: the rotating token and the fault dice.
    static let httpConfig = #"""
            # The current token: "w" + floor(epoch / 20) in base 10 with a letter for the last
            # 20-second step ($msec is "1764590000.123"), so it rotates every 20 s.
            map $msec $token_window {
                "~^(?<h>\d+)[01]\d\." "w${h}a";
                "~^(?<h>\d+)[23]\d\." "w${h}b";
                "~^(?<h>\d+)[45]\d\." "w${h}c";
                "~^(?<h>\d+)[67]\d\." "w${h}d";
                "~^(?<h>\d+)[89]\d\." "w${h}e";
            }
            map "$http_authorization|$token_window" $token_ok {
                "~^Bearer (w\d+[a-e])\|\1$" 1;
                default 0;
            }
            # A fair die per request ($request_id is 32 random hex digits).
            split_clients "${request_id}" $fault {
                30% fail;
                * ok;
            }
        """#

    /// The nginx locations.
    static let serverConfig = #"""
                location = /token { default_type text/plain; return 200 "$token_window"; }
                location /static/ { }
                location /auth/ { if ($token_ok = 0) { return 401; } }
                location /flaky/ { if ($fault = fail) { return 503; } }
                location /flaky-ra/ { if ($fault = fail) { add_header Retry-After 0 always; return 503; } }
                location /drop/ { if ($fault = fail) { return 444; } }
                location /slow/ { limit_rate 16k; }
                location /down/ { add_header Retry-After 0 always; return 503; }
                location /missing/ { }
        """#

    /// The document root: JSON files of assorted sizes (25 B to 4 KiB), and 40 KiB for /slow.
    static func files() -> [String: Data] {
        var files: [String: Data] = [:]
        for route in routes where route.directory != "missing" {
            for index in 0..<route.files {
                let size = route.directory == "slow" ? 40 * 1024 : 25 << (index % 8)
                let padding = String(repeating: "x", count: max(0, size - 24))
                files["\(route.directory)/item-\(index).json"] = Data(#"{"id":\#(index),"pad":"\#(padding)"}"#.utf8)
            }
        }
        return files
    }

    /// Request `index`'s route and path, from the seed alone (not from scheduling), so a seed
    /// always gives the same sequence.
    static func pick(_ index: Int, seed: UInt64) -> (route: Int, path: String) {
        var state = seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15
        let first = splitMix64(&state)
        let second = splitMix64(&state)
        var roll = Int(first % 100)
        var chosen = 0
        for (offset, route) in routes.enumerated() {
            if roll < route.weight {
                chosen = offset
                break
            }
            roll -= route.weight
        }
        let route = routes[chosen]
        return (chosen, "/\(route.directory)/item-\(Int(second % UInt64(route.files))).json")
    }

    static func splitMix64(_ state: inout UInt64) -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    static func run(_ options: Options) async throws -> Bool {
        let nginx = try BenchNginx(
            files: files(), workerConnections: 4096, httpConfig: httpConfig, serverConfig: serverConfig)
        defer { nginx.stop() }
        let base = DefaultTransport.make()
        let auth = InMemoryAuthService()
        let tokenURL = nginx.url("/token")
        // The refresh: ask the server for the current token (over the plain transport, outside
        // the stack and the probe) and save it.
        let refresh: @Sendable () async throws -> Void = {
            let (data, response) = try await base.data(for: URLRequest(url: tokenURL))
            guard response.statusCode == 200 else { throw BenchError("/token answered \(response.statusCode)") }
            try await auth.saveAccessToken(String(decoding: data, as: UTF8.self))
        }
        try await refresh()
        let counters = SoakCounters(routes: routes.count)
        let reauth = ReauthTransport(
            inner: RetryTransport(
                inner: ETagTransport(inner: SoakProbe(inner: base)),
                onRetry: { _ in SoakRecord.current?.retries.withLock { $0 += 1 } }),
            authService: auth, policy: ReauthPolicy(maxRefreshes: 6, window: 60), refreshToken: refresh)
        let service = HTTPNetworkService(transport: reauth, authService: auth)
        let environment = DefaultAPIEnvironment(baseURL: nginx.baseURL)

        let rate = Double(options.requests) / options.duration
        print("gentle-bench --soak: nginx on \(nginx.baseURL)")
        print(
            "  \(options.requests) requests, at most \(options.inFlight) in flight, paced at "
                + String(format: "%.1f requests/s (%.0f s target)", rate, options.duration)
                + ", seed \(options.seed), samples every \(Int(options.sampleInterval)) s, warm-up \(Int(options.warmUp)) s"
        )
        print("  stack: HTTPNetworkService → ReauthTransport(RetryTransport(ETagTransport(probe(default transport))))")
        print(
            "  policies: RetryPolicy() (3 retries, 0.5 s base, full jitter); ReauthPolicy(maxRefreshes: 6, window: 60)")
        print("  mix (weight %, route, what nginx does):")
        for route in routes {
            print("    \(pad("\(route.weight)%", 5))\(pad(route.name, 15))/\(route.directory)/…  \(route.fault)")
        }
        print("  nginx locations:")
        for line in serverConfig.split(separator: "\n") { print("    " + line.trimmingCharacters(in: .whitespaces)) }
        FileHandle.standardError.write(Data("  (live samples on stderr)\n".utf8))

        // Preallocated and touched now, so the bench's own bookkeeping does not grow during the run.
        let latencies = LatencyBuffer(count: options.requests)
        let start = DispatchTime.now().uptimeNanoseconds
        let sampler = ProcessSampler(interval: options.sampleInterval, start: start) { sample in
            let done = counters.completed.current
            FileHandle.standardError.write(
                Data(
                    (String(format: "  t=%4.0f s  ", sample.elapsed)
                        + "done \(done)  RSS \(mebibytes(sample.residentBytes)) MiB  "
                        + "fds \(sample.descriptors)  threads \(sample.threads)  in flight \(counters.inFlight.current)\n")
                        .utf8))
        }
        let next = Locked(0)
        let interval = 1e9 / rate
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<options.inFlight {
                group.addTask {
                    while true {
                        let index = next.withLock { value -> Int in
                            defer { value += 1 }
                            return value
                        }
                        guard index < options.requests else { return }
                        let due = start + UInt64(Double(index) * interval)
                        let now = DispatchTime.now().uptimeNanoseconds
                        if due > now { try? await Task.sleep(nanoseconds: due - now) }
                        let (routeIndex, path) = pick(index, seed: options.seed)
                        let endpoint = Endpoint(path: path, method: .get, requiresAuth: routes[routeIndex].requiresAuth)
                        let record = SoakRecord()
                        counters.began()
                        let began = DispatchTime.now().uptimeNanoseconds
                        let outcome: String
                        do {
                            _ = try await SoakRecord.$current.withValue(record) {
                                try await service.requestData(to: endpoint, via: environment)
                            }
                            outcome =
                                record.lastStatus.current == 304
                                ? "200 served from cache (304)" : "200 from the network"
                        } catch {
                            outcome = label(error)
                        }
                        latencies.set(index, Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6)
                        counters.finished(route: routeIndex, outcome: outcome, record: record)
                    }
                }
            }
        }
        let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let samples = sampler.finish()
        return report(
            options: options, samples: samples, counters: counters, latencies: latencies, wall: wall,
            refreshes: reauth.refreshCount, nginx: nginx)
    }

    static func report(
        options: Options, samples: [ProcessSample], counters: SoakCounters, latencies: LatencyBuffer, wall: Double,
        refreshes: Int, nginx: BenchNginx
    ) -> Bool {
        print("")
        print("Samples (every \(Int(options.sampleInterval)) s; the last is taken when the run ends):")
        print(pad("t (s)", 8) + pad("RSS (MiB)", 11) + pad("fds", 6) + "threads")
        for sample in samples {
            print(
                pad(String(format: "%.0f", sample.elapsed), 8) + pad(mebibytes(sample.residentBytes), 11)
                    + pad("\(sample.descriptors)", 6) + "\(sample.threads)")
        }
        guard let first = samples.first, let last = samples.last else { return false }
        let baseline = samples.first { $0.elapsed >= options.warmUp } ?? last
        let afterWarmUp = samples.filter { $0.elapsed >= options.warmUp }
        func summary(_ name: String, _ value: (ProcessSample) -> Int, _ format: (Int) -> String) {
            let maximum = afterWarmUp.map(value).max() ?? value(last)
            print(
                "  \(pad(name, 12))at 0 s \(pad(format(value(first)), 8))at \(Int(baseline.elapsed)) s (start) "
                    + "\(pad(format(value(baseline)), 8))end \(pad(format(value(last)), 8))max after warm-up \(format(maximum))"
                    + "   (max overall \(format(samples.map(value).max() ?? 0)))")
        }
        print("")
        print(String(format: "Summary (wall time %.1f s):", wall))
        summary("RSS (MiB)", { $0.residentBytes }, { mebibytes($0) })
        summary("descriptors", { $0.descriptors }, { "\($0)" })
        summary("threads", { $0.threads }, { "\($0)" })
        let completed = counters.completed.current
        print(
            "  requests completed: \(completed) of \(options.requests); most in flight at once: \(counters.maxInFlight.current)"
        )
        let outcomes = counters.outcomes.current
        print("  outcomes:")
        for (outcome, count) in outcomes.sorted(by: { $0.value > $1.value }) {
            print("    \(pad("\(count)", 8))\(outcome)")
        }
        let flags = counters.flags.current
        print(
            "  retried: \(flags.retriedRequests) requests (\(flags.retries) retries); refreshed: "
                + "\(flags.refreshedRequests) requests re-sent after a 401 (\(refreshes) token refreshes); "
                + "network attempts: \(flags.attempts)")
        print("  by route (requests, ok, errors):")
        let byRoute = counters.byRoute.current
        for (index, route) in routes.enumerated() {
            print(
                "    \(pad(route.name, 15))\(pad("\(byRoute[index].0)", 8))\(pad("\(byRoute[index].1)", 8))\(byRoute[index].0 - byRoute[index].1)"
            )
        }
        let sorted = latencies.sortedLatencies()
        func percentile(_ p: Double) -> String {
            guard !sorted.isEmpty else { return "-" }
            return String(format: "%.2f ms", sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
        }
        print(
            "  latency (all requests, including retries' delays): p50 \(percentile(0.5)), p90 \(percentile(0.9)), "
                + "p99 \(percentile(0.99)), max \(String(format: "%.0f ms", sorted.last ?? 0))")
        var statuses: [String: Int] = [:]
        for line in nginx.accessLog {
            // combined format: ADDRESS - - [TIME] "GET /path HTTP/1.1" STATUS BYTES "REFERER" "AGENT"
            let fields = line.split(separator: "\"", omittingEmptySubsequences: false)
            guard fields.count > 2, let status = fields[2].split(separator: " ").first else { continue }
            statuses[String(status), default: 0] += 1
        }
        print(
            "  nginx saw (access log, statuses): "
                + statuses.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))

        let rssLimit = Int(Double(baseline.residentBytes) * 1.10) + 8 << 20
        let descriptorLimit = baseline.descriptors + options.inFlight
        let rssOK = last.residentBytes <= rssLimit
        let descriptorsOK = last.descriptors <= descriptorLimit
        let allDone = completed == options.requests
        print("")
        print(
            "Verdict (noise: after the \(Int(options.warmUp)) s warm-up, RSS end ≤ start + 10% + 8 MiB; descriptors end ≤ start + in-flight):"
        )
        GentleBench.report(
            "RSS end \(mebibytes(last.residentBytes)) MiB ≤ \(mebibytes(rssLimit)) MiB (start \(mebibytes(baseline.residentBytes)) MiB)",
            rssOK)
        GentleBench.report(
            "descriptors end \(last.descriptors) ≤ \(descriptorLimit) (start \(baseline.descriptors) + \(options.inFlight))",
            descriptorsOK)
        GentleBench.report(
            "every request completed or failed with a typed error (\(completed)/\(options.requests))", allDone)
        return rssOK && descriptorsOK && allDone
    }

    /// The outcome label of a failed request: a typed error by code.
    static func label(_ error: any Error) -> String {
        guard let network = error as? NetworkError else {
            return error is CancellationError ? "CancellationError" : "untyped \(type(of: error))"
        }
        let kind = network.kind
        if network.statusError != nil {
            return "NetworkError.httpStatusError(\(network.statusCode ?? 0))"
        }
        if case .transport(let code) = kind {
            return "NetworkError.transport(.\(code))"
        }
        return "NetworkError." + String(describing: kind)
    }

    static func mebibytes(_ bytes: Int) -> String { GentleBench.mebibytes(bytes) }
    static func pad(_ text: String, _ width: Int) -> String { GentleBench.pad(text, width) }
}

/// What one request's network attempts returned, reached through a task-local by the probe and
/// by `RetryTransport.onRetry`.
final class SoakRecord: Sendable {
    @TaskLocal static var current: SoakRecord?
    let attempts = Locked(0)
    let retries = Locked(0)
    let sawUnauthorized = Locked(false)
    /// The status of the last network attempt (-1 for a transport error).
    let lastStatus = Locked(0)
}

/// A pass-through transport that notes each network attempt's status in the current record.
struct SoakProbe: HTTPTransportProtocol {
    let inner: any HTTPTransportProtocol

    func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let record = SoakRecord.current
        record?.attempts.withLock { $0 += 1 }
        do {
            let (data, response) = try await inner.data(for: request)
            record?.lastStatus.withLock { $0 = response.statusCode }
            if response.statusCode == 401 { record?.sawUnauthorized.withLock { $0 = true } }
            return (data, response)
        } catch {
            record?.lastStatus.withLock { $0 = -1 }
            throw error
        }
    }
}

/// The run's tallies.
final class SoakCounters: Sendable {
    struct Flags {
        var retriedRequests = 0
        var retries = 0
        var refreshedRequests = 0
        var attempts = 0
    }

    let completed = Locked(0)
    let inFlight = Locked(0)
    let maxInFlight = Locked(0)
    let outcomes = Locked<[String: Int]>([:])
    let flags = Locked(Flags())
    /// (requests, successes) per route.
    let byRoute: Locked<[(Int, Int)]>

    init(routes: Int) {
        byRoute = Locked(Array(repeating: (0, 0), count: routes))
    }

    func began() {
        let now = inFlight.withLock { value -> Int in
            value += 1
            return value
        }
        maxInFlight.withLock { $0 = max($0, now) }
    }

    func finished(route: Int, outcome: String, record: SoakRecord) {
        inFlight.withLock { $0 -= 1 }
        outcomes.withLock { $0[outcome, default: 0] += 1 }
        let retries = record.retries.current
        let attempts = record.attempts.current
        let refreshed = record.sawUnauthorized.current && attempts > retries + 1
        flags.withLock { flags in
            if retries > 0 { flags.retriedRequests += 1 }
            flags.retries += retries
            if refreshed { flags.refreshedRequests += 1 }
            flags.attempts += attempts
        }
        byRoute.withLock {
            $0[route].0 += 1
            if outcome.hasPrefix("200") { $0[route].1 += 1 }
        }
        completed.withLock { $0 += 1 }
    }
}

/// One latency slot per request, allocated and touched up front.
final class LatencyBuffer: @unchecked Sendable {
    // @unchecked: each slot is written by exactly one task (the one that ran that request), and
    // read only after every task has finished.
    private let slots: UnsafeMutableBufferPointer<Double>

    init(count: Int) {
        slots = .allocate(capacity: max(1, count))
        slots.initialize(repeating: 0)
    }

    deinit { slots.deallocate() }

    func set(_ index: Int, _ milliseconds: Double) { slots[index] = milliseconds }

    /// The latencies of the requests that ran (slots still 0 never did), sorted.
    func sortedLatencies() -> [Double] { slots.filter { $0 > 0 }.sorted() }
}
