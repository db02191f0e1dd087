#if canImport(CCurl)
    import CCurl
    import Foundation
    import GentleNetworkingTesting
    import Testing

    @testable import GentleNetworking

    /// `CurlTransport` sends libcurl's own `Accept-Encoding` line as one of its header lines, so
    /// libcurl does not format it per request; the bytes on the wire must be libcurl's.
    @Suite("CurlTransport's Accept-Encoding: libcurl's line, sent without libcurl formatting it")
    struct CurlAcceptEncodingTests {
        @Test("The line sent by default is byte for byte the one libcurl sends for CURLOPT_ACCEPT_ENCODING \"\"")
        func sameAsLibcurl() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route(nil, prefix: "/") { _ in .status(204) }

            // libcurl alone: a bare easy handle asked to offer every coding it decodes.
            let easy = try #require(curl_easy_init())
            defer { curl_easy_cleanup(easy) }
            #expect(gn_easy_setopt_string(easy, CURLOPT_URL, server.url("/raw").absoluteString) == CURLE_OK)
            #expect(gn_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, "") == CURLE_OK)
            #expect(gn_easy_setopt_long(easy, CURLOPT_NOBODY, 1) == CURLE_OK)
            #expect(curl_easy_perform(easy) == CURLE_OK)

            _ = try await CurlTransport().data(for: URLRequest(url: server.url("/ours")))

            let received = server.receivedRequests
            let libcurls = try #require(received.first { $0.path == "/raw" }?.header("Accept-Encoding"))
            let ours = try #require(received.first { $0.path == "/ours" }?.header("Accept-Encoding"))
            #expect(ours == libcurls)
            #expect(CurlEasyRequest.acceptEncodingLine == "Accept-Encoding: " + libcurls)
            // Sent once, not also by libcurl.
            let lines = received.first { $0.path == "/ours" }?.headers.filter {
                $0.name.lowercased() == "accept-encoding"
            }
            #expect(lines?.count == 1)
        }

        @Test("A caller's Accept-Encoding replaces it, alone on the wire")
        func callersOwn() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route(nil, prefix: "/") { _ in .status(204) }
            var request = URLRequest(url: server.url("/identity"))
            request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            _ = try await CurlTransport().data(for: request)
            let seen = try #require(server.receivedRequests.first)
            #expect(seen.headers.filter { $0.name.lowercased() == "accept-encoding" }.map(\.value) == ["identity"])
        }
    }
#endif
