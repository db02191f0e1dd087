#if canImport(CCurl)
    import Foundation
    import GentleNetworking
    import GentleNetworkingTesting
    import Testing

    @Suite("CurlTransport smoke")
    struct CurlSmokeTests {
        @Test("GET and POST round-trip")
        func roundTrip() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/a") { _ in .json(#"{"ok":true}"#) }
            server.route("POST", "/b") { request in .text("got \(request.body.count) \(request.header("Content-Type") ?? "-")") }
            let transport = try CurlTransport()
            let (data, response) = try await transport.data(for: URLRequest(url: server.url("/a")))
            #expect(response.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self) == #"{"ok":true}"#)
            var post = URLRequest(url: server.url("/b"))
            post.httpMethod = "POST"
            post.httpBody = Data("hello".utf8)
            let (body, _) = try await transport.data(for: post)
            #expect(String(decoding: body, as: UTF8.self) == "got 5 -")
        }
    }
#endif
