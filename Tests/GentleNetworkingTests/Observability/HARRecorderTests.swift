import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Reads a HAR file with haralyzer (PyPI), an independent parser, touching every field HAR 1.2
/// requires of a page and an entry, and prints one JSON summary line per entry.
private let haralyzerScript = #"""
    import json, sys
    from haralyzer import HarParser
    with open(sys.argv[1]) as f:
        parser = HarParser(json.load(f))
    assert parser.har_data["version"] == "1.2", parser.har_data["version"]
    assert parser.creator["name"]
    pages = parser.pages
    assert len(pages) == 1
    page = pages[0]
    assert page.startedDateTime and page.title is not None
    out = []
    for entry in page.entries:
        request, response = entry.request, entry.response
        # Through haralyzer's accessors where it has them; every field HAR 1.2 requires present.
        for field in ("method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"):
            getattr(request, field)
        for field in ("status", "statusText", "httpVersion", "headers", "redirectURL", "headersSize", "bodySize",
                      "mimeType", "contentSize"):
            getattr(response, field)
        raw = entry.raw_entry
        for key in ("startedDateTime", "time", "request", "response", "cache", "timings"):
            assert key in raw, key
        assert isinstance(raw["response"]["cookies"], list) and isinstance(raw["request"]["cookies"], list)
        content = entry.raw_entry["response"]["content"]
        assert isinstance(content["size"], int) and isinstance(content["mimeType"], str)
        assert entry.startTime is not None and entry.time >= 0 and entry.pageref == page.page_id
        timings = entry.timings
        assert all(timings[key] >= -1 for key in ("send", "wait", "receive"))
        out.append({
            "method": request.method, "url": request.url, "status": response.status,
            "query": {q["name"]: q["value"] for q in request.queryString},
            "postData": entry.raw_entry["request"].get("postData", {}).get("text"),
            "error": entry.raw_entry.get("_error"), "mimeType": content["mimeType"],
            "timings": {k: timings[k] for k in ("blocked", "dns", "connect", "ssl", "send", "wait", "receive")},
            "time": entry.time, "httpVersion": response.httpVersion,
            "server": entry.raw_entry.get("serverIPAddress"),
        })
    # haralyzer's page analysis reads sizes and times from every entry.
    assert page.page_size >= 0 and len(page.get_requests) == 3 and len(page.post_requests) == 1
    print(json.dumps(out))
    """#

/// The Python with haralyzer: `GENTLE_HAR_PYTHON` (set by `scripts/test`, which installs it),
/// else the virtual environment `scripts/test` makes in `.build/har-venv`.
private func harPython() -> String? {
    if let path = ProcessInfo.processInfo.environment["GENTLE_HAR_PYTHON"], !path.isEmpty { return path }
    let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    let venv = package.appendingPathComponent(".build/har-venv/bin/python3").path
    return FileManager.default.isExecutableFile(atPath: venv) ? venv : nil
}

@Suite("HARRecorder: a HAR 1.2 file of the session, redacted, read back by haralyzer")
struct HARRecorderTests {
    @Test("Requests, a 404 and a refused connection become entries haralyzer reads; no credential is in the file")
    func haralyzerReadsTheFile() async throws {
        let python = try #require(harPython(), "haralyzer is missing: run scripts/test, which installs it")
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/users") { _ in .json(#"[{"id":1,"name":"Ada"}]"#) }
        server.route("POST", "/users") { _ in .json(#"{"id":2}"#).with { $0.status = 201 } }
        server.route("GET", "/missing") { _ in LoopbackResponse(status: 404, body: Data("no such thing".utf8)) }
        let har = HARRecorder(creatorName: "HARRecorderTests")
        let service = HTTPNetworkService(
            transport: try TransportKind.curl.make(), authService: InMemoryAuthService(token: "tok-har-secret"),
            logger: har)
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        struct User: Codable, Sendable { let id: Int }
        let _: [User] = try await service.request(
            to: Endpoint(
                path: "/users", method: .get,
                query: [URLQueryItem(name: "page", value: "2"), URLQueryItem(name: "api_key", value: "key-123456")],
                requiresAuth: true),
            via: environment)
        let _: User = try await service.request(
            to: Endpoint(
                path: "/users", method: .post,
                body: ["name": EndpointAnyEncodable("Bob"), "password": EndpointAnyEncodable("pw-654321")],
                requiresAuth: true),
            via: environment)
        await #expect(throws: NetworkError.self) {
            let _: User = try await service.request(to: Endpoint(path: "/missing", method: .get), via: environment)
        }
        let refusing = try RefusingPort()
        let refused = DefaultAPIEnvironment(baseURL: refusing.baseURL)
        await #expect(throws: NetworkError.self) {
            let _: User = try await service.request(to: Endpoint(path: "/down", method: .get), via: refused)
        }
        #expect(har.entryCount == 4)

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("session-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try har.write(to: file)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let text = try String(contentsOf: file, encoding: .utf8)
        for secret in ["tok-har-secret", "key-123456", "pw-654321"] {
            #expect(!text.contains(secret), "\(secret) is in the HAR file")
        }

        let script = FileManager.default.temporaryDirectory.appendingPathComponent("read-har-\(UUID().uuidString).py")
        defer { try? FileManager.default.removeItem(at: script) }
        try Data(haralyzerScript.utf8).write(to: script)
        let (status, output) = try runInShell("'\(python)' '\(script.path)' '\(file.path)'")
        #expect(status == 0, "\(output)")
        let entries = try #require(
            try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]], "\(output)")
        #expect(entries.map { $0["method"] as? String } == ["GET", "POST", "GET", "GET"])
        #expect(entries.map { $0["status"] as? Int } == [200, 201, 404, 0])
        let query = try #require(entries.first?["query"] as? [String: String])
        #expect(query["page"] == "2" && query["api_key"] == "<redacted>", "\(query)")
        let posted = try #require(entries[1]["postData"] as? String)
        #expect(posted.contains("Bob") && posted.contains("<redacted>"), "\(posted)")
        #expect((entries[0]["mimeType"] as? String)?.hasPrefix("application/json") == true)
        #expect(entries[2]["error"] is NSNull || entries[2]["error"] == nil)
        #expect((entries[3]["error"] as? String)?.isEmpty == false, "the refused connection's error")
        #expect((entries[3]["url"] as? String)?.hasSuffix("/down") == true)
        // Timings from the metrics: the first request opened the connection, the second reused it;
        // the phases add up to the entry's time, as HAR 1.2 requires.
        for (index, entry) in entries.prefix(3).enumerated() {
            let timings = try #require(entry["timings"] as? [String: Double], "\(entry)")
            let time = try #require(entry["time"] as? Double)
            let sum = ["blocked", "dns", "connect", "send", "wait", "receive"].compactMap { timings[$0] }.filter {
                $0 >= 0
            }.reduce(0, +)
            #expect(abs(sum - time) < 0.01, "entry \(index): \(timings) vs \(time)")
            #expect(entry["httpVersion"] as? String == "HTTP/1.1" && entry["server"] as? String == "127.0.0.1")
            #expect((timings["wait"] ?? -1) >= 0 && timings["ssl"] == -1, "\(timings)")
        }
        let firstTimings = try #require(entries[0]["timings"] as? [String: Double])
        let secondTimings = try #require(entries[1]["timings"] as? [String: Double])
        #expect((firstTimings["connect"] ?? -1) >= 0 && secondTimings["connect"] == -1)
        withExtendedLifetime(refusing) {}
    }

    @Test(
        "A Location that hands out a token is redacted in the log records and in the HAR file",
        arguments: TransportKind.all)
    func locationToken(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        // An OAuth-style answer: a redirect to the app's own scheme (not followed) with the
        // token in the query and the fragment.
        server.route("GET", "/authorize") { _ in
            .redirect(to: "myapp://callback?state=s1&access_token=TOKEN-IN-QUERY#id_token=TOKEN-IN-FRAGMENT")
        }
        let har = HARRecorder(creatorName: "HARRecorderTests")
        let logger = RecordingLogger()
        let service = HTTPNetworkService(
            transport: try kind.make(),
            logger: ClosureNetworkLogger { record in
                har.log(record)
                logger.log(record)
            })
        await #expect(throws: NetworkError.self) {
            try await service.requestVoid(
                to: Endpoint(path: "/authorize", method: .get), via: DefaultAPIEnvironment(baseURL: server.baseURL))
        }
        #expect(server.requests(path: "/authorize").count == 1)
        let response = try #require(logger.records.last)
        #expect(response.statusCode == 302)
        let location = response.headers.first { $0.key.lowercased() == "location" }?.value
        #expect(location == "myapp://callback?state=s1&access_token=<redacted>", "\(response.headers)")
        let text = String(decoding: har.harData(), as: UTF8.self)
        let file = try #require(try JSONSerialization.jsonObject(with: har.harData()) as? [String: Any])
        let entries = try #require((file["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let redirectURL = (entries.first?["response"] as? [String: Any])?["redirectURL"] as? String
        #expect(redirectURL == "myapp://callback?state=s1&access_token=<redacted>", "\(text)")
        for secret in ["TOKEN-IN-QUERY", "TOKEN-IN-FRAGMENT"] {
            #expect(!text.contains(secret), "\(secret) is in the HAR file")
            #expect(!logger.records.map { "\($0.headers)" }.joined().contains(secret), "\(secret) was logged")
        }
    }

    @Test(
        "A chunked text body: the entry's content.size is the body's size, the text its escaped excerpt",
        arguments: TransportKind.all)
    func chunkedBodySize(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let body = String(repeating: "line\r\n\u{1B}[0m", count: 300)  // 3,000 bytes
        server.route("GET", "/text") { _ in
            LoopbackResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Data(body.utf8)).with {
                $0.chunked = true
            }
        }
        let har = HARRecorder(creatorName: "HARRecorderTests")
        let service = HTTPNetworkService(transport: try kind.make(), logger: har)
        _ = try await service.requestData(
            to: Endpoint(path: "/text", method: .get), via: DefaultAPIEnvironment(baseURL: server.baseURL))
        let file = try #require(try JSONSerialization.jsonObject(with: har.harData()) as? [String: Any])
        let entries = try #require((file["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let content = try #require((entries.first?["response"] as? [String: Any])?["content"] as? [String: Any])
        #expect(content["size"] as? Int == 3000, "\(content["size"] ?? "nil")")
        let text = try #require(content["text"] as? String)
        #expect(text.hasPrefix(#"line\r\n\u001B[0m"#), "\(text.prefix(40))")
    }

    @Test("An entry lists the request's steps and takes its protocol and timings from the final exchange")
    func stepsAndTimings() throws {
        let har = HARRecorder()
        let final = TransactionMetrics(
            method: "GET", url: "https://h.example/b", statusCode: 200, hop: 1, fetchStart: Date(),
            domainLookupEnd: 0.001, connectEnd: 0.003, secureConnectionEnd: 0.010, requestStart: 0.011,
            responseStart: 0.030, responseEnd: 0.032, networkProtocol: "h2", remoteAddress: "192.0.2.1",
            remotePort: 8443, source: .libcurl)
        let metrics = RequestMetrics(
            start: Date(), duration: 0.050, transactions: [final],
            steps: [.redirected(statusCode: 302, to: "https://h.example/b", credentialsStripped: false)])
        har.log(NetworkLogRecord(event: .request, method: "GET", url: "https://h.example/a", requestID: 9))
        har.log(
            NetworkLogRecord(
                event: .redirect, method: "GET", url: "https://h.example/a", requestID: 9, step: metrics.steps[0]))
        har.log(
            NetworkLogRecord(
                event: .response, method: "GET", url: "https://h.example/a", statusCode: 200, duration: 0.050,
                requestID: 9, metrics: metrics))
        let json = try #require(try JSONSerialization.jsonObject(with: har.harData()) as? [String: Any])
        let entries = try #require((json["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        #expect(entries.count == 1)
        let entry = entries[0]
        #expect(entry["_steps"] as? [String] == ["redirected 302 to https://h.example/b"])
        #expect(entry["serverIPAddress"] as? String == "192.0.2.1" && entry["connection"] as? String == "8443")
        #expect((entry["response"] as? [String: Any])?["httpVersion"] as? String == "HTTP/2")
        let timings = try #require(entry["timings"] as? [String: Double])
        func near(_ key: String, _ value: Double) -> Bool { abs((timings[key] ?? -99) - value) < 0.0001 }
        #expect(near("dns", 1) && near("connect", 9) && near("ssl", 7) && near("send", 0), "\(timings)")
        #expect(near("wait", 19) && near("receive", 2) && near("blocked", 19), "\(timings)")
    }

    @Test("Entries are bounded: past maxEntries they are counted, not kept; reset forgets them")
    func bounded() throws {
        let har = HARRecorder(maxEntries: 2)
        for id in 1...5 as ClosedRange<UInt64> {
            har.log(NetworkLogRecord(event: .request, method: "GET", url: "http://h.example/\(id)", requestID: id))
            har.log(
                NetworkLogRecord(
                    event: .response, method: "GET", url: "http://h.example/\(id)", statusCode: 200, duration: 0.01,
                    requestID: id))
        }
        #expect(har.entryCount == 2)
        let json = try #require(try JSONSerialization.jsonObject(with: har.harData()) as? [String: Any])
        let log = try #require(json["log"] as? [String: Any])
        #expect(log["_droppedEntries"] as? Int == 3)
        #expect((log["entries"] as? [Any])?.count == 2)
        har.reset()
        #expect(har.entryCount == 0)
    }

    @Test("Every record of one request carries the same requestID; different requests differ")
    func requestIDs() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/a") { _ in .json("{}") }
        let records = Locked<[NetworkLogRecord]>([])
        let service = HTTPNetworkService(
            transport: try TransportKind.curl.make(), authService: InMemoryAuthService(),
            logger: ClosureNetworkLogger { record in records.withLock { $0.append(record) } })
        let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
        for _ in 0..<2 { _ = try await service.requestData(to: Endpoint(path: "/a", method: .get), via: environment) }
        let seen = records.current
        #expect(seen.map(\.event) == [.request, .response, .request, .response])
        #expect(seen[0].requestID == seen[1].requestID && seen[2].requestID == seen[3].requestID)
        #expect(seen[0].requestID != seen[2].requestID && seen[0].requestID != 0)
        #expect(seen[0].timestamp <= seen[1].timestamp)
    }
}

@Suite("HARRecorder: outcomes logged at once are kept in the order they arrived")
struct HARRecorderOrderTests {
    /// Logs a request to `har` and its outcome on another thread, an outcome whose 400 escaped
    /// headers take far longer to write than a plain one; returns once that outcome has taken
    /// its request (its place in the order), with a flag set when its `log` returns.
    private static func logHeavyFirst(to har: HARRecorder) async throws -> Locked<Bool> {
        var heavy: [String: String] = [:]
        for index in 0..<400 { heavy["X-H\(index)"] = String(repeating: "\u{1}", count: 150) }
        har.log(NetworkLogRecord(event: .request, method: "GET", url: "https://h.example/first", requestID: 1))
        let first = NetworkLogRecord(
            event: .response, method: "GET", url: "https://h.example/first", statusCode: 200, headers: heavy,
            requestID: 1)
        let done = Locked(false)
        ThreadName.start("har.first") {
            har.log(first)
            done.withLock { $0 = true }
        }
        while har.pendingLoad.count != 0 { try await Task.sleep(nanoseconds: 100_000) }
        return done
    }

    @Test("With one place left, the first outcome is kept though a later one is built sooner")
    func firstOutcomeKept() async throws {
        for _ in 0..<20 {
            let har = HARRecorder(maxEntries: 1)
            let done = try await Self.logHeavyFirst(to: har)
            har.log(
                NetworkLogRecord(
                    event: .response, method: "GET", url: "https://h.example/second", statusCode: 200, requestID: 2))
            while !done.withLock({ $0 }) { try await Task.sleep(nanoseconds: 1_000_000) }
            let text = String(decoding: har.harData(), as: UTF8.self)
            #expect(text.contains("/first") && !text.contains("/second"), "\(text.prefix(400))")
            #expect(text.contains(#""_droppedEntries":1"#))
        }
    }

    @Test("While an earlier outcome is built, later ones wait within the limits, not beyond them")
    func waitingWithinLimits() async throws {
        let har = HARRecorder(maxEntries: 5)
        let done = try await Self.logHeavyFirst(to: har)
        var most = 0
        for id in 2..<300 {
            har.log(
                NetworkLogRecord(
                    event: .response, method: "GET", url: "https://h.example/\(id)", statusCode: 200,
                    requestID: UInt64(id)))
            most = max(most, har.builtLoad.count)
        }
        while !done.withLock({ $0 }) { try await Task.sleep(nanoseconds: 1_000_000) }
        #expect(most <= 5, "\(most) entries waited for a 5-entry recorder")
        #expect(har.entryCount <= 5 && har.builtLoad.count == 0)
        #expect(String(decoding: har.harData(), as: UTF8.self).contains("/first"))
    }
}

@Suite("HARRecorder.write: the file is the owner's alone from its first byte")
struct HARRecorderFileTests {
    /// A recorder holding one entry with a body, so each write takes long enough to be seen.
    private func recorder() -> HARRecorder {
        let har = HARRecorder()
        har.log(NetworkLogRecord(event: .request, method: "GET", url: "http://h.example/a", requestID: 1))
        har.log(
            NetworkLogRecord(
                event: .response, method: "GET", url: "http://h.example/a", statusCode: 200,
                bodyExcerpt: String(repeating: "x", count: 1000), duration: 0.01, requestID: 1))
        return har
    }

    @Test("While the file is written, no file in its directory is ever open to group or others")
    func neverWiderThanOwner() throws {
        let directory = try makeScratchDirectory("har")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("session.har")
        let har = recorder()
        let watcher = FileModeWatcher(directory: directory)
        for _ in 0..<400 {
            try har.write(to: file)
        }
        let sightings = watcher.stop()
        #expect(sightings.count == 0, "modes seen: \(sightings)")
        #expect(permissionBits(file) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["session.har"])
    }

    @Test("A file already at the path with a wider mode is replaced by one that is the owner's alone")
    func replacesWiderFile() throws {
        let directory = try makeScratchDirectory("har")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("session.har")
        try Data("old".utf8).write(to: file)
        #expect(chmod(file.path, 0o644) == 0)
        try recorder().write(to: file)
        #expect(permissionBits(file) == 0o600)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
        #expect((json?["log"] as? [String: Any])?["entries"] as? [Any] != nil)
    }

    @Test("Writing into a directory that does not exist throws a file error naming the path; nothing is created")
    func missingDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "har-missing-\(UUID().uuidString)")
        let file = directory.appendingPathComponent("session.har")
        #expect {
            try recorder().write(to: file)
        } throws: { error in
            guard let error = error as? CocoaError else { return false }
            return error.code == .fileNoSuchFile && error.filePath == file.path
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }
}
