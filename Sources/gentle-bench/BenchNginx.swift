import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A private nginx for the soak and scale modes, whose whole configuration the bench writes:
/// `NginxServer` (the testing library's) fixes the `events` block at 1,024 connections and takes
/// directives for the `server` block only, while these modes need `map`/`split_clients` at the
/// `http` level, `worker_connections` and `worker_rlimit_nofile` sized for 10,000 clients, and a
/// listen backlog above the default 511.
///
/// Like `NginxServer`, everything lives in a fresh temporary directory, nginx runs in the
/// foreground as a child process, and ``stop()`` kills it (SIGKILL: a child spawned from a
/// dispatch worker may have SIGTERM blocked) and removes the directory.
final class BenchNginx: Sendable {
    let prefix: URL
    let documentRoot: URL
    let port: UInt16
    let baseURL: URL
    /// The configuration as written, for the report.
    let configuration: String
    private let process: Process

    /// Starts nginx with `files` in the document root.
    ///
    /// - Parameters:
    ///   - files: Relative path → contents.
    ///   - workerConnections: `events { worker_connections }`.
    ///   - rlimitNoFile: `worker_rlimit_nofile`; `nil` leaves nginx with the inherited limit.
    ///   - httpConfig: Directives at the `http` level (maps, `split_clients`).
    ///   - serverConfig: Directives in the `server` block (locations).
    ///   - accessLog: Whether nginx writes `access.log` (one line per request).
    init(
        files: [String: Data], workerConnections: Int = 1024, rlimitNoFile: Int? = nil, httpConfig: String = "",
        serverConfig: String = "", accessLog: Bool = true
    ) throws {
        let candidates = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx", "/opt/homebrew/bin/nginx"]
        guard let binary = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BenchError("nginx is not installed (looked in \(candidates.joined(separator: ", ")))")
        }
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("gentle-bench-nginx-\(UUID())")
        let root = prefix.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        for (path, contents) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try contents.write(to: url)
        }
        let port = try Self.freeLoopbackPort()
        let config = """
            daemon off;
            master_process off;
            worker_processes 1;
            \(rlimitNoFile.map { "worker_rlimit_nofile \($0);" } ?? "")
            pid \(prefix.path)/nginx.pid;
            error_log \(prefix.path)/error.log warn;
            events { worker_connections \(workerConnections); multi_accept on; }
            http {
                access_log \(accessLog ? "\(prefix.path)/access.log" : "off");
                client_body_temp_path \(prefix.path)/client_body;
                proxy_temp_path \(prefix.path)/proxy;
                fastcgi_temp_path \(prefix.path)/fastcgi;
                uwsgi_temp_path \(prefix.path)/uwsgi;
                scgi_temp_path \(prefix.path)/scgi;
                default_type application/json;
                keepalive_requests 1000000;
                keepalive_timeout 75s;
            \(httpConfig)
                server {
                    listen 127.0.0.1:\(port) backlog=4096;
                    server_name 127.0.0.1;
                    root \(root.path);
            \(serverConfig)
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
        try process.run()
        self.prefix = prefix
        self.documentRoot = root
        self.port = port
        self.process = process
        self.configuration = config
        self.baseURL = URL(string: "http://127.0.0.1:\(port)") ?? root

        let deadline = Date().addingTimeInterval(10)
        while !Self.canConnect(port: port) {
            if !process.isRunning || Date() > deadline {
                let log = (try? String(contentsOf: prefix.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
                stop()
                throw BenchError("nginx did not start: \(log.isEmpty ? "no error log" : log)")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    deinit { stop() }

    func url(_ path: String) -> URL {
        URL(string: path, relativeTo: baseURL)?.absoluteURL ?? baseURL
    }

    /// The access log's lines.
    var accessLog: [Substring] {
        guard let data = FileManager.default.contents(atPath: prefix.appendingPathComponent("access.log").path) else {
            return []
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n")
    }

    /// The error log (alerts such as "worker_connections are not enough").
    var errorLog: String {
        (try? String(contentsOf: prefix.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        }
        try? FileManager.default.removeItem(at: prefix)
    }

    private static func loopbackAddress(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private static func freeLoopbackPort() throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError("socket: errno \(errno)") }
        defer { close(descriptor) }
        var address = loopbackAddress(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw BenchError("bind: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }

    private static func canConnect(port: UInt16) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = loopbackAddress(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
