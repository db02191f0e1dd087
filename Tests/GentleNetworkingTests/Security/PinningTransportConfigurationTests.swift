import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `PinningTransport(pinnedDomains:configuration:)` against the loopback server: a host that is
/// not pinned, over plain HTTP, so only the configuration is under test.
@Suite("PinningTransport configuration")
struct PinningTransportConfigurationTests {
    let pins: [String: any ServerTrustEvaluator] = [
        "pinned.example": PublicKeyPinningEvaluator(pinnedKeyHashes: [Data(repeating: 1, count: 32)])
    ]

    @Test("httpAdditionalHeaders reach the server; a header the request sets wins")
    func additionalHeaders() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/h") { _ in .text("ok") }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = ["X-Client": "gentle", "X-Mode": "default"]
        let transport = PinningTransport(pinnedDomains: pins, configuration: configuration)
        var request = URLRequest(url: server.url("/h"))
        request.setValue("mine", forHTTPHeaderField: "X-Mode")
        let (_, response) = try await transport.data(for: request)
        #expect(response.statusCode == 200)
        let received = try #require(server.requests(path: "/h").first)
        #expect(received.header("X-Client") == "gentle")
        #expect(received.header("X-Mode") == "mine")
    }

    @Test("timeoutIntervalForRequest applies to a request that keeps the default timeout")
    func requestTimeout() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/slow") { _ in
            var response = LoopbackResponse.text("late")
            response.delayBeforeHeaders = 45
            return response
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 0.5
        let transport = PinningTransport(pinnedDomains: pins, configuration: configuration)
        // The server answers after 45 s, within the default 60 s: only the configured 0.5 s
        // makes this a timeout (no wall-clock bound, which a loaded machine would break).
        await #expect {
            _ = try await transport.data(for: URLRequest(url: server.url("/slow")))
        } throws: { error in
            (error as? TransportError)?.code == .timedOut || (error as? URLError)?.code == .timedOut
        }
    }

    @Test("PinningTransport(pinnedDomains:) still works with the default configuration")
    func defaultConfiguration() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/d") { _ in .text("ok") }
        let (data, _) = try await PinningTransport(pinnedDomains: pins).data(for: URLRequest(url: server.url("/d")))
        #expect(String(decoding: data, as: UTF8.self) == "ok")
    }
}
