#if canImport(CCurl)
    import CCurl
    import Foundation
    import GentleNetworkingTesting
    import Testing

    @testable import GentleNetworking

    @Suite("CurlParsedURL: libcurl gets a parsed URL handle, parsed again only when the URL changes")
    struct CurlParsedURLTests {
        @Test("Same URL: reused; another: parsed; a URL libcurl's parser refuses: left to CURLOPT_URL, and forgotten")
        func outcomes() throws {
            let easy = try #require(curl_easy_init())
            defer { curl_easy_cleanup(easy) }
            let parsed = CurlParsedURL()
            #expect(parsed.apply("http://127.0.0.1:8080/a", to: easy) == .parsed)
            #expect(parsed.apply("http://127.0.0.1:8080/a", to: easy) == .reused)
            #expect(parsed.apply("http://127.0.0.1:8080/a?x=1", to: easy) == .parsed)
            #expect(parsed.apply("http://[::1", to: easy) == .leftToLibcurl)
            // After a refused URL the handle holds nothing usable: the next URL is parsed, even
            // the one it held before.
            #expect(parsed.apply("http://127.0.0.1:8080/a?x=1", to: easy) == .parsed)
        }

        @Test(
            "Pooled handles alternating between two servers and many targets: each request reaches its server with its own target"
        )
        func alternatingTargets() async throws {
            let first = try LoopbackServer()
            defer { first.shutdown() }
            let second = try LoopbackServer()
            defer { second.shutdown() }
            for server in [first, second] {
                server.route(nil, prefix: "/") { request in
                    LoopbackResponse(status: 200, body: Data(request.target.utf8))
                }
            }
            let targets = ["/a", "/a?x=1", "/a", "/b/c%20d?q=%E2%9C%93&r", "/a", "/a?x=2", "/", "/a"]
            let transport = try CurlTransport()
            var expected: [(LoopbackServer, String)] = []
            for (index, target) in targets.enumerated() {
                for server in index.isMultiple(of: 2) ? [first, second] : [second, first] {
                    let (data, _) = try await transport.data(for: URLRequest(url: server.url(target)))
                    #expect(String(decoding: data, as: UTF8.self) == target)
                    expected.append((server, target))
                }
            }
            #expect(first.receivedRequests.map(\.target) == expected.filter { $0.0 === first }.map(\.1))
            #expect(second.receivedRequests.map(\.target) == expected.filter { $0.0 === second }.map(\.1))
            let hosts = Set(first.receivedRequests.compactMap { $0.header("Host") })
            #expect(hosts == [first.baseURL.host.map { "\($0):\(first.baseURL.port ?? 0)" } ?? ""])
        }
    }
#endif
