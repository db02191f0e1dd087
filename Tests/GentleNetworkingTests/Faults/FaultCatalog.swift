import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The cases of the fault table.
enum FaultCatalog {
    static let mebibyte = 1 << 20
    /// The in-memory body limit the size cases use (the default is 100 MiB).
    static let smallLimits = ResponseLimits(maxBodyBytes: Int64(mebibyte))

    static func transportCases(pki: TLSFixtures) -> [FaultCase] {
        connection + framing + limits + deadlines + redirects + retryAfter + tls(pki)
    }

    // MARK: Connections

    static let connection: [FaultCase] = [
        FaultCase("Connection refused", expect: .transport(.cannotConnect)) { kind in
            let server = try HostileServer()
            let url = server.url("/fault")
            server.shutdown()  // Nothing listens on the port any more.
            return FaultObservation(outcome: await FaultOutcome(result(of: URLRequest(url: url), on: try kind.make())))
        },
        FaultCase("A name that does not resolve (`.invalid`)", expect: .transport(.cannotResolveHost)) { kind in
            let url = try #require(URL(string: "http://gentle-fault.invalid/"))
            return FaultObservation(outcome: await FaultOutcome(result(of: URLRequest(url: url), on: try kind.make())))
        },
        .hostile(
            "Accepts and never answers (idle timeout 1 s)", .acceptAndHang, expect: .transport(.timedOut),
            idleTimeout: 1),
        .hostile("Reset before the headers", .resetBeforeHeaders, expect: .transport(.connectionLost)),
        .hostile("Reset mid-body", .resetMidBody(bodyLength: 200_000), expect: .transport(.connectionLost)),
        .hostile(
            "Truncated body (declares 1,000, sends 10)", .truncatedBody(declared: 1000, sent: 10),
            expect: .transport(.truncatedBody)),
    ]

    // MARK: Malformed heads and framing

    static func raw(_ text: String) -> HostileBehavior { .raw(Data(text.utf8)) }

    static let framing: [FaultCase] = [
        .hostile(
            "Malformed status line", raw("HTTP/1.1 abc\r\nContent-Length: 2\r\n\r\nok"),
            expect: .transport(.badResponse)),
        .hostile(
            "Not HTTP at all (HTTP/0.9-style reply)", raw("hello, this is not HTTP\r\n"),
            expect: .transport(.badResponse)),
        .hostile(
            "Header line without a colon", raw("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nno colon here\r\n\r\nok"),
            expect: .transport(.badResponse)),
        .hostile(
            "Duplicated header fields (`X-Dup` twice)",
            raw("HTTP/1.1 200 OK\r\nX-Dup: a\r\nX-Dup: b\r\nContent-Length: 2\r\n\r\nok"), expect: .status(200)),
        .hostile(
            "Two equal `Content-Length` fields", .conflictingContentLength(first: 2, second: 2, body: Data("ok".utf8)),
            expect: .status(200)),
        .hostile(
            "Two different `Content-Length` fields",
            .conflictingContentLength(first: 2, second: 5, body: Data("ok".utf8)),
            expect: .transport(.badResponse)),
        .hostile(
            "`Content-Length: 27, 47`", .contentLengthList("27, 47", body: Data(count: 27)),
            expect: .transport(.badResponse)),
        .hostile(
            "`Content-Length: -1`", .contentLengthList("-1", body: Data("ok".utf8)), expect: .transport(.badResponse)),
        .hostile(
            "`Transfer-Encoding` with `Content-Length`",
            raw("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"),
            expect: .transport(.badResponse)),
        .hostile(
            "Chunked encoding error (chunk size `zz`)",
            raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n"),
            expect: .transport(.badResponse)),
        .hostile(
            "`101 Switching Protocols` never asked for, then 64 KiB",
            .rawThenHold(
                Data("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x-private\r\nConnection: Upgrade\r\n\r\n".utf8)
                    + Data(repeating: 0x61, count: 64 << 10)),
            expect: .transport(.badResponse)),  // the 30 s idle timeout: only recognising the 101 ends it sooner
    ]

    // MARK: Limits

    static let limits: [FaultCase] = [
        .hostile(
            "One 300 KiB header field", .headerFlood(count: 1, valueLength: 300 << 10),
            expect: .transport(.responseTooLarge)),
        .hostile(
            "10,000 header fields", .headerFlood(count: 10_000, valueLength: 8), expect: .transport(.responseTooLarge)),
        .hostile("Headers that never end", .endlessHeaders, expect: .transport(.responseTooLarge)),
        .hostile(
            "Endless body, framed by close (limit 1 MiB)", .endlessBody(chunked: false),
            expect: .transport(.responseTooLarge), limits: smallLimits),
        .hostile(
            "Endless chunked body (limit 1 MiB)", .endlessBody(chunked: true), expect: .transport(.responseTooLarge),
            limits: smallLimits),
        .hostile(
            "gzip bomb, 1 GiB decoded (limit 1 MiB)", .compressionBomb(decodedBytes: 1 << 30),
            expect: .transport(.responseTooLarge), limits: smallLimits
        ).knownLeak(on: .urlSession, corelibsBombLeak),
        .hostile(
            "deflate bomb, 1 GiB decoded (limit 1 MiB)", .compressionBomb(decodedBytes: 1 << 30, encoding: "deflate"),
            expect: .transport(.responseTooLarge), limits: smallLimits
        ).knownLeak(on: .urlSession, corelibsBombLeak),
        .hostile(
            "`Content-Length: 1073741824` (limit 1 MiB)",
            .rawThenHold(Data("HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\n".utf8)),
            expect: .transport(.responseTooLarge), limits: smallLimits),
    ]

    static let corelibsBombLeak =
        "corelibs' URLSession keeps the session of a transfer cancelled while it inflates a compressed body "
        + "(its libcurl multi handle's socket pair, 2 descriptors), after the transport is released. It also keeps "
        + "reading and inflating the rest of the body after the cancel (measured: the server sends the whole bomb "
        + "and the client never hangs up)."

    // MARK: Deadlines and challenges

    static let deadlines: [FaultCase] = [
        .hostile(
            "Body drips 1 byte/s (total deadline 2 s)", .drip(body: Data(count: 100), interval: 1),
            expect: .transport(.timedOut), totalTimeout: 2),
        .hostile(
            "Headers drip 1 byte/s (total deadline 2 s)", .dripHeaders(interval: 1), expect: .transport(.timedOut),
            totalTimeout: 2),
        .hostile(
            "401 with `WWW-Authenticate: Basic`", .challenge(body: Data("denied".utf8)), expect: .status(401)),
        .hostile(
            "401 with `WWW-Authenticate: Digest`",
            .challenge(scheme: #"Digest realm="x", nonce="abc", qop="auth""#, body: Data("denied".utf8)),
            expect: .status(401)),
    ]

    // MARK: Redirects

    static let redirects: [FaultCase] = [
        .hostile("Redirect loop", .redirect(location: "/fault"), expect: .transport(.tooManyRedirects)),
        FaultCase("Redirect to another origin, with credentials", expect: .status(200)) { kind in
            let origin = try HostileServer()
            let other = try HostileServer()
            defer {
                origin.shutdown()
                other.shutdown()
            }
            other.route("/landing", .ok(body: Data("ok".utf8)))
            origin.route("/fault", .redirect(location: other.url("/landing").absoluteString))
            var request = URLRequest(url: origin.url("/fault"))
            for (name, value) in credentialHeaders { request.setValue(value, forHTTPHeaderField: name) }
            var observation = FaultObservation(outcome: await FaultOutcome(result(of: request, on: try kind.make())))
            let landed = other.requests(path: "/landing")
            if landed.count != 1 { observation.problems.append("the other origin saw \(landed.count) requests") }
            for (name, _) in credentialHeaders where landed.contains(where: { $0.header(name) != nil }) {
                observation.problems.append("\(name) crossed to the other origin")
            }
            observation.note = "credentials stripped"
            return observation
        },
        nonHTTPRedirect("file:///etc/passwd"),
        nonHTTPRedirect("ftp://127.0.0.1/x"),
        nonHTTPRedirect("http:///no-host"),
        nonHTTPRedirect("http://127.0.0.1:0/x"),
    ]

    /// A redirect out of HTTP (or to a URL no transport sends: no host, port 0) is not
    /// followed: the 3xx is the response, and nothing else is requested from anyone.
    static func nonHTTPRedirect(_ location: String) -> FaultCase {
        FaultCase("Redirect to `\(location)`", expect: .status(302)) { kind in
            let server = try HostileServer()
            defer { server.shutdown() }
            server.route("/fault", .redirect(location: location))
            var observation = FaultObservation(
                outcome: await FaultOutcome(result(of: URLRequest(url: server.url("/fault")), on: try kind.make())))
            observation.note = "not followed"
            let paths = server.receivedRequests.map(\.path)
            if paths != ["/fault"] { observation.problems.append("the server saw \(paths)") }
            return observation
        }
    }

    static let credentialHeaders = [
        ("Authorization", "Bearer fault-secret"), ("Cookie", "sid=fault-secret"),
        ("Proxy-Authorization", "Basic ZmF1bHQ6c2VjcmV0"),
    ]

    // MARK: Retry-After

    /// A 429 with `Retry-After: value` then a 200, through `RetryTransport` with a clock that
    /// records the delays it is asked to sleep instead of sleeping.
    static func retryAfterCase(
        _ name: String, _ value: String, expect expected: FaultOutcome,
        check: @escaping @Sendable ([TimeInterval]) -> (note: String, problem: String?)
    ) -> FaultCase {
        FaultCase(name, expect: expected) { kind in
            let server = try HostileServer()
            defer { server.shutdown() }
            server.route(
                "/fault",
                .sequence([.status(429, headers: [("Retry-After", value)]), .ok(body: Data("ok".utf8))]))
            let delays = Locked<[TimeInterval]>([])
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let clock = RetryClock(
                now: { now }, sleep: { delay in delays.withLock { $0.append(delay) } }, randomUnit: { 0.5 })
            let transport = RetryTransport(inner: try kind.make(), policy: RetryPolicy(), clock: clock)
            var observation = FaultObservation(
                outcome: await FaultOutcome(result(of: URLRequest(url: server.url("/fault")), on: transport)))
            let (note, problem) = check(delays.current)
            observation.note = note
            if let problem { observation.problems.append(problem) }
            let sent = server.requests(path: "/fault").count
            if sent != delays.current.count + 1 {
                observation.problems.append("\(sent) requests for \(delays.current.count) retries")
            }
            return observation
        }
    }

    static let retryAfter: [FaultCase] = [
        retryAfterCase("429, `Retry-After` in the past", "Wed, 21 Oct 2015 07:28:00 GMT", expect: .status(200)) {
            delays in
            (
                "retried after \(delays.map { "\($0)" }.joined(separator: ", ")) s",
                delays == [0] ? nil : "delays \(delays)"
            )
        },
        retryAfterCase("429, `Retry-After` a year away", "31536000", expect: .status(429)) { delays in
            ("returned at once, not retried", delays.isEmpty ? nil : "slept \(delays)")
        },
        retryAfterCase("429, malformed `Retry-After`", "soon, maybe", expect: .status(200)) { delays in
            // Full jitter at randomUnit 0.5 over the 0.5 s base: the backoff, not the header.
            ("backoff \(delays.map { "\($0)" }.joined(separator: ", ")) s", delays == [0.25] ? nil : "delays \(delays)")
        },
    ]

    // MARK: TLS

    /// The certificates the TLS cases serve: the test PKI's, plus an expired leaf and one for
    /// another name, both signed by the test CA.
    struct TLSFixtures: Sendable {
        let pki: TestPKI
        let expiredPath: String
        let otherNamePath: String
        let leafKeyPath: String
        let caPEM: Data

        init(_ pki: TestPKI) throws {
            self.pki = pki
            leafKeyPath = pki.leafKeyPath
            caPEM = try Data(contentsOf: URL(fileURLWithPath: pki.caPath))
            try Data("subjectAltName=DNS:other.example\nbasicConstraints=CA:FALSE\n".utf8)
                .write(to: pki.directory.appendingPathComponent("other.ext"))
            try pki.openssl([
                "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
                "expired-leaf.pem", "-days", "-1", "-extfile", "leaf.ext",
            ])
            try pki.openssl([
                "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
                "other-leaf.pem", "-days", "2", "-extfile", "other.ext",
            ])
            let ca = try Data(contentsOf: URL(fileURLWithPath: pki.caPath))
            for name in ["expired-leaf", "other-leaf"] {
                let leaf = try Data(contentsOf: pki.directory.appendingPathComponent("\(name).pem"))
                try (leaf + ca).write(to: pki.directory.appendingPathComponent("\(name)-chain.pem"))
            }
            expiredPath = pki.directory.appendingPathComponent("expired-leaf-chain.pem").path
            otherNamePath = pki.directory.appendingPathComponent("other-leaf-chain.pem").path
        }
    }

    /// A TLS case: nginx serves `certificate`; the transport trusts the test CA where it can
    /// (`CurlTransport`; corelibs' URLSession cannot be given a private CA on Linux, so there the
    /// chain is untrusted as well). Nothing may reach nginx.
    static func tlsCase(
        _ name: String, certificate: String, key: String, trustTestCA: Bool, _ fixtures: TLSFixtures
    ) -> FaultCase {
        FaultCase(name, expect: .transport(.tlsFailure)) { kind in
            let nginx = try NginxServer(
                files: ["x.json": Data("{}".utf8)], tls: NginxServer.TLS(certificatePath: certificate, keyPath: key),
                serverName: "localhost")
            defer { nginx.stop() }
            let transport: any HTTPTransportProtocol
            #if canImport(CCurl)
                if kind == .curl, trustTestCA {
                    var trust = CurlTrustSettings()
                    trust.trustAnchorsPEM = fixtures.caPEM
                    transport = try CurlTransport(
                        configuration: CurlTransport.Configuration(), trustByHost: ["localhost": trust])
                } else {
                    transport = try kind.make()
                }
            #else
                transport = try kind.make()
            #endif
            let url = try #require(URL(string: "https://localhost:\(nginx.port)/x.json"))
            var observation = FaultObservation(
                outcome: await FaultOutcome(result(of: URLRequest(url: url), on: transport)))
            if !(await nginx.accessLog(atLeast: 1, timeout: 0.3)).isEmpty {
                observation.problems.append("nginx saw \(nginx.accessLog.count) requests")
            }
            observation.note = "nothing sent"
            return observation
        }
    }

    /// The valid chain with the test CA trusted, on `CurlTransport`: the status (200 when the
    /// trust setup of the TLS rows is sound).
    static func trustedControl(_ fixtures: TLSFixtures) async throws -> Int? {
        #if canImport(CCurl)
            let nginx = try NginxServer(
                files: ["x.json": Data("{}".utf8)],
                tls: NginxServer.TLS(certificatePath: fixtures.pki.chainPath, keyPath: fixtures.leafKeyPath),
                serverName: "localhost")
            defer { nginx.stop() }
            var trust = CurlTrustSettings()
            trust.trustAnchorsPEM = fixtures.caPEM
            let transport = try CurlTransport(
                configuration: CurlTransport.Configuration(), trustByHost: ["localhost": trust])
            let url = try #require(URL(string: "https://localhost:\(nginx.port)/x.json"))
            return try await transport.data(for: URLRequest(url: url)).1.statusCode
        #else
            return nil
        #endif
    }

    static func tls(_ fixtures: TLSFixtures) -> [FaultCase] {
        let foreignKey = fixtures.pki.directory.appendingPathComponent("foreign.key").path
        return [
            tlsCase(
                "TLS: self-signed certificate", certificate: fixtures.pki.foreignPath, key: foreignKey,
                trustTestCA: true, fixtures),
            tlsCase(
                "TLS: expired certificate (CA trusted on curl)", certificate: fixtures.expiredPath,
                key: fixtures.leafKeyPath, trustTestCA: true, fixtures),
            tlsCase(
                "TLS: certificate for another host name (CA trusted on curl)", certificate: fixtures.otherNamePath,
                key: fixtures.leafKeyPath, trustTestCA: true, fixtures),
            tlsCase(
                "TLS: unknown CA", certificate: fixtures.pki.chainPath, key: fixtures.leafKeyPath, trustTestCA: false,
                fixtures),
        ]
    }
}
