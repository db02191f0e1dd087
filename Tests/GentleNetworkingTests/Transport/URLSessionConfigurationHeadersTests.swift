import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if !canImport(Darwin)
    /// A session whose configuration carries headers (`httpAdditionalHeaders`, a common way to
    /// set an API key once): on Linux, corelibs added them to every redirect hop and to libcurl
    /// unchecked. `URLSessionTransport` now puts them on each request, where they are validated
    /// and dropped on a hop to another origin like the request's own.
    @Suite("URLSessionTransport: a configuration's headers are validated and stay at their origin")
    struct URLSessionConfigurationHeadersTests {
        private func session(headers: [String: String]) -> URLSession {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpAdditionalHeaders = headers
            return URLSession(configuration: configuration)
        }

        @Test("A redirect to another origin carries none of the configuration's credentials; the first hop has them")
        func redirectToAnotherOrigin() async throws {
            let api = try LoopbackServer()
            defer { api.shutdown() }
            let other = try LoopbackServer()
            defer { other.shutdown() }
            let elsewhere = other.url("/x").absoluteString
            api.route("GET", "/go") { _ in LoopbackResponse(status: 302, headers: [("Location", elsewhere)]) }
            other.route("GET", "/x") { _ in .text("there") }
            let configured = session(headers: [
                "Authorization": "Bearer s3cret", "X-API-Key": "k3y", "X-Client": "app/1",
            ])
            let transport = URLSessionTransport(session: configured)
            let (body, response) = try await transport.data(for: URLRequest(url: api.url("/go")))
            #expect(response.statusCode == 200 && body == Data("there".utf8))
            let first = try #require(api.requests(path: "/go").first)
            #expect(first.header("Authorization") == "Bearer s3cret" && first.header("X-API-Key") == "k3y")
            let hop = try #require(other.requests(path: "/x").first)
            #expect(hop.header("Authorization") == nil, "\(hop.headers)")
            #expect(hop.header("X-API-Key") == nil, "\(hop.headers)")
            #expect(hop.header("X-Client") == "app/1")
            // The caller's session is unchanged.
            #expect(configured.configuration.httpAdditionalHeaders?["Authorization"] as? String == "Bearer s3cret")
        }

        @Test("A configuration header with CR/LF is .invalidRequest naming it; nothing is sent")
        func injectedLine() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/a") { _ in .text("ok") }
            let transport = URLSessionTransport(session: session(headers: ["X-Client": "app\r\nX-Evil: 1"]))
            do {
                _ = try await transport.data(for: URLRequest(url: server.url("/a")))
                Issue.record("the request was sent")
            } catch let error as TransportError {
                #expect(error.code == .invalidRequest)
                #expect(error.message.contains("X-Client") && !error.message.contains("Evil"), "\(error.message)")
            }
            #expect(server.receivedRequests.isEmpty)
        }

        @Test("A request's own value wins over the configuration's")
        func requestWins() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/a") { _ in .text("ok") }
            let transport = URLSessionTransport(session: session(headers: ["X-Client": "config"]))
            var request = URLRequest(url: server.url("/a"))
            request.setValue("request", forHTTPHeaderField: "X-Client")
            _ = try await transport.data(for: request)
            #expect(server.receivedRequests.map { $0.header("X-Client") } == ["request"])
        }
    }
#endif
