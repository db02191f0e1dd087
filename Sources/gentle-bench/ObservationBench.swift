import Foundation
import GentleNetworking

#if canImport(Glibc)
    import Glibc
#endif

/// What observing requests costs (issue 13): the default transport against nginx, at 1 and 16 in
/// flight, with observation off (no logger), with the response asked for (`requestWithResponse`,
/// the baseline of metrics: both build an `HTTPURLResponse`), with metrics asked for per call
/// (`requestWithMetrics`), and with an enabled logger that receives every record and metrics
/// (it counts them and does nothing else), and the plain request again as a control (its
/// difference from the first is the noise floor of the method). Each figure is the client process's CPU time (user +
/// system, `getrusage`) per request, far steadier than requests per second on a shared machine;
/// the modes share one transport and take turns in short slices within every round, and medians
/// of the rounds are printed with the spread.
///
/// "Off" has nothing to compare against in the same build, so its cost is measured directly: the
/// two task-local reads an unobserved request makes, timed over a million iterations.
enum ObservationBench {
    enum Mode: String, CaseIterable {
        case off = "off (no logger)"
        case response = "requestWithResponse"
        case metrics = "requestWithMetrics"
        case observer = "enabled logger"
        /// The same call as `off`, in slices of its own: its difference from `off` is the
        /// measurement's noise floor (zero on a quiet machine), printed beside the two costs.
        case control = "off again (control)"
    }

    /// The slices a round's time per mode is cut into.
    static let slicesPerRound = 8

    static func measure(baseURL: URL, seconds: Double, rounds: Int) async throws {
        let environment = DefaultAPIEnvironment(baseURL: baseURL)
        let endpoint = Endpoint(path: "/model.json", method: .get)
        let records = RecordCounter()
        // One transport (one connection pool, one loop thread) for every mode: the modes differ
        // in what the service does, nothing else.
        let transport = DefaultTransport.make()
        let quiet = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
        let observed = HTTPNetworkService(
            transport: transport, authService: InMemoryAuthService(),
            logger: ClosureNetworkLogger { record in records.add(record) })
        func operation(_ mode: Mode) -> @Sendable () async throws -> Void {
            {
                switch mode {
                case .off, .control:
                    let _: BenchModel = try await quiet.request(to: endpoint, via: environment)
                case .response:
                    let (_, response): (BenchModel, HTTPURLResponse) = try await quiet.requestWithResponse(
                        to: endpoint, via: environment)
                    guard response.statusCode == 200 else { throw BenchError("status") }
                case .metrics:
                    let (_, _, metrics): (BenchModel, HTTPURLResponse, RequestMetrics) =
                        try await quiet.requestWithMetrics(to: endpoint, via: environment)
                    guard metrics.transactions.count == 1 else { throw BenchError("no metrics") }
                case .observer:
                    let _: BenchModel = try await observed.request(to: endpoint, via: environment)
                }
            }
        }
        var samples: [Int: [Mode: [Double]]] = [:]
        // User CPU per request, for the added cost: what observing adds runs in this process's
        // user space, while system time (the sockets) is most of the noise.
        var userSamples: [Int: [Mode: [Double]]] = [:]
        for _ in 1...rounds {
            for concurrency in [1, 16] {
                for mode in Mode.allCases {
                    try await runWorkers(concurrency: concurrency, seconds: 0.3, operation(mode))
                }
                // A round's time per mode is cut into slices, the modes taking turns (forwards,
                // then backwards), so a change in the host's load falls on every mode alike
                // rather than on whichever ran during it.
                var totals: [Mode: (total: Double, user: Double, requests: Int)] = [:]
                for slice in 0..<slicesPerRound {
                    let order = slice.isMultiple(of: 2) ? Mode.allCases : Mode.allCases.reversed()
                    for mode in order {
                        let before = cpuSeconds()
                        let count = try await runWorkers(
                            concurrency: concurrency, seconds: seconds / Double(slicesPerRound), operation(mode))
                        let after = cpuSeconds()
                        let sum = totals[mode] ?? (0, 0, 0)
                        totals[mode] = (
                            sum.total + after.total - before.total, sum.user + after.user - before.user,
                            sum.requests + count
                        )
                    }
                }
                for mode in Mode.allCases {
                    guard let sum = totals[mode], sum.requests > 0 else { throw BenchError("no request completed") }
                    samples[concurrency, default: [:]][mode, default: []].append(
                        sum.total / Double(sum.requests) * 1e6)
                    userSamples[concurrency, default: [:]][mode, default: []].append(
                        sum.user / Double(sum.requests) * 1e6)
                }
            }
        }
        guard records.withMetrics > 0 else { throw BenchError("the logger saw no metrics") }

        let iterations = 1_000_000
        var unobserved = true
        let probe = try await nanosecondsPerCall(iterations: iterations) {
            unobserved = unobserved && ExchangeRecorder.unobservedPathProbe()
        }
        guard unobserved else { throw BenchError("the bench task is observed") }

        print("")
        print(
            "Observation cost, default transport against nginx: client CPU µs per request (median of \(rounds) rounds, range):"
        )
        var offTargetMet = true
        var metricsTargetMet = true
        var loggerTargetMet = true
        for concurrency in [1, 16] {
            let row = samples[concurrency] ?? [:]
            let userRow = userSamples[concurrency] ?? [:]
            var line = "  \(concurrency) in flight: "
            for mode in Mode.allCases {
                let values = row[mode] ?? []
                line += "\(mode.rawValue) \(String(format: "%.1f", median(values))) (\(spread(values)))"
                // Metrics against the same call without them (both build the HTTPURLResponse they
                // return); the logger against the plain request. The added cost is the median of
                // each round's difference in user CPU (the modes of a round run back to back).
                let baseline = userRow[mode == .metrics ? .response : .off] ?? []
                if mode == .metrics || mode == .observer || mode == .control {
                    let differences = zip(userRow[mode] ?? [], baseline).map { $0 - $1 }
                    let added = median(differences)
                    line += String(format: ", adds %+.1f user", added) + " (\(spread(differences)))"
                    if added >= 5, mode != .control {
                        if mode == .metrics { metricsTargetMet = false } else { loggerTargetMet = false }
                    }
                }
                line += mode == Mode.allCases.last ? "" : "; "
            }
            print(line)
        }
        let offCost = probe
        if offCost >= 1000 { offTargetMet = false }
        print(
            String(
                format: "  off: the two task-local reads an unobserved request makes take %.0f ns   target < 1 µs",
                offCost))
        print(
            "  on: added user CPU per request (median of the rounds' differences, range): requestWithMetrics against requestWithResponse, the logger and the control against off   target < 5 µs (the control's difference is the noise floor)"
        )
        GentleBench.report("observation off costs < 1 µs per request", offTargetMet)
        GentleBench.report("metrics add < 5 µs of CPU per request", metricsTargetMet)
        GentleBench.report("an enabled logger adds < 5 µs of CPU per request", loggerTargetMet)
    }

    /// User + system CPU time of this process so far, and user time alone, in seconds.
    static func cpuSeconds() -> (total: Double, user: Double) {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return (.nan, .nan) }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return (seconds(usage.ru_utime) + seconds(usage.ru_stime), seconds(usage.ru_utime))
    }

    static func spread(_ values: [Double]) -> String {
        guard let low = values.min(), let high = values.max() else { return "-" }
        return String(format: "%.1f–%.1f", low, high)
    }
}

/// Counts the records an observer receives, and those with metrics.
final class RecordCounter: Sendable {
    private let counts = Locked((0, 0))

    func add(_ record: NetworkLogRecord) {
        counts.withLock {
            $0.0 += 1
            if record.metrics != nil { $0.1 += 1 }
        }
    }

    var withMetrics: Int { counts.withLock { $0.1 } }
}
