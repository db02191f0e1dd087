import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real nginx on a free loopback port, serving files from a private directory: for tests that
/// need a production HTTP server (real ETags, real TLS) rather than the loopback server.
///
/// The configuration, document root, logs and pid file all live in a fresh temporary directory,
/// and nginx runs in the foreground as a child process (`daemon off; master_process off;`), so
/// nothing on the machine is touched and ``stop()`` (or deinit) ends it.
///
/// nginx must be installed (`apt-get install nginx-light`; the test command does this). When it
/// is not, the initializer throws ``NginxServer/Failure/notInstalled`` — a failure, not a skip.
public final class NginxServer: Sendable {
    /// Why nginx could not be started.
    public enum Failure: Error, CustomStringConvertible {
        /// No nginx binary was found.
        case notInstalled(searched: [String])
        /// nginx exited or never accepted connections; the text is its error log.
        case didNotStart(String)

        /// What went wrong, with the remedy.
        public var description: String {
            switch self {
            case .notInstalled(let searched):
                "nginx is not installed (looked in \(searched.joined(separator: ", "))); install nginx-light"
            case .didNotStart(let log):
                "nginx did not start: \(log)"
            }
        }
    }

    /// TLS settings for an HTTPS listener.
    public struct TLS: Sendable {
        /// PEM certificate chain file.
        public var certificatePath: String
        /// PEM private key file.
        public var keyPath: String

        /// Creates TLS settings from a certificate chain and key on disk.
        public init(certificatePath: String, keyPath: String) {
            self.certificatePath = certificatePath
            self.keyPath = keyPath
        }
    }

    /// The directory holding `nginx.conf`, `www/`, and the logs.
    public let prefix: URL
    /// The document root.
    public let documentRoot: URL
    /// The port nginx listens on.
    public let port: UInt16
    /// `http://127.0.0.1:<port>` (or `https://…` with TLS).
    public let baseURL: URL
    private let process: Process

    /// Starts nginx serving `files` (relative path → contents).
    ///
    /// - Parameters:
    ///   - files: Files to place in the document root before starting.
    ///   - tls: Serve HTTPS with these files; plain HTTP when `nil` (the default).
    ///   - serverName: The `server_name`, and the host in ``baseURL`` (`127.0.0.1` by default).
    ///   - gzip: Compress JSON and text responses (nginx then weakens their ETags); `false` by default.
    ///   - extraServerConfig: Extra directives inside the `server` block.
    ///   - alsoIPv6: Listen on `[::1]` too, at the same port; `false` by default.
    public init(
        files: [String: Data] = [:], tls: TLS? = nil, serverName: String = "127.0.0.1", gzip: Bool = false,
        extraServerConfig: String = "", alsoIPv6: Bool = false
    ) throws {
        let candidates = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx", "/opt/homebrew/bin/nginx"]
        guard let binary = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw Failure.notInstalled(searched: candidates)
        }
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("gentle-nginx-\(UUID().uuidString)")
        let root = prefix.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        for (path, contents) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try contents.write(to: url)
        }
        let port = try POSIXSocket.freeLoopbackPort()
        let options = tls == nil ? "" : " ssl http2"
        let listen = "127.0.0.1:\(port)\(options);" + (alsoIPv6 ? " listen [::1]:\(port)\(options);" : "")
        let tlsConfig =
            tls.map {
                """
                ssl_certificate \($0.certificatePath);
                ssl_certificate_key \($0.keyPath);
                ssl_protocols TLSv1.2 TLSv1.3;
                """
            } ?? ""
        let config = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(prefix.path)/nginx.pid;
            error_log \(prefix.path)/error.log warn;
            events { worker_connections 1024; }
            http {
                access_log \(prefix.path)/access.log;
                client_body_temp_path \(prefix.path)/client_body;
                proxy_temp_path \(prefix.path)/proxy;
                fastcgi_temp_path \(prefix.path)/fastcgi;
                uwsgi_temp_path \(prefix.path)/uwsgi;
                scgi_temp_path \(prefix.path)/scgi;
                default_type application/json;
                gzip \(gzip ? "on" : "off");
                gzip_types application/json text/plain;
                gzip_min_length 0;
                keepalive_requests 100000;
                server {
                    listen \(listen)
                    server_name \(serverName);
                    root \(root.path);
                    \(tlsConfig)
                    \(extraServerConfig)
                }
            }

            """
        try Data(config.utf8).write(to: prefix.appendingPathComponent("nginx.conf"))

        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "-p", prefix.path, "-c", prefix.appendingPathComponent("nginx.conf").path, "-e",
            prefix.appendingPathComponent("error.log").path,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ProcessLauncher.run(process)

        self.prefix = prefix
        self.documentRoot = root
        self.port = port
        self.process = process
        self.baseURL = URL(string: "\(tls == nil ? "http" : "https")://\(serverName):\(port)") ?? root

        let deadline = Date().addingTimeInterval(10)
        while !POSIXSocket.canConnect(port: port) {
            if !process.isRunning || Date() > deadline {
                let log = (try? String(contentsOf: prefix.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
                stop()
                throw Failure.didNotStart(log.isEmpty ? "no error log" : log)
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    deinit {
        stop()
    }

    /// The URL of `path` (which may include a `?query`) on this server: always ``baseURL``'s
    /// scheme, host and port, whatever `path` holds.
    ///
    /// `path` is taken as path text: leading slashes are collapsed to one (`"x.json"` and
    /// `"//x.json"` both give `/x.json`), so `"//evil.example/x"` is the path `/evil.example/x`
    /// and `"http://evil.example/"` the path `/http://evil.example/`, both on this server. Bytes a
    /// path or query cannot hold (spaces, `#`, `\`, non-ASCII, control characters) are
    /// percent-encoded; valid escapes such as `%20` are kept. The empty string gives `/`.
    public func url(_ path: String) -> URL {
        ServerURL.url(path, on: baseURL)
    }

    /// Replaces (or creates) a file in the document root.
    public func write(_ contents: Data, to path: String) throws {
        try contents.write(to: documentRoot.appendingPathComponent(path), options: .atomic)
    }

    /// The access log, one line per request nginx answered (combined format, which names the
    /// protocol: `HTTP/1.1` or `HTTP/2.0`).
    public var accessLog: [String] {
        let url = prefix.appendingPathComponent("access.log")
        guard let handle = try? FileHandle(forReadingFrom: url) else { return [] }
        defer { try? handle.close() }
        return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// The access log once it has at least `count` lines (read again 50 ms later, so a check
    /// for exactly `count` still sees a line that comes late), or as it is after `timeout`
    /// seconds.
    ///
    /// nginx writes a request's line after sending its response, so a fast client can read the
    /// log before the line of the request it just finished is there. The default `timeout` is
    /// long for a starved machine (a test run under ThreadSanitizer on two cores stalls for
    /// seconds); a log that has its lines returns at once.
    public func accessLog(atLeast count: Int, timeout: TimeInterval = 60) async -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var lines = accessLog
        while lines.count < count, Date() < deadline {
            try? await Task.sleep(nanoseconds: 5_000_000)
            lines = accessLog
        }
        try? await Task.sleep(nanoseconds: 50_000_000)
        return accessLog
    }

    /// Stops nginx and removes its directory. Safe to call more than once.
    public func stop() {
        // Processes spawned from a dispatch worker inherit its blocked signal mask, so nginx
        // may never see SIGTERM; SIGKILL cannot be blocked. The access log is written per
        // request, so nothing a test reads is lost.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        try? FileManager.default.removeItem(at: prefix)
    }
}
