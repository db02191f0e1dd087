import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

/// TLS verification is on by default for every way of building a client: a self-signed server
/// is a typed TLS failure, and nginx's access log proves it saw no request. There is no switch
/// that turns verification off; pinning evaluators with nothing pinned cannot either.
@Suite("TLS verification is on by default everywhere", .serialized)
struct TLSVerificationDefaultTests {
    /// nginx with a self-signed certificate for localhost.
    struct SelfSigned: Sendable {
        let pki: TestPKI
        let nginx: NginxServer

        init() async throws {
            pki = try await TestPKI.make()
            let key = pki.directory.appendingPathComponent("foreign.key").path
            nginx = try NginxServer(
                files: ["x.json": Data(#"{"id":1,"property":"x"}"#.utf8)],
                tls: NginxServer.TLS(certificatePath: pki.foreignPath, keyPath: key), serverName: "localhost")
        }

        var url: URL { nginx.url("/x.json") }

        func stop() {
            nginx.stop()
            try? FileManager.default.removeItem(at: pki.directory.deletingLastPathComponent())
        }

        /// The request fails with `.tlsFailure` and nginx logged nothing.
        func expectRefused(
            _ name: String, _ transport: any HTTPTransportProtocol, sourceLocation: SourceLocation = #_sourceLocation
        ) async {
            let error = await failure(of: URLRequest(url: url), on: transport, sourceLocation: sourceLocation)
            #expect(
                error.map(transportCode) == .tlsFailure, "\(name): \(String(describing: error))",
                sourceLocation: sourceLocation)
            #expect(
                await nginx.accessLog(atLeast: 1, timeout: 0.3).isEmpty, "\(name): \(nginx.accessLog)",
                sourceLocation: sourceLocation)
        }
    }

    @Test("CurlTransport, URLSessionTransport, DefaultTransport and an unpinned host of PinningTransport refuse")
    func transports() async throws {
        let server = try await SelfSigned()
        defer { server.stop() }
        #if canImport(CCurl)
            await server.expectRefused("CurlTransport()", try CurlTransport())
        #endif
        await server.expectRefused("URLSessionTransport()", URLSessionTransport())
        await server.expectRefused("DefaultTransport.make()", DefaultTransport.make())
        await server.expectRefused("PinningTransport, nothing pinned", PinningTransport(pinnedDomains: [:]))
        let otherHostPinned = PinningTransport(pinnedDomains: [
            "api.example.com": PublicKeyPinningEvaluator(pinnedKeyHashes: [Data(repeating: 1, count: 32)])
        ])
        await server.expectRefused("PinningTransport, another host pinned", otherHostPinned)
    }

    @Test("HTTPNetworkService's default transport refuses, with a typed NetworkError")
    func serviceDefault() async throws {
        let server = try await SelfSigned()
        defer { server.stop() }
        let service = HTTPNetworkService(authService: InMemoryAuthService(token: "tls-secret"))
        await #expect {
            try await service.requestVoid(
                to: Endpoint(path: "/x.json", method: .get, requiresAuth: true),
                via: DefaultAPIEnvironment(baseURL: server.nginx.baseURL))
        } throws: { error in
            (error as? NetworkError)?.kind == .transport(.tlsFailure)
        }
        #expect(await server.nginx.accessLog(atLeast: 1, timeout: 0.3).isEmpty, "\(server.nginx.accessLog)")
    }

    @Test("An evaluator with nothing pinned and performDefaultValidation: false still verifies")
    func noPinsCannotDisableVerification() async throws {
        let server = try await SelfSigned()
        defer { server.stop() }
        struct NoRequirements: ServerTrustEvaluator {
            var requirements: ServerTrustRequirements { ServerTrustRequirements(performDefaultValidation: false) }
        }
        let evaluators: [(String, any ServerTrustEvaluator)] = [
            (
                "PublicKeyPinningEvaluator([])",
                PublicKeyPinningEvaluator(pinnedKeyHashes: [], performDefaultValidation: false)
            ),
            (
                "CertificatePinningEvaluator([])",
                CertificatePinningEvaluator(pinnedCertificates: [], performDefaultValidation: false)
            ),
            ("a custom evaluator", NoRequirements()),
        ]
        for (name, evaluator) in evaluators {
            await server.expectRefused(name, PinningTransport(pinnedDomains: ["localhost": evaluator]))
        }
    }
}
