#if canImport(CCurl)
    import Foundation
    import FoundationNetworking
    @testable import GentleNetworking
    import GentleNetworkingTesting
    import Testing

    @Suite("CurlResponseCache: a response is reused only for the same URL and the same head, byte for byte")
    struct CurlResponseCacheTests {
        private func head(status: Int = 200, version: String = "HTTP/1.1", _ lines: [String]) -> CurlResponseHead {
            var head = CurlResponseHead()
            head.statusCode = status
            head.httpVersion = version
            for line in lines {
                Array(line.utf8).withUnsafeBytes { head.appendFieldLine($0) }
            }
            return head
        }

        private let url = URL(string: "https://api.example.com/v1/me")!

        /// Builds through `cache`, counting the builds.
        private func response(
            _ cache: CurlResponseCache, url: URL, _ head: CurlResponseHead, builds: Locked<Int>
        ) throws -> HTTPURLResponse {
            try #require(
                cache.response(url: url, head: head) {
                    builds.withLock { $0 += 1 }
                    return HTTPURLResponse(
                        url: url, statusCode: head.statusCode, httpVersion: head.httpVersion,
                        headerFields: DeferredResponse.merged(head.headers))
                })
        }

        @Test("The same URL and head: the response built the first time, no second build")
        func reuse() throws {
            let cache = CurlResponseCache(capacity: 4)
            let builds = Locked(0)
            let fields = ["Content-Type: application/json", "ETag: \"v1\"", "Date: Thu, 03 Dec 2026 16:00:00 GMT"]
            let first = try response(cache, url: url, head(fields), builds: builds)
            let second = try response(cache, url: url, head(fields), builds: builds)
            #expect(first === second)
            #expect(builds.current == 1)
            #expect(second.value(forHTTPHeaderField: "etag") == "\"v1\"")
        }

        @Test(
            "Any difference builds anew: a field's value, its spelling, one field more, the status, the version, the URL",
            arguments: [
                ("value", 200, "HTTP/1.1", ["Content-Type: application/json", "ETag: \"v2\""], false),
                ("spelling", 200, "HTTP/1.1", ["content-type: application/json", "ETag: \"v1\""], false),
                (
                    "extra field", 200, "HTTP/1.1",
                    ["Content-Type: application/json", "ETag: \"v1\"", "Set-Cookie: a=b"], false
                ),
                ("order", 200, "HTTP/1.1", ["ETag: \"v1\"", "Content-Type: application/json"], false),
                ("status", 201, "HTTP/1.1", ["Content-Type: application/json", "ETag: \"v1\""], false),
                ("version", 200, "HTTP/2", ["Content-Type: application/json", "ETag: \"v1\""], false),
                ("url", 200, "HTTP/1.1", ["Content-Type: application/json", "ETag: \"v1\""], true),
            ])
        func differences(name: String, status: Int, version: String, lines: [String], otherURL: Bool) throws {
            let cache = CurlResponseCache(capacity: 4)
            let builds = Locked(0)
            let first = try response(
                cache, url: url, head(["Content-Type: application/json", "ETag: \"v1\""]), builds: builds)
            let otherURL = otherURL ? URL(string: "https://api.example.com/v1/me?page=2")! : url
            let second = try response(
                cache, url: otherURL, head(status: status, version: version, lines), builds: builds)
            #expect(first !== second, "\(name)")
            #expect(builds.current == 2, "\(name)")
            #expect(second.statusCode == status)
            #expect(second.url == otherURL)
        }

        @Test("A head over 4 KiB of fields is built every time and never kept; the cache holds at most its capacity")
        func bounds() throws {
            let cache = CurlResponseCache(capacity: 3)
            let builds = Locked(0)
            let flood = (0..<200).map { "X-Flood-\($0): \(String(repeating: "v", count: 20))" }
            let big = head(flood)
            #expect(big.fieldBytes > CurlResponseCache.maxFieldBytes)
            let first = try response(cache, url: url, big, builds: builds)
            let second = try response(cache, url: url, big, builds: builds)
            #expect(first !== second)
            #expect(builds.current == 2)
            #expect(cache.count == 0)
            for index in 0..<10 {
                _ = try response(cache, url: url, head(["X-Index: \(index)"]), builds: builds)
            }
            #expect(cache.count == 3)
            // The newest three are kept: the last one is reused, the first one is built again.
            _ = try response(cache, url: url, head(["X-Index: 9"]), builds: builds)
            #expect(builds.current == 12)
            _ = try response(cache, url: url, head(["X-Index: 0"]), builds: builds)
            #expect(builds.current == 13)
        }

        @Test("On the wire: a field that changes per response is never served stale; a repeated head is reused")
        func wire() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let counter = Locked(0)
            server.route("GET", "/count") { _ in
                let count = counter.withLock { count -> Int in
                    count += 1
                    return count
                }
                return LoopbackResponse(
                    status: 200, headers: [("X-Count", "\(count)"), ("Content-Type", "application/json")],
                    body: Data(#"{"count":\#(count)}"#.utf8))
            }
            server.route("GET", "/same") { _ in
                LoopbackResponse(
                    status: 200, headers: [("ETag", "\"same\""), ("Content-Type", "application/json")],
                    body: Data("{}".utf8))
            }
            let transport = try CurlTransport()
            for expected in 1...5 {
                let (_, response) = try await transport.data(for: URLRequest(url: server.url("/count")))
                #expect(response.value(forHTTPHeaderField: "X-Count") == "\(expected)")
            }
            // The deferred path (HTTPNetworkService's) builds through the same cache.
            let (_, deferred) = try await transport.deferredData(for: URLRequest(url: server.url("/count")))
            #expect(try deferred.response().value(forHTTPHeaderField: "X-Count") == "6")
            #expect(try deferred.response().url == server.url("/count"))

            // Other suites build responses meanwhile and may replace the entry: a pair of
            // back-to-back requests sharing one response shows the reuse.
            var reused = false
            for _ in 0..<20 where !reused {
                let (_, first) = try await transport.data(for: URLRequest(url: server.url("/same")))
                let (_, second) = try await transport.data(for: URLRequest(url: server.url("/same")))
                #expect(second.value(forHTTPHeaderField: "ETag") == "\"same\"")
                reused = first === second
            }
            #expect(reused)
            let (_, elsewhere) = try await transport.data(for: URLRequest(url: server.url("/same?other")))
            #expect(elsewhere.url == server.url("/same?other"))
        }
    }
#endif
