import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

/// "Any Double is a safe timeout" for the sessions and requests a caller hands to a
/// `URLSession`-based path: corelibs converts a session's request timeout to an integer before
/// it reads the request's own, and a request's when it is set, so NaN or infinity killed the
/// process on the first request. Each case runs in a `gentle-probe` child, where a trap cannot
/// take the test run down (it fails the case instead).
@Suite("A session's or a request's timeout corelibs would trap on never reaches it", .serialized)
struct SessionTimeoutProbeTests {
    struct Outcome: Decodable {
        let outcome: String
        let status: Int?
        let error: String?
    }

    static func probe(_ mode: String, _ url: URL, seconds: String) async throws -> Outcome {
        let path = try SizeLimitMemoryTests.probePath()
        return try await offCooperativePool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = ["timeout", mode, url.absoluteString, seconds]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try ProcessLauncher.run(process)
            let killer = DispatchWorkItem { if process.isRunning { process.terminate() } }
            DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: killer)
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            killer.cancel()
            guard process.terminationReason == .exit, process.terminationStatus == 0 else {
                throw TransportError(
                    .other, url: url,
                    message:
                        "gentle-probe timeout \(mode) \(seconds) ended with \(process.terminationReason == .exit ? "status" : "signal") \(process.terminationStatus)"
                )
            }
            return try JSONDecoder().decode(Outcome.self, from: data)
        }
    }

    @Test(
        "URLSessionTransport over a session whose request timeout is NaN or infinite: the request is sent",
        arguments: ["inf", "nan", "1e300", "-inf"])
    func routedSession(seconds: String) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/t") { _ in .text("ok") }
        let outcome = try await Self.probe("transport", server.url("/t"), seconds: seconds)
        #expect(outcome.outcome == "success" && outcome.status == 200, "\(outcome)")
        #expect(server.requests(path: "/t").count == 1)
    }

    @Test(
        "Y-Network's URLProtocolStubNetworkEngine letting requests through, a request timeout of NaN or infinity: sent",
        arguments: ["inf", "nan", "1e300"])
    func stubEngine(seconds: String) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/t") { _ in .text("ok") }
        let outcome = try await Self.probe("ynetwork-stub-engine", server.url("/t"), seconds: seconds)
        #expect(outcome.outcome == "success" && outcome.status == 200, "\(outcome)")
        #expect(server.requests(path: "/t").count == 1)
    }

    @Test(
        "The same session with a delegate of its own (routed too, through a clamped copy): the request is sent",
        arguments: ["inf", "nan", "1e300", "-inf"])
    func ownDelegateSession(seconds: String) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/t") { _ in .text("ok") }
        let outcome = try await Self.probe("transport-delegate", server.url("/t"), seconds: seconds)
        #expect(outcome.outcome == "success" && outcome.status == 200, "\(outcome)")
        #expect(server.requests(path: "/t").count == 1)
    }

    @Test(
        "JustNetworking's URLSession requester over a session with a delegate, a request timeout of NaN or infinity: sent",
        arguments: ["inf", "nan", "-1"])
    func justNetworkingOwnDelegate(seconds: String) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/t") { _ in .status(204) }
        let outcome = try await Self.probe("justnetworking-delegate", server.url("/t"), seconds: seconds)
        #expect(outcome.outcome == "success", "\(outcome)")
        #expect(server.requests(path: "/t").count == 1)
    }

    @Test(
        "JustNetworking over a session with a delegate whose configuration's request timeout is NaN or infinite: sent (a clamped copy)",
        arguments: ["inf", "nan"])
    func justNetworkingOwnDelegateSession(seconds: String) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/t") { _ in .status(204) }
        let outcome = try await Self.probe("justnetworking-delegate-session", server.url("/t"), seconds: seconds)
        #expect(outcome.outcome == "success", "\(outcome)")
        #expect(server.requests(path: "/t").count == 1)
    }

    @Test(
        "Y-Network's background download with a request timeout of NaN or infinity: sent",
        arguments: ["inf", "nan"])
    func yNetworkBackground(seconds: String) async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/t") { _ in .text("ok") }
        let outcome = try await Self.probe("ynetwork-background", server.url("/t"), seconds: seconds)
        #expect(outcome.outcome == "success" && outcome.status == 200, "\(outcome)")
        #expect(server.requests(path: "/t").count == 1)
    }
}
