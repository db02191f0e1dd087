import Foundation
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The records of one ordinary exchange, made by hand: a GET with a query and the usual request
/// headers, a 200 with the usual response headers and a 1 KiB JSON body excerpt. Each entry of it
/// is about 3 KB of JSON.
private func ordinaryExchange(_ id: UInt64) -> (request: NetworkLogRecord, response: NetworkLogRecord) {
    let url = "https://api.example.com/v1/users/\(id)/orders?page=\(id % 7)&per_page=50&sort=created_at"
    let requestHeaders = [
        "Accept": "application/json", "Accept-Encoding": "gzip, deflate", "Accept-Language": "en-US",
        "Authorization": "<redacted>", "User-Agent": "GentleNetworking/1.0 (Linux; x86_64)",
        "X-Request-ID": "0f5c7a3e-\(id)-4b1d-9c2e-6a8f0e1d2c3b", "X-Client-Version": "4.2.1",
    ]
    let responseHeaders = [
        "Content-Type": "application/json; charset=utf-8", "Content-Length": "18342", "Cache-Control": "private",
        "Date": "Tue, 04 Mar 2025 10:00:00 GMT", "ETag": "\"33a64df551425fcc55e4d42a148795d9f25f89d4\"",
        "Server": "nginx/1.25.3", "Vary": "Accept-Encoding, Authorization", "X-RateLimit-Remaining": "4999",
        "X-Request-ID": "0f5c7a3e-\(id)-4b1d-9c2e-6a8f0e1d2c3b", "Strict-Transport-Security": "max-age=31536000",
    ]
    let item = #"{"id":12345,"name":"Ada Lovelace","email":"<redacted>","created_at":"2025-03-04T10:00:00Z"},"#
    let body = String(("[" + String(repeating: item, count: 12)).prefix(1024))
    return (
        NetworkLogRecord(event: .request, method: "GET", url: url, headers: requestHeaders, requestID: id),
        NetworkLogRecord(
            event: .response, method: "GET", url: url, statusCode: 200, headers: responseHeaders, bodyExcerpt: body,
            duration: 0.042, requestID: id)
    )
}

/// `VmRSS` or `VmHWM` of this process from `/proc/self/status`, in bytes; 0 when unreadable.
private func statusBytes(_ field: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        let number = line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first
        return (number.flatMap { Int($0) } ?? 0) * 1024
    }
    return 0
}

/// Resets `VmHWM` to the current resident size (`/proc/self/clear_refs`, Linux 4.0+); `false`
/// when it cannot be.
private func resetPeak() -> Bool {
    guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
    defer { try? handle.close() }
    return (try? handle.write(contentsOf: Data("5".utf8))) != nil
}

/// What the child measured: the document's size, the recorder's budget, and the growth of the
/// resident size from before the first record: once the entries are kept (`held`), at its peak
/// while `harData()` ran (`harDataPeak`) and while `write(to:)` ran (`writePeak`).
private struct MemoryReport: Codable {
    var entries: Int
    var maxBytes: Int
    var documentBytes: Int
    var held: Int
    var harDataPeak: Int
    var writePeak: Int
}

/// The environment variable that makes ``HARRecorderMemoryTests/measureInChild()`` measure: the
/// path it writes its ``MemoryReport`` to.
private let reportVariable = "GENTLE_HAR_MEMORY_REPORT"

@Suite("HARRecorder: what it holds is its budget, and the file is made without copies of it")
struct HARRecorderMemoryTests {
    /// A recorder of `maxBytes` that logged `exchanges` ordinary exchanges.
    private static func recorder(maxBytes: Int, exchanges: UInt64) -> HARRecorder {
        let har = HARRecorder(maxBytes: maxBytes)
        for id in 1...exchanges {
            let (request, response) = ordinaryExchange(id)
            har.log(request)
            har.log(response)
        }
        return har
    }

    @Test("Ordinary entries: the file is at most maxBytes plus its head; write(to:) writes the same bytes")
    func documentWithinBudget() throws {
        // Before: the budget counted 1 KiB plus the text of each entry, and the pretty-printed
        // JSON of an entry was more than that (37 MB of file for 32 MiB of budget).
        let budget = 1 << 20
        let har = Self.recorder(maxBytes: budget, exchanges: 2_000)
        let data = har.harData()
        let log = try #require(
            (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["log"] as? [String: Any])
        let entries = try #require(log["entries"] as? [[String: Any]])
        let dropped = try #require(log["_droppedEntries"] as? Int)
        #expect(entries.count == har.entryCount && entries.count + dropped == 2_000)
        #expect(entries.count > 200, "\(entries.count) entries kept")
        #expect(data.count <= budget + 1024, "\(data.count) bytes of file for a budget of \(budget)")

        let directory = try makeScratchDirectory("har-memory")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("session.har")
        try har.write(to: file)
        #expect(try Data(contentsOf: file) == data)
    }

    @Test("An entry's time is the sum of its timings, even when hand-made metrics claim more than the duration")
    func timeIsTheSumOfTimings() throws {
        let har = HARRecorder()
        // Phases of 1 + 2 + 1 + 100 + 5 ms, in a record that says the request took 10 ms.
        let final = TransactionMetrics(
            method: "GET", url: "https://h.example/a", statusCode: 200, hop: 0, fetchStart: Date(),
            domainLookupEnd: 0.001, connectEnd: 0.003, requestStart: 0.003, requestEnd: 0.004,
            responseStart: 0.104, responseEnd: 0.109, networkProtocol: "http/1.1", source: .libcurl)
        let metrics = RequestMetrics(start: Date(), duration: 0.010, transactions: [final], steps: [])
        har.log(NetworkLogRecord(event: .request, method: "GET", url: "https://h.example/a", requestID: 1))
        har.log(
            NetworkLogRecord(
                event: .response, method: "GET", url: "https://h.example/a", statusCode: 200, duration: 0.010,
                requestID: 1, metrics: metrics))
        // Without metrics, and with a duration that is not finite.
        for (id, duration) in [(2, 0.25), (3, Double.infinity)] as [(UInt64, Double)] {
            har.log(NetworkLogRecord(event: .request, method: "GET", url: "https://h.example/b", requestID: id))
            har.log(
                NetworkLogRecord(
                    event: .response, method: "GET", url: "https://h.example/b", statusCode: 200, duration: duration,
                    requestID: id))
        }
        let json = try #require(try JSONSerialization.jsonObject(with: har.harData()) as? [String: Any])
        let entries = try #require((json["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        #expect(entries.count == 3)
        for entry in entries {
            let timings = try #require(entry["timings"] as? [String: Double])
            let time = try #require(entry["time"] as? Double)
            let sum = ["blocked", "dns", "connect", "send", "wait", "receive"].compactMap { timings[$0] }.filter {
                $0 >= 0
            }.reduce(0, +)
            #expect(abs(sum - time) < 0.001, "\(timings) add up to \(sum), time \(time)")
            #expect(timings.values.allSatisfy { $0 >= -1 && $0.isFinite }, "\(timings)")
        }
        #expect(abs((entries[0]["time"] as? Double ?? 0) - 109) < 0.001)
        #expect(abs((entries[1]["time"] as? Double ?? 0) - 250) < 0.001)
    }

    @Test("A request body without Content-Length: the entry's bodySize is the body's byte count")
    func requestBodySizeWithoutContentLength() throws {
        let har = HARRecorder()
        let url = try #require(URL(string: "https://h.example/upload"))
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = Data(repeating: UInt8(ascii: "a"), count: 3_000)
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        #expect(request.value(forHTTPHeaderField: "Content-Length") == nil)
        let session = try #require(NetworkLogSession(logger: har, request: request, alsoHeaders: []))
        let response = try #require(HTTPURLResponse(url: url, statusCode: 201, httpVersion: nil, headerFields: nil))
        session.response(response, body: Data())
        // A request made by hand with no body: 0, as before.
        har.log(NetworkLogRecord(event: .request, method: "GET", url: "https://h.example/a", requestID: 99))
        har.log(
            NetworkLogRecord(
                event: .response, method: "GET", url: "https://h.example/a", statusCode: 200, requestID: 99))
        let json = try #require(try JSONSerialization.jsonObject(with: har.harData()) as? [String: Any])
        let entries = try #require((json["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let requests = entries.compactMap { $0["request"] as? [String: Any] }
        #expect(requests.map { $0["bodySize"] as? Int } == [3_000, 0], "\(requests.map { $0["bodySize"] ?? "nil" })")
        #expect(((requests.first?["postData"] as? [String: Any])?["text"] as? String)?.isEmpty == false)
    }

    @Test("Resident memory: entries held within maxBytes; harData() and write(to:) peak near the file's size")
    func residentMemory() async throws {
        #if os(Linux)
            // Under ThreadSanitizer every allocation has shadow memory: resident sizes say nothing.
            if dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil { return }
            let directory = try makeScratchDirectory("har-memory")
            defer { try? FileManager.default.removeItem(at: directory) }
            let reportFile = directory.appendingPathComponent("report.json")
            // The test bundle itself, running only `measureInChild`: resident memory is the
            // process's, and tests run in parallel here.
            let status = try await offCooperativePool { () -> Int32 in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
                process.arguments = [
                    "--testing-library", "swift-testing", "--filter", "HARRecorderMemoryTests/measureInChild",
                ]
                var environment = ProcessInfo.processInfo.environment
                environment[reportVariable] = reportFile.path
                process.environment = environment
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                process.waitUntilExit()
                return process.terminationStatus
            }
            #expect(status == 0)
            let report = try JSONDecoder().decode(MemoryReport.self, from: Data(contentsOf: reportFile))
            let mib = { (bytes: Int) in String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
            let summary =
                "\(report.entries) entries, file \(mib(report.documentBytes)), held \(mib(report.held)), harData peak \(mib(report.harDataPeak)), write peak \(mib(report.writePeak))"
            #expect(report.entries > 5_000 && report.entries < 14_000, "the budget stops the entries: \(summary)")
            #expect(report.documentBytes <= report.maxBytes + 1024, "\(summary)")
            // Before: 78 MB held for a 32 MiB budget, 311 MB at the peak of harData(), 379 MB in
            // write(to:). The margins are for the allocator's own pages.
            #expect(report.held <= report.maxBytes + report.maxBytes / 4 + (8 << 20), "\(summary)")
            #expect(report.harDataPeak <= report.held + 2 * report.documentBytes + (8 << 20), "\(summary)")
            #expect(report.writePeak <= report.held + (8 << 20), "\(summary)")
        #endif
    }

    /// Does nothing unless ``reportVariable`` names a file: then, in the child process that
    /// ``residentMemory()`` starts, fills a recorder with 14,000 ordinary exchanges (past its
    /// 32 MiB budget, which is what stops it: its `maxEntries` is higher), measures, and writes
    /// the ``MemoryReport`` there.
    @Test("(The child process of the resident-memory test; nothing in a normal run)")
    func measureInChild() throws {
        guard let path = ProcessInfo.processInfo.environment[reportVariable] else { return }
        let har = HARRecorder(maxEntries: 100_000)
        // Warm up what one entry and one file need (formatters, metadata), then forget it.
        let (warmRequest, warmResponse) = ordinaryExchange(0)
        har.log(warmRequest)
        har.log(warmResponse)
        _ = har.harData()
        har.reset()
        let baseline = statusBytes("VmRSS")
        for id in 1...14_000 as ClosedRange<UInt64> {
            let (request, response) = ordinaryExchange(id)
            har.log(request)
            har.log(response)
        }
        let held = statusBytes("VmRSS") - baseline
        #expect(resetPeak())
        let documentBytes = har.harData().count
        let harDataPeak = statusBytes("VmHWM") - baseline
        #expect(resetPeak())
        let file = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("session.har")
        try har.write(to: file)
        let writePeak = statusBytes("VmHWM") - baseline
        try? FileManager.default.removeItem(at: file)
        let report = MemoryReport(
            entries: har.entryCount, maxBytes: har.maxBytes, documentBytes: documentBytes, held: held,
            harDataPeak: harDataPeak, writePeak: writePeak)
        try JSONEncoder().encode(report).write(to: URL(fileURLWithPath: path))
    }

    @Test("What the kept entries hold is what they count against maxBytes: their JSON text, in storage of its size")
    func heldBytesAreCounted() throws {
        let budget = 1 << 20
        let har = Self.recorder(maxBytes: budget, exchanges: 2_000)
        let load = har.entryLoad
        #expect(load.counted <= budget && load.counted > budget - 8 * 1024, "\(load)")
        #expect(load.counted == load.bytes + har.entryCount * HARRecorder.entryOverhead, "\(load)")
        // An array grown while writing would hold up to twice its bytes.
        #expect(load.capacity <= load.bytes + har.entryCount * 32, "\(load)")
        // The file is the kept text, a separator before each entry, and a head and tail.
        let size = har.harData().count
        #expect(size >= load.bytes + 2 * har.entryCount && size <= load.bytes + 2 * har.entryCount + 1024, "\(size)")
        har.reset()
        #expect(har.entryLoad.bytes == 0 && har.entryLoad.counted == 0 && har.entryCount == 0)
    }

    @Test("Outcomes logged on many threads at once: each is kept or counted, each thread's entries in its order")
    func concurrentOutcomes() async throws {
        let har = HARRecorder(maxEntries: 1_000)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 as Range<UInt64> {
                group.addTask {
                    for index in 0..<200 as Range<UInt64> {
                        let (request, response) = ordinaryExchange(task * 1_000 + index)
                        har.log(request)
                        har.log(response)
                    }
                }
            }
        }
        let log = try #require(
            (try JSONSerialization.jsonObject(with: har.harData()) as? [String: Any])?["log"] as? [String: Any])
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == 1_000 && (log["_droppedEntries"] as? Int) == 600)
        #expect(har.pendingLoad.count == 0 && har.pendingLoad.bytes == 0)
        // Each task's ids rise through the file: entries built out of turn are put back in order.
        let ids = entries.compactMap { ($0["request"] as? [String: Any])?["url"] as? String }.compactMap {
            $0.split(separator: "/").dropFirst(4).first.flatMap { UInt64($0) }
        }
        #expect(ids.count == 1_000)
        for task in 0..<8 as Range<UInt64> {
            let mine = ids.filter { $0 / 1_000 == task }
            #expect(mine == mine.sorted(), "task \(task)")
        }
    }
}
