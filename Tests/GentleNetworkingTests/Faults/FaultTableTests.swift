import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The fault table: every way a peer (or a careless caller) can break an exchange, run against
/// every transport over real sockets, one case at a time. Each case must end in its expected
/// outcome, within a time limit, with no descriptor or thread left behind (counted from
/// `/proc/self` before and after). The table is printed, and written where
/// `GENTLE_FAULT_TABLE` points (`scripts/fault-table` prints it).
///
/// It runs in a `swift test` invocation of its own (`scripts/test`), so the counts are this
/// suite's alone.
@Suite("The fault table, on every transport", .serialized)
struct FaultTableTests {
    /// No case may take longer than this, even under ThreadSanitizer on a starved machine.
    static let caseTimeLimit: TimeInterval = 240

    @Test("Every fault ends in its typed outcome on every transport, with no leaked descriptor or thread")
    func faultTable() async throws {
        let pki = try await TestPKI.make()
        defer { try? FileManager.default.removeItem(at: pki.directory.deletingLastPathComponent()) }
        let fixtures = try FaultCatalog.TLSFixtures(pki)
        let cases = FaultCatalog.transportCases(pki: fixtures)
        try await warmUp(fixtures)
        // The TLS rows that trust the test CA fail for their own reason: with it, a valid chain passes.
        #if canImport(CCurl)
            #expect(try await FaultCatalog.trustedControl(fixtures) == 200)
        #endif

        let tableBaseline = ProcessResources.now()
        let tableInventory = ProcessResources.inventory()
        var rows: [FaultRow] = []
        for faultCase in cases {
            var row = FaultRow(name: faultCase.name, expected: faultCase.expected, knownLeaks: faultCase.knownLeaks)
            for kind in TransportKind.all {
                let before = ProcessResources.now()
                let inventoryBefore = ProcessResources.inventory()
                let start = DispatchTime.now()
                let observation: FaultObservation
                do {
                    observation = try await withTimeLimit(Self.caseTimeLimit) { try await faultCase.run(kind) }
                } catch {
                    observation = FaultObservation(outcome: .unexpected("the case itself failed: \(error)"))
                }
                row.slowest = max(row.slowest, seconds(since: start))
                row.outcomes[kind] = observation
                let known = faultCase.knownLeaks[kind] != nil
                // Waits (up to 20 s) for the case's descriptors to close and its own threads to
                // end; libdispatch's pool workers are left to the end of the table.
                let settleStart = DispatchTime.now()
                let after = await ProcessResources.settled(
                    to: before, extraDescriptors: known ? FaultCase.knownLeakBound : 0, poolWorkers: false)
                row.settling[kind] = seconds(since: settleStart)
                row.leftover[kind] = FaultRow.Leftover(
                    descriptors: after.descriptors - before.descriptors, threads: after.newOwnThreads(since: before),
                    poolWorkers: after.poolWorkers - before.poolWorkers)
                if after.descriptors > before.descriptors || after.newOwnThreads(since: before) > 0 {
                    row.leakDetails[kind] = ProcessResources.difference(
                        from: inventoryBefore, to: ProcessResources.inventory())
                }
            }
            rows.append(row)
        }
        FaultReport.publish(FaultReport.transportTable(rows))

        // The libdispatch pool workers the cases started must be gone by the end of the table
        // (a worker stuck in a transfer never retires); the descriptors the known leaks keep for
        // good are all that may remain.
        let knownRuns = rows.reduce(0) { $0 + $1.knownLeaks.count }
        let end = await ProcessResources.settled(
            to: tableBaseline, extraDescriptors: knownRuns * FaultCase.knownLeakBound, timeout: 60)
        let endDetails = ProcessResources.difference(from: tableInventory, to: ProcessResources.inventory())
        #expect(
            end.newOwnThreads(since: tableBaseline) == 0 && end.poolWorkers <= tableBaseline.poolWorkers,
            "threads after the table: \(end), before: \(tableBaseline); \(endDetails)")
        #expect(
            end.descriptors <= tableBaseline.descriptors + knownRuns * FaultCase.knownLeakBound,
            "descriptors after the table: \(end), before: \(tableBaseline); \(endDetails)")

        for row in rows {
            for kind in TransportKind.all {
                let observed = try #require(row.outcomes[kind])
                #expect(observed.outcome == row.expected, "\(row.name) on \(kind): \(observed.outcome)")
                #expect(observed.problems.isEmpty, "\(row.name) on \(kind): \(observed.problems)")
                let left = try #require(row.leftover[kind])
                let known = row.knownLeaks[kind] != nil
                let details = row.leakDetails[kind] ?? ""
                #expect(
                    left.descriptors <= (known ? FaultCase.knownLeakBound : 0),
                    "\(row.name) on \(kind): \(left.descriptors) descriptors leaked: \(details)")
                #expect(left.threads <= 0, "\(row.name) on \(kind): \(left.threads) threads leaked: \(details)")
            }
        }
    }

    /// corelibs' `Process.run()` gives the calling thread a run loop (3 descriptors) that lives
    /// as long as the thread, so nginx launched from a pool thread the table had not used yet
    /// showed as "+3 fd" in whichever case did it. `NginxServer` launches from a thread of its own.
    @Test("Starting and stopping nginx leaves no descriptor behind on the calling thread")
    func nginxLeavesNoDescriptor() async throws {
        // What a process creates once (corelibs' process manager, the launcher) is made first.
        try NginxServer(files: ["x": Data("x".utf8)]).stop()
        let counts: Result<(Int, Int), any Error> = await withCheckedContinuation { continuation in
            let thread = Thread {
                let before = ProcessResources.now().descriptors
                do {
                    let nginx = try NginxServer(files: ["x": Data("x".utf8)])
                    nginx.stop()
                    continuation.resume(returning: .success((before, ProcessResources.now().descriptors)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            thread.start()
        }
        let (before, after) = try counts.get()
        #expect(after == before, "\(after - before) descriptors left on the thread that started nginx")
    }

    /// Exchanges on each transport first, so that what the platform creates once per process
    /// is in the baseline, not counted as a leak: corelibs' work-queue threads, libcurl's global
    /// state, the name service's descriptors for `localhost` and OpenSSL's for a handshake.
    private func warmUp(_ fixtures: FaultCatalog.TLSFixtures) async throws {
        let server = try HostileServer()
        defer { server.shutdown() }
        server.route("/warm", .ok(body: Data("ok".utf8)))
        let byName = try #require(URL(string: "http://localhost:\(server.port)/warm"))
        for kind in TransportKind.all {
            _ = try await makeHostileTransport(kind).data(for: URLRequest(url: server.url("/warm")))
            _ = try await makeHostileTransport(kind).data(for: URLRequest(url: byName))
            _ = try await FaultCatalog.tls(fixtures)[0].run(kind)
        }
        // A `Task.sleep` long enough to set a kernel timer: libdispatch opens a `timerfd` for
        // its clock once per process and keeps it. `URLSessionTransport`'s old per-call watchdog
        // slept so, which opened it during the exchanges above; `DeadlineTimer` uses a dispatch
        // source on the uptime clock instead, and the first `Task.sleep` of the table (a
        // connection refused on `URLSessionTransport`) opened it as a "leak".
        try await Task.sleep(nanoseconds: 20_000_000)
    }
}

/// Runs `operation`, failing with a timeout error if it has not finished after `seconds`: a hang
/// becomes a row of the table rather than a stuck test run.
func withTimeLimit<T: Sendable>(
    _ seconds: TimeInterval, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            throw TimeLimitExceeded(seconds: seconds)
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw TimeLimitExceeded(seconds: seconds) }
        return first
    }
}

/// A fault case that did not finish in time: a hang.
struct TimeLimitExceeded: Error, CustomStringConvertible {
    let seconds: TimeInterval
    var description: String { "hung: no outcome after \(Int(seconds)) s" }
}

/// Formats and writes the tables.
enum FaultReport {
    static func transportTable(_ rows: [FaultRow]) -> String {
        let kinds = TransportKind.all
        let names: [TransportKind: String] = [.curl: "`CurlTransport`", .urlSession: "`URLSessionTransport`"]
        var lines = [
            "| Fault | Expected | " + kinds.map { names[$0] ?? "\($0)" }.joined(separator: " | ")
                + " | Slowest | Leaked fd / threads |",
            "|---|---|" + String(repeating: "---|", count: kinds.count) + "---|---|",
        ]
        var footnotes: [String] = []
        for row in rows {
            for (kind, reason) in row.knownLeaks.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                footnotes.append("- Known leak, \(row.name) on \(kind): \(reason)")
            }
            let leaks = Set(kinds.map { row.leaks($0) })
            lines.append(
                "| \(row.name) | \(row.expected) | " + kinds.map { row.cell($0) }.joined(separator: " | ")
                    + " | \(String(format: "%.2f", row.slowest)) s | \(leaks.count == 1 ? leaks.first ?? "" : leaks.filter { $0 != "none" }.sorted().joined(separator: "; ")) |"
            )
        }
        let pooled = rows.flatMap { row in kinds.compactMap { row.leftover[$0]?.poolWorkers } }
        if let most = pooled.max(), most > 0 {
            footnotes.append(
                "- libdispatch pool workers more than before, when a case's own threads had ended: after "
                    + "\(pooled.filter { $0 > 0 }.count) of \(pooled.count) runs, at most +\(most). The pool is shared "
                    + "(the test itself, corelibs' `Process` launching nginx, and URLSession's transfers run on it), "
                    + "so its workers are held against no case; the end of the table requires every one gone.")
        }
        let settles = rows.flatMap { row in row.settling.map { (row.name, $0.key, $0.value) } }
        if let longest = settles.max(by: { $0.2 < $1.2 }) {
            let total = settles.reduce(0) { $0 + $1.2 }
            footnotes.append(
                "- Waiting for descriptors and threads to settle after the cases: "
                    + String(format: "%.1f s in all, the longest %.1f s", total, longest.2)
                    + " (\(longest.0) on \(longest.1)).")
        }
        return (lines + (footnotes.isEmpty ? [] : [""] + footnotes)).joined(separator: "\n")
    }

    /// Prints `table` and appends it to the file `GENTLE_FAULT_TABLE` names, if any.
    static func publish(_ table: String) {
        print("\n" + table + "\n")
        guard let path = ProcessInfo.processInfo.environment["GENTLE_FAULT_TABLE"], !path.isEmpty else { return }
        let data = Data((table + "\n\n").utf8)
        if let handle = FileHandle(forWritingAtPath: path) {
            handle.seekToEndOfFile()
            handle.write(data)
            handle.closeFile()
        } else {
            _ = FileManager.default.createFile(atPath: path, contents: data)
        }
    }
}
