import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Streams that end every way a caller can end them free what they made: weak references to
/// every per-exchange object go `nil`, and no socket to the server stays open but the pooled one.
@Suite("Streaming frees everything: weak references and sockets, on every transport")
struct StreamLeakTests {
    static let size = 64 * 1024

    @Test(
        "Finished, broken, cancelled and dropped streams leave no object alive and no socket open",
        arguments: TransportKind.all)
    func streamsFreeEverything(kind: TransportKind) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/whole") { _ in
            var response = LoopbackResponse(status: 200, body: Data(repeating: 0x61, count: Self.size))
            response.chunked = true
            response.chunkSize = 4096
            return response
        }
        // 100 s in all: every consumer below leaves long before the server could finish.
        server.route("GET", "/slow") { _ in .eventStream((1...500).map { "data: \($0)\n\n" }, delay: 0.2) }
        let transport = try kind.make()
        let whole = URLRequest(url: server.url("/whole"))
        let slow = URLRequest(url: server.url("/slow"))
        let watch = ObjectWatch()
        let rounds = 3
        try await ObjectWatch.$current.withValue(watch) {
            for _ in 0..<rounds {
                // Read to the end.
                let (stream, _) = try await transport.stream(for: whole)
                var count = 0
                for try await chunk in stream { count += chunk.count }
                #expect(count == Self.size)
                // Left after the first chunk.
                let (broken, _) = try await transport.stream(for: slow)
                for try await _ in broken { break }
                // Cancelled after the head.
                let (cancelled, _) = try await transport.stream(for: slow)
                // The socket count below sees this stream's connection while it is open.
                #expect(ProcessSockets.open(toPort: server.port) >= 1)
                cancelled.cancel()
                // Dropped: never read, never cancelled.
                _ = try await transport.stream(for: slow)
            }
        }
        let hangUps = 3 * rounds
        try await Self.wait { server.clientHangUpCount >= hangUps }
        #expect(server.clientHangUpCount == hangUps, "the server saw each abandoned stream hang up")
        try await Self.wait { watch.alive.isEmpty }
        #expect(watch.alive.isEmpty, "still alive: \(watch.alive)")
        let registered = watch.registered
        #expect(registered["HTTPByteStream.Source"] == 4 * rounds, "\(registered)")
        #expect(registered["ChunkBuffer"] == 4 * rounds, "\(registered)")
        switch kind {
        case .curl: #expect(registered["CurlEasyRequest"] == 4 * rounds, "\(registered)")
        case .urlSession: #expect(registered["SessionCall"] == 4 * rounds, "\(registered)")
        }
        // The finished streams share one kept-alive connection; the others closed theirs.
        try await Self.wait { ProcessSockets.open(toPort: server.port) <= 1 }
        #expect(ProcessSockets.open(toPort: server.port) <= 1, "sockets to the server still open")
        withExtendedLifetime(transport) {}
    }

    /// Polls `condition` for up to 120 s: the parallel ThreadSanitizer run can stall the pool
    /// for a minute, and a leak never satisfies it however long the wait.
    static func wait(_ condition: () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(120)
        while !condition(), Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
    }
}

/// This process's TCP sockets, from `/proc`.
enum ProcessSockets {
    /// How many sockets this process holds open (in any state) whose remote port is `port`.
    static func open(toPort port: UInt16) -> Int {
        let manager = FileManager.default
        var inodes = Set<String>()
        for entry in (try? manager.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            guard let target = try? manager.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)"),
                target.hasPrefix("socket:[")
            else { continue }
            inodes.insert(String(target.dropFirst(8).dropLast()))
        }
        var count = 0
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            // Read to the end: /proc files have no size, and a one-read helper gets one page.
            guard let handle = FileHandle(forReadingAtPath: table) else { continue }
            defer { try? handle.close() }
            guard let data = try? handle.readToEnd() else { continue }
            let text = String(decoding: data, as: UTF8.self)
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, let remotePort = fields[2].split(separator: ":").last,
                    UInt16(remotePort, radix: 16) == port, inodes.contains(String(fields[9]))
                else { continue }
                count += 1
            }
        }
        return count
    }
}
