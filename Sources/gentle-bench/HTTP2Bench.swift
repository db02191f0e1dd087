import Foundation
import GentleNetworking
import GentleNetworkingTesting

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// HTTP/2 over TLS against nginx (`listen … ssl http2`), 64 requests in flight multiplexed on
/// one connection: `HTTPNetworkService.request` over a `PinningTransport` that trusts the bench's
/// self-signed certificate (its libcurl connection cap set to 1 per host) beside the curl CLI
/// (`--http2 -Z --parallel-max 64`, which waits for the first connection and multiplexes on it).
/// Interleaved rounds; requests per second and CPU time per request.
enum HTTP2Bench {
    static let inFlight = 64

    struct Result {
        var rates: [Double]
        var cliRates: [Double]
        var cpu: [Double]
        var cliCPU: [Double]
    }

    static func measure(work: URL, seconds: Double, rounds: Int) async throws -> Result {
        let certificate = work.appendingPathComponent("h2-cert.pem")
        let key = work.appendingPathComponent("h2-key.pem")
        try makeCertificate(certificate: certificate, key: key)
        let nginx = try NginxServer(
            files: ["model.json": Data(#"{"id":1,"property":"abc"}"#.utf8)],
            tls: NginxServer.TLS(certificatePath: certificate.path, keyPath: key.path))
        defer { nginx.stop() }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 1
        let transport = PinningTransport(
            pinnedDomains: [
                "127.0.0.1": CertificatePinningEvaluator(
                    pinnedCertificates: [try der(ofPEM: certificate)], performDefaultValidation: false)
            ], configuration: configuration)
        let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
        let environment = DefaultAPIEnvironment(baseURL: nginx.baseURL)
        let endpoint = Endpoint(path: "/model.json", method: .get)
        // The protocol actually spoken, from the transfer's metrics: h2 or the figures mean nothing.
        let (_, _, metrics): (BenchModel, HTTPURLResponse, RequestMetrics) = try await service.requestWithMetrics(
            to: endpoint, via: environment)
        let spoken = metrics.transactions.last?.networkProtocol ?? "unknown"
        guard spoken == "h2" else { throw BenchError("HTTP/2 was not negotiated (\(spoken))") }

        var result = Result(rates: [], cliRates: [], cpu: [], cliCPU: [])
        for _ in 0..<max(1, rounds) {
            let ours = try await measureClient(concurrency: inFlight, seconds: seconds, latencies: false) {
                let _: BenchModel = try await service.request(to: endpoint, via: environment)
            }
            result.rates.append(ours.rate)
            result.cpu.append(ours.cpuMicroseconds)
            let cli = try curlCLI(
                url: nginx.url("/model.json"), count: Int(max(2000, ours.rate * seconds)), parallel: inFlight,
                workDirectory: work, extraArguments: ["--http2", "--cacert", certificate.path])
            result.cliRates.append(cli.rate)
            result.cliCPU.append(cli.cpuMicroseconds)
        }
        print("")
        print(
            "HTTP/2 over TLS, \(inFlight) in flight on one connection (negotiated: \(spoken); median of "
                + "\(max(1, rounds)) rounds, range in brackets):")
        print(
            "  PinningTransport (libcurl): \(StreamingBench.spread(result.rates)) requests/s, "
                + "\(GentleBench.oneDecimal(median(result.cpu))) µs CPU per request")
        print(
            "  curl CLI --http2:           \(StreamingBench.spread(result.cliRates)) requests/s, "
                + "\(GentleBench.oneDecimal(median(result.cliCPU))) µs CPU per request")
        print(
            "  ours / curl CLI: \(GentleBench.ratio(median(result.rates), median(result.cliRates)))   target >= 1.0x"
                + " (per round: \(zip(result.rates, result.cliRates).map { GentleBench.ratio($0, $1) }.joined(separator: ", ")))"
        )
        return result
    }

    /// A self-signed P-256 certificate for 127.0.0.1, made with the `openssl` command.
    static func makeCertificate(certificate: URL, key: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key.path, "-out", certificate.path, "-days", "2", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError("openssl exited with \(process.terminationStatus)")
        }
    }

    /// The DER bytes of the first certificate in a PEM file.
    static func der(ofPEM url: URL) throws -> Data {
        let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        let body = text.components(separatedBy: "-----BEGIN CERTIFICATE-----").dropFirst().first?
            .components(separatedBy: "-----END CERTIFICATE-----").first
        guard let body, let der = Data(base64Encoded: body.filter { !$0.isWhitespace }) else {
            throw BenchError("no certificate in \(url.path)")
        }
        return der
    }
}
