import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if os(Linux)
    /// The test helper that keeps timing-sensitive steps off the shared pool does keep them there
    /// (thread names read from /proc, so on Linux only).
    @Suite("onDedicatedThread: a test's steps stay on its own thread across awaits on the wire")
    struct DedicatedThreadExecutorTests {
        /// The calling thread's name as the kernel has it (15 characters at most).
        static func currentThreadName() -> String {
            let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            return comm.trimmingCharacters(in: .newlines)
        }

        @Test(
            "Before, between and after real requests, the body runs on the executor's thread",
            arguments: TransportKind.all)
        func staysOnItsThread(kind: TransportKind) async throws {
            let harness = try LoopbackHarness(kind: kind, token: nil)
            defer { harness.server.shutdown() }
            harness.server.route("GET", "/k") { _ in .json("{}") }
            let names = try await onDedicatedThread {
                var names = [Self.currentThreadName()]
                for _ in 0..<3 {
                    try await harness.service.requestVoid(
                        to: Endpoint(path: "/k", method: .get), via: harness.environment)
                    names.append(Self.currentThreadName())
                }
                return names
            }
            #expect(names == Array(repeating: "gentle.test-exe", count: 4), "Linux keeps 15 characters of a name")
            #expect(harness.server.requests(path: "/k").count == 3)
        }
    }
#endif
