import Foundation
import GentleNetworkingTesting

/// Certificates made with the `openssl` command for the TLS tests: a private CA, a leaf it signed
/// for `localhost` and `127.0.0.1`, and a foreign self-signed certificate for the same names.
struct TestPKI {
    let directory: URL

    var caPath: String { directory.appendingPathComponent("ca.pem").path }
    var leafPath: String { directory.appendingPathComponent("leaf.pem").path }
    var leafKeyPath: String { directory.appendingPathComponent("leaf.key").path }
    var chainPath: String { directory.appendingPathComponent("chain.pem").path }
    var foreignPath: String { directory.appendingPathComponent("foreign.pem").path }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Makes the certificates on a plain thread: the `openssl` runs block, and blocking the
    /// two-thread cooperative pool of a 2-core machine would stall every other test.
    static func make() async throws -> TestPKI {
        try await offCooperativePool { try makeBlocking() }
    }

    static func makeBlocking() throws -> TestPKI {
        let directory = makeTemporaryDirectory().appendingPathComponent("pki")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let pki = TestPKI(directory: directory)
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try pki.openssl(
            ["req", "-x509"] + curve + [
                "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=GentleNetworking Test CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ])
        try pki.openssl(["req"] + curve + ["-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=localhost"])
        try Data(
            """
            subjectAltName=DNS:localhost,IP:127.0.0.1
            basicConstraints=CA:FALSE
            keyUsage=critical,digitalSignature
            extendedKeyUsage=serverAuth

            """.utf8
        ).write(to: directory.appendingPathComponent("leaf.ext"))
        try pki.openssl([
            "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
            "leaf.pem", "-days", "2", "-extfile", "leaf.ext",
        ])
        try pki.openssl(
            ["req", "-x509"] + curve + [
                "-keyout", "foreign.key", "-out", "foreign.pem", "-days", "2", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            ])
        let chain =
            try Data(contentsOf: URL(fileURLWithPath: pki.leafPath))
            + Data(contentsOf: URL(fileURLWithPath: pki.caPath))
        try chain.write(to: URL(fileURLWithPath: pki.chainPath))
        return pki
    }

    func pem(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }

    /// The key hash as the issue defines it, computed by openssl itself.
    func opensslKeyHash(of certificatePath: String) throws -> String {
        try run(
            "/bin/sh",
            [
                "-c",
                "openssl x509 -in '\(certificatePath)' -pubkey -noout | openssl pkey -pubin -outform der"
                    + " | openssl dgst -sha256 -binary | base64",
            ]
        ).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @discardableResult
    func openssl(_ arguments: [String]) throws -> String {
        let candidates = ["/usr/bin/openssl", "/usr/local/bin/openssl", "/opt/homebrew/bin/openssl"]
        guard let binary = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw Failure(description: "openssl is not installed; the test command installs it")
        }
        return try run(binary, arguments)
    }

    /// Runs `executable` in the PKI directory; its standard output and error, or a failure with them.
    func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try ProcessLauncher.run(process)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        while process.isRunning { Thread.sleep(forTimeInterval: 0.005) }
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) failed: \(text)")
        }
        return text
    }
}
