import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@Suite("URLs on the test servers")
struct ServerURLTests {
    @Test("NginxServer.url(_:) takes its argument as a path (and query) on this server, never another host")
    func nginxURLStaysOnServer() async throws {
        let nginx = try NginxServer(files: ["x.json": Data("{}".utf8), "evil.example/x": Data("local".utf8)])
        defer { nginx.stop() }
        let base = "http://127.0.0.1:\(nginx.port)"
        #expect(nginx.url("/x.json").absoluteString == base + "/x.json")
        #expect(nginx.url("x.json").absoluteString == base + "/x.json")
        #expect(nginx.url("/x.json?v=1").absoluteString == base + "/x.json?v=1")
        #expect(nginx.url("//evil.example/x").absoluteString == base + "/evil.example/x")
        #expect(nginx.url("http://evil.example/").absoluteString == base + "/http://evil.example/")
        #expect(nginx.url("a:b").absoluteString == base + "/a:b")
        for path in hostilePaths {
            let url = nginx.url(path)
            #expect(url.scheme == "http", "\(path) → \(url.absoluteString)")
            #expect(url.host == "127.0.0.1", "\(path) → \(url.absoluteString)")
            #expect(url.port == Int(nginx.port), "\(path) → \(url.absoluteString)")
        }
        // The file under the look-alike path is served from this nginx.
        let url = nginx.url("//evil.example/x")
        guard url.host == "127.0.0.1" else { return }  // never leave loopback
        let (data, _) = try await URLSessionTransport(session: URLSession(configuration: .ephemeral))
            .data(for: URLRequest(url: url))
        #expect(String(decoding: data, as: UTF8.self) == "local")
    }

    @Test("Any scheme://host:port base keeps its scheme, host and port")
    func otherBases() throws {
        for base in ["https://127.0.0.1:8443", "http://localhost:8080", "https://server.test:1"] {
            let baseURL = try #require(URL(string: base))
            let expectedURL = try #require(URL(string: base))
            #expect(ServerURL.url("/a?b=c", on: baseURL).absoluteString == base + "/a?b=c")
            for path in hostilePaths {
                let url = ServerURL.url(path, on: baseURL)
                #expect(url.scheme == expectedURL.scheme, "\(path) → \(url.absoluteString)")
                #expect(url.host == expectedURL.host, "\(path) → \(url.absoluteString)")
                #expect(url.port == expectedURL.port, "\(path) → \(url.absoluteString)")
                #expect(url.absoluteString.hasPrefix(base + "/"), "\(path) → \(url.absoluteString)")
            }
        }
    }
}
