#if os(Linux)
    import Foundation
    import GentleNetworking
    import GentleNetworkingTesting
    import Testing

    /// Pinned certificates with `performDefaultValidation: false` are the only trust anchors on
    /// Linux, whatever the system's CA directory holds. libcurl's CA blob replaced its CA file
    /// only: Debian's libcurl still searched `/etc/ssl/certs`, so a certificate any system root
    /// issued, for any host, passed as if pinned.
    ///
    /// The test puts its own CA into `/etc/ssl/certs` inside a private mount namespace
    /// (`unshare -m`, root: the test command runs as root in CI), where the curl CLI then trusts
    /// nginx's certificate, and a `gentle-probe pinned-anchors` child sends one request pinned to
    /// another certificate.
    @Suite("Pinned certificates are the only trust anchors (Linux)", .serialized)
    struct PinnedAnchorsTests {
        @Test("A chain from a CA in the system's CA directory does not pass a pin on another certificate")
        func systemDirectoryIsNotAnAnchor() async throws {
            let fixture = try await PinningTransportTests.Fixture()
            defer { fixture.stop() }
            let pki = fixture.pki
            let system = pki.directory.appendingPathComponent("system-certs")
            try FileManager.default.createDirectory(at: system, withIntermediateDirectories: true)
            let hash = try pki.openssl(["x509", "-hash", "-noout", "-in", pki.caPath])
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let ca = try Data(contentsOf: URL(fileURLWithPath: pki.caPath))
            try ca.write(to: system.appendingPathComponent("\(hash).0"))
            try ca.write(to: system.appendingPathComponent("ca-certificates.crt"))
            let url = "https://localhost:\(fixture.nginx.port)/pinned.json"
            let probe = try SizeLimitMemoryTests.probePath()

            func inNamespace(_ command: String, _ arguments: [String]) async throws -> String {
                try await offCooperativePool {
                    try pki.run(
                        "/usr/bin/unshare",
                        [
                            "-m", "--propagation", "private", "/bin/sh", "-c",
                            "mount --bind \"$0\" /etc/ssl/certs && " + command,
                        ]
                            + [system.path] + arguments)
                }
            }
            // The namespace works: there the system's CA directory trusts nginx's certificate.
            let control = try await inNamespace(
                "exec curl -sS -o /dev/null -w '%{http_code}' \"$1\"", [url])
            #expect(control == "200", "curl CLI in the namespace: \(control)")
            #expect(await fixture.nginx.accessLog(atLeast: 1).count == 1)

            let pinned = try await inNamespace(
                "exec \"$1\" pinned-anchors \"$2\" \"$3\"", [probe, url, pki.foreignPath])
            #expect(
                pinned.trimmingCharacters(in: .whitespacesAndNewlines) == "error tlsFailure",
                "pinned to another certificate: \(pinned)")
            // Still one request: nothing reached nginx through the pinned transport.
            try await Task.sleep(for: .milliseconds(300))
            #expect(fixture.nginx.accessLog.count == 1, "\(fixture.nginx.accessLog)")
        }
    }
#endif
