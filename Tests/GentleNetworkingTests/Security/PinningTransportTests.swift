import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@Suite("Pin hashes")
struct CertificatePinningTests {
    @Test("Our key hash equals openssl's x509 -pubkey | pkey -outform der | dgst -sha256")
    func matchesOpenSSL() async throws {
        let pki = try await TestPKI.make()
        defer { try? FileManager.default.removeItem(at: pki.directory.deletingLastPathComponent()) }
        for path in [pki.leafPath, pki.caPath, pki.foreignPath] {
            let ours = try CertificatePinning.publicKeyHash(ofCertificatePEM: try pki.pem(path)).base64EncodedString()
            #expect(ours == (try pki.opensslKeyHash(of: path)))
        }
        let der = try #require(try CertificatePinning.certificatesDER(fromPEM: try pki.pem(pki.chainPath)).first)
        #expect(
            try CertificatePinning.publicKeyHash(ofCertificateDER: der)
                == (try CertificatePinning.publicKeyHash(ofCertificatePEM: try pki.pem(pki.leafPath))))
        #expect(try CertificatePinning.certificatesDER(fromPEM: try pki.pem(pki.chainPath)).count == 2)
        #expect(CertificatePinning.pem(fromDER: [der]).hasPrefix("-----BEGIN CERTIFICATE-----\n"))
    }

    @Test("Garbage is a typed error, never a crash")
    func garbage() {
        #expect(throws: CertificatePinning.Failure.invalidPEM) {
            try CertificatePinning.publicKeyHash(ofCertificatePEM: "nope")
        }
        #expect(throws: CertificatePinning.Failure.self) {
            try CertificatePinning.publicKeyHash(ofCertificateDER: Data([0x30, 0x82, 0xFF, 0xFF, 0x01]))
        }
        #expect(throws: CertificatePinning.Failure.self) {
            try CertificatePinning.publicKeyHash(ofCertificateDER: Data())
        }
    }
}

/// PinningTransport against nginx serving a certificate chain made by `TestPKI`. For every
/// failure, nginx's access log proves that no request reached it.
@Suite("PinningTransport against nginx with TLS", .serialized)
struct PinningTransportTests {
    struct Fixture: Sendable {
        let pki: TestPKI
        let nginx: NginxServer

        init() async throws {
            pki = try await TestPKI.make()
            nginx = try NginxServer(
                files: ["pinned.json": Data(#"{"id":1,"property":"pinned"}"#.utf8)],
                tls: NginxServer.TLS(certificatePath: pki.chainPath, keyPath: pki.leafKeyPath), serverName: "localhost")
        }

        func stop() {
            nginx.stop()
            try? FileManager.default.removeItem(at: pki.directory.deletingLastPathComponent())
        }

        func keyHash(_ path: String) throws -> Data {
            try CertificatePinning.publicKeyHash(ofCertificatePEM: try pki.pem(path))
        }

        func der(_ path: String) throws -> Data {
            try #require(try CertificatePinning.certificatesDER(fromPEM: try pki.pem(path)).first)
        }

        func get(_ transport: PinningTransport, host: String = "localhost") async throws -> Model {
            let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
            return try await service.request(
                to: Endpoint(path: "/pinned.json", method: .get),
                via: DefaultAPIEnvironment(baseURL: URL(string: "https://\(host):\(nginx.port)")))
        }

        /// Expects the request to fail with `code`, and nginx to have logged no request.
        /// With `trustError`, also expects the transport error's underlying ``ServerTrustError``.
        func expectRejected(
            _ transport: PinningTransport, host: String = "localhost", _ code: TransportError.Code,
            trustError: ServerTrustError? = nil
        )
            async
        {
            await #expect {
                _ = try await get(transport, host: host)
            } throws: { error in
                guard let error = error as? NetworkError, error.kind == .transport(code) else { return false }
                guard let trustError else { return true }
                return (error.underlyingError as? TransportError)?.underlyingError as? ServerTrustError == trustError
            }
            #expect(
                await nginx.accessLog(atLeast: 1, timeout: 0.3).isEmpty,
                "no request byte reached nginx: \(nginx.accessLog)")
        }
    }

    @Test("A matching key pin connects")
    func matchingKeyPin() async throws {
        let fixture = try await Fixture()
        defer { fixture.stop() }
        let transport = PinningTransport(pinnedDomains: [
            "localhost": PublicKeyPinningEvaluator(
                pinnedKeyHashes: [
                    try fixture.keyHash(fixture.pki.foreignPath), try fixture.keyHash(fixture.pki.leafPath),
                ],
                performDefaultValidation: false)
        ])
        #expect(try await fixture.get(transport).property == "pinned")
        #expect(await fixture.nginx.accessLog(atLeast: 1).count == 1)
    }

    @Test("A foreign key pin aborts the handshake")
    func foreignKeyPin() async throws {
        let fixture = try await Fixture()
        defer { fixture.stop() }
        let transport = PinningTransport(pinnedDomains: [
            "localhost": PublicKeyPinningEvaluator(
                pinnedKeyHashes: [try fixture.keyHash(fixture.pki.foreignPath)], performDefaultValidation: false)
        ])
        await fixture.expectRejected(transport, .pinMismatch, trustError: .certificatePinningFailed(host: "localhost"))
    }

    @Test(
        "An IPv6 host matches its pins in any spelling: `::1` pins apply to `[0::1]` and `[::0001]`, and a domain pinned as `[::1]` applies"
    )
    func ipv6Spellings() async throws {
        let pki = try await TestPKI.make()
        defer { try? FileManager.default.removeItem(at: pki.directory.deletingLastPathComponent()) }
        let nginx = try NginxServer(
            files: ["pinned.json": Data(#"{"id":1,"property":"pinned"}"#.utf8)],
            tls: NginxServer.TLS(certificatePath: pki.chainPath, keyPath: pki.leafKeyPath), serverName: "localhost",
            alsoIPv6: true)
        defer { nginx.stop() }
        let foreign = try CertificatePinning.publicKeyHash(ofCertificatePEM: try pki.pem(pki.foreignPath))
        let leaf = try CertificatePinning.publicKeyHash(ofCertificatePEM: try pki.pem(pki.leafPath))
        func get(_ transport: PinningTransport, _ host: String) async throws -> Data {
            var request = URLRequest(url: try #require(URL(string: "https://\(host):\(nginx.port)/pinned.json")))
            request.timeoutInterval = 10
            return try await transport.data(for: request).0
        }
        // Pinned to a foreign key: every spelling of the address must meet the pin (before, the
        // others got default validation only, here a .tlsFailure for the private CA).
        let foreignPinned = PinningTransport(pinnedDomains: [
            "::1": PublicKeyPinningEvaluator(pinnedKeyHashes: [foreign], performDefaultValidation: false)
        ])
        for host in ["[::1]", "[0::1]", "[::0001]", "[0:0:0:0:0:0:0:1]"] {
            await #expect(throws: TransportError.self, "\(host)") {
                do { _ = try await get(foreignPinned, host) } catch let error as TransportError {
                    #expect(error.code == .pinMismatch, "\(host): \(error)")
                    throw error
                }
            }
        }
        // Pinned as a URL writes it, with brackets, to the served key: it applies.
        let bracketed = PinningTransport(pinnedDomains: [
            "[0::1]": PublicKeyPinningEvaluator(pinnedKeyHashes: [leaf], performDefaultValidation: false)
        ])
        #expect(try await get(bracketed, "[::1]").count > 0)
        #expect(await nginx.accessLog(atLeast: 1).count == 1, "only the pinned request reached nginx")
    }

    @Test("A pinned host is never reached over plain http: the request, or a redirect's hop to it, is .invalidRequest")
    func pinnedHostOverPlainHTTP() async throws {
        let pinnedServer = try LoopbackServer()
        defer { pinnedServer.shutdown() }
        pinnedServer.route(nil, "/x") { _ in .json(#"{"ok":true}"#) }
        let transport = PinningTransport(pinnedDomains: [
            "localhost": PublicKeyPinningEvaluator(
                pinnedKeyHashes: [Data(repeating: 7, count: 32)], performDefaultValidation: false)
        ])
        var request = URLRequest(url: try #require(URL(string: "http://LocalHost:\(pinnedServer.port)/x")))
        request.setValue("Bearer plain-SEKRIT", forHTTPHeaderField: "Authorization")
        await #expect {
            _ = try await transport.data(for: request)
        } throws: { error in
            (error as? TransportError)?.code == .invalidRequest
                && (error as? TransportError)?.message.contains("pinned") == true
        }
        // A redirect from an unpinned host to the pinned one over http (Linux checks each hop).
        #if canImport(CCurl)
            let unpinned = try LoopbackServer()
            defer { unpinned.shutdown() }
            unpinned.route(nil, "/start") { _ in .redirect(to: "http://localhost:\(pinnedServer.port)/x") }
            var start = URLRequest(url: unpinned.url("/start"))
            start.setValue("Bearer plain-SEKRIT", forHTTPHeaderField: "Authorization")
            await #expect {
                _ = try await transport.data(for: start)
            } throws: { error in
                (error as? TransportError)?.code == .invalidRequest
            }
            #expect(unpinned.receivedRequests.count == 1)
        #endif
        #expect(pinnedServer.acceptedConnectionCount == 0, "nothing reached the pinned host")
    }

    @Test(
        "A pin that could never match (a hash not 32 bytes, PEM text as DER, one garbage certificate among good ones) is .invalidRequest before connecting"
    )
    func malformedPins() async throws {
        let pki = try await TestPKI.make()
        defer { try? FileManager.default.removeItem(at: pki.directory.deletingLastPathComponent()) }
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let leafPEM = try pki.pem(pki.leafPath)
        let leafDER = try #require(try CertificatePinning.certificatesDER(fromPEM: leafPEM).first)
        let base64Hash = try CertificatePinning.publicKeyHash(ofCertificatePEM: leafPEM).base64EncodedString()
        let evaluators: [(String, any ServerTrustEvaluator)] = [
            ("hash as text", PublicKeyPinningEvaluator(pinnedKeyHashes: [Data(base64Hash.utf8)])),
            ("empty hash", PublicKeyPinningEvaluator(pinnedKeyHashes: [Data()], performDefaultValidation: false)),
            ("PEM as DER", CertificatePinningEvaluator(pinnedCertificates: [Data(leafPEM.utf8)])),
            (
                "garbage beside a good one",
                CertificatePinningEvaluator(
                    pinnedCertificates: [leafDER, Data([0x30, 0x03, 0x02, 0x01, 0x00])], performDefaultValidation: false
                )
            ),
        ]
        for (what, evaluator) in evaluators {
            let transport = PinningTransport(pinnedDomains: ["localhost": evaluator])
            var request = URLRequest(url: try #require(URL(string: "https://localhost:\(server.port)/x")))
            request.timeoutInterval = 10
            await #expect {
                _ = try await transport.data(for: request)
            } throws: { error in
                let error = error as? TransportError
                return error?.code == .invalidRequest && error?.message.contains("localhost") == true
            }
            #expect(server.acceptedConnectionCount == 0, "\(what): a connection was opened")
        }
    }

    @Test(
        "The ServerTrustError names the host whose pin failed (a redirect's hop), and a handshake that is not TLS carries none"
    )
    func trustErrorDetails() async throws {
        let pki = try await TestPKI.make()
        defer { try? FileManager.default.removeItem(at: pki.directory.deletingLastPathComponent()) }
        let nginx = try NginxServer(
            files: ["pinned.json": Data(#"{"id":1}"#.utf8)],
            tls: NginxServer.TLS(certificatePath: pki.chainPath, keyPath: pki.leafKeyPath), serverName: "localhost",
            extraServerConfig: "location = /hop { return 302 https://127.0.0.1:$server_port/pinned.json; }")
        defer { nginx.stop() }
        let leaf = try CertificatePinning.publicKeyHash(ofCertificatePEM: try pki.pem(pki.leafPath))
        let foreign = try CertificatePinning.publicKeyHash(ofCertificatePEM: try pki.pem(pki.foreignPath))
        let transport = PinningTransport(pinnedDomains: [
            "localhost": PublicKeyPinningEvaluator(pinnedKeyHashes: [leaf], performDefaultValidation: false),
            "127.0.0.1": PublicKeyPinningEvaluator(pinnedKeyHashes: [foreign], performDefaultValidation: false),
        ])
        var request = URLRequest(url: try #require(URL(string: "https://localhost:\(nginx.port)/hop")))
        request.timeoutInterval = 10
        do {
            _ = try await transport.data(for: request)
            Issue.record("the hop to 127.0.0.1 passed its pin")
        } catch let error as TransportError {
            #expect(error.code == .pinMismatch, "\(error)")
            #expect(
                error.underlyingError as? ServerTrustError == .certificatePinningFailed(host: "127.0.0.1"),
                "\(String(describing: error.underlyingError))")
        }
        // Plain HTTP where TLS was expected: a failed handshake, not a chain that did not verify.
        // (nginx answers a ClientHello with a plain `400` at once.)
        let plain = try NginxServer()
        defer { plain.stop() }
        var toPlain = URLRequest(url: try #require(URL(string: "https://localhost:\(plain.port)/x")))
        toPlain.timeoutInterval = 10
        do {
            _ = try await transport.data(for: toPlain)
            Issue.record("a plain HTTP server passed as TLS")
        } catch let error as TransportError {
            #expect(error.code == .tlsFailure, "\(error)")
            #expect(!(error.underlyingError is ServerTrustError), "\(String(describing: error.underlyingError))")
        }
    }

    @Test("Through HTTPNetworkService: a 2xx decodes, and a 404's error still carries the response's headers")
    func serviceStatusErrors() async throws {
        let fixture = try await Fixture()
        defer { fixture.stop() }
        let transport = PinningTransport(pinnedDomains: [
            "localhost": PublicKeyPinningEvaluator(
                pinnedKeyHashes: [try fixture.keyHash(fixture.pki.leafPath)], performDefaultValidation: false)
        ])
        #expect(try await fixture.get(transport).property == "pinned")
        let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
        await #expect {
            let _: Model = try await service.request(
                to: Endpoint(path: "/missing.json", method: .get),
                via: DefaultAPIEnvironment(baseURL: URL(string: "https://localhost:\(fixture.nginx.port)")))
        } throws: { error in
            guard let error = error as? NetworkError, error.kind == .httpStatusError(.notFound) else { return false }
            return error.response?.statusCode == 404 && error.response?.headers["Server"]?.hasPrefix("nginx") == true
        }
        #expect(await fixture.nginx.accessLog(atLeast: 2).count == 2)
    }

    @Test("A matching certificate pin connects: the leaf, or the CA, as trust anchor")
    func matchingCertificatePin() async throws {
        let fixture = try await Fixture()
        defer { fixture.stop() }
        for pinned in [fixture.pki.leafPath, fixture.pki.caPath] {
            let transport = PinningTransport(pinnedDomains: [
                "localhost": CertificatePinningEvaluator(
                    pinnedCertificates: [try fixture.der(pinned)], performDefaultValidation: false)
            ])
            #expect(try await fixture.get(transport).property == "pinned")
        }
        #expect(await fixture.nginx.accessLog(atLeast: 2).count == 2)
    }

    @Test("A foreign certificate pin aborts the handshake")
    func foreignCertificatePin() async throws {
        let fixture = try await Fixture()
        defer { fixture.stop() }
        let transport = PinningTransport(pinnedDomains: [
            "localhost": CertificatePinningEvaluator(
                pinnedCertificates: [try fixture.der(fixture.pki.foreignPath)], performDefaultValidation: false)
        ])
        await fixture.expectRejected(transport, .tlsFailure, trustError: .trustEvaluationFailed)
    }

    @Test("A matching pin on an untrusted chain fails while default validation is on")
    func matchingPinUntrustedChain() async throws {
        let fixture = try await Fixture()
        defer { fixture.stop() }
        await fixture.expectRejected(
            PinningTransport(pinnedDomains: [
                "localhost": PublicKeyPinningEvaluator(pinnedKeyHashes: [try fixture.keyHash(fixture.pki.leafPath)])
            ]), .tlsFailure, trustError: .trustEvaluationFailed)
        await fixture.expectRejected(
            PinningTransport(pinnedDomains: [
                "localhost": CertificatePinningEvaluator(pinnedCertificates: [try fixture.der(fixture.pki.leafPath)])
            ]), .tlsFailure)
    }

    @Test("An unpinned domain keeps default validation, so a private CA's certificate fails")
    func unpinnedDomain() async throws {
        let fixture = try await Fixture()
        defer { fixture.stop() }
        let transport = PinningTransport(pinnedDomains: [
            "localhost": PublicKeyPinningEvaluator(
                pinnedKeyHashes: [try fixture.keyHash(fixture.pki.leafPath)], performDefaultValidation: false)
        ])
        await fixture.expectRejected(transport, host: "127.0.0.1", .tlsFailure)
    }
}

@Suite("README samples: pinning")
struct PinningReadmeSampleTests {
    @Test("The samples compile with our hash helper where the README uses CryptoKit")
    func samples() async throws {
        let pki = try await TestPKI.make()
        defer { try? FileManager.default.removeItem(at: pki.directory.deletingLastPathComponent()) }
        let primaryKeyHash = try CertificatePinning.publicKeyHash(ofCertificatePEM: try pki.pem(pki.leafPath))
        let backupKeyHash = try CertificatePinning.publicKeyHash(ofCertificatePEM: try pki.pem(pki.foreignPath))
        let certDERData = try #require(try CertificatePinning.certificatesDER(fromPEM: try pki.pem(pki.leafPath)).first)

        // Public-key pinning (recommended: survives certificate renewal)
        let keyPinned = HTTPNetworkService(
            transport: PinningTransport(
                pinnedDomains: [
                    "api.example.com": PublicKeyPinningEvaluator(
                        pinnedKeyHashes: [primaryKeyHash, backupKeyHash]
                    )
                ]
            )
        )

        // Certificate pinning (simpler, but breaks at every renewal)
        let certificatePinned = HTTPNetworkService(
            transport: PinningTransport(
                pinnedDomains: [
                    "api.example.com": CertificatePinningEvaluator(
                        pinnedCertificates: [certDERData]
                    )
                ]
            )
        )
        #expect((keyPinned.transport as? PinningTransport)?.pinnedDomains.keys.first == "api.example.com")
        #expect((certificatePinned.transport as? PinningTransport)?.pinnedDomains.count == 1)
    }
}

#if canImport(CCurl)
    @Suite("CurlTransport protocol features against nginx")
    struct CurlProtocolTests {
        @Test("HTTP/2 is negotiated over TLS (ALPN) and multiplexed")
        func http2AndGzip() async throws {
            let fixture = try await PinningTransportTests.Fixture()
            defer { fixture.stop() }
            let body = String(repeating: #"{"id":1,"property":"compressible"}"#, count: 1)
            try fixture.nginx.write(Data(body.utf8), to: "pinned.json")
            let transport = PinningTransport(pinnedDomains: [
                "localhost": PublicKeyPinningEvaluator(
                    pinnedKeyHashes: [try fixture.keyHash(fixture.pki.leafPath)], performDefaultValidation: false)
            ])
            let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
            let environment = DefaultAPIEnvironment(baseURL: URL(string: "https://localhost:\(fixture.nginx.port)"))
            let models = try await withThrowingTaskGroup(of: Model.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await service.request(to: Endpoint(path: "/pinned.json", method: .get), via: environment)
                    }
                }
                return try await group.reduce(into: [Model]()) { $0.append($1) }
            }
            #expect(models.count == 8 && models.allSatisfy { $0.property == "compressible" })
            let log = await fixture.nginx.accessLog(atLeast: 8)
            #expect(log.count == 8)
            #expect(log.allSatisfy { $0.contains("HTTP/2.0\"") }, "nginx saw HTTP/2: \(log)")
        }
    }
#endif
