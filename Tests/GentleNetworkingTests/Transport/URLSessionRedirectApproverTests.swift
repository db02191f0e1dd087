import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if !canImport(Darwin)
    /// `URLSessionTransport.RedirectApprover` (Linux; what JustNetworking's requester asks a
    /// session's delegate through): the session task ends with the 3xx and the transport sends
    /// the next request itself, so an approver that is slow, silent or answers late can neither
    /// hang nor trap corelibs (which ends the process when a redirect answer comes after it gave
    /// up waiting).
    @Suite("URLSessionTransport's redirect approver: silent, cancelled, late and changed answers", .serialized)
    struct URLSessionRedirectApproverTests {
        /// A session whose own timeout is far above every bound here, so a bound can only hold
        /// through the deadline under test.
        static func session() -> URLSession {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = nil
            configuration.httpCookieStorage = nil
            configuration.timeoutIntervalForRequest = 600
            return URLSession(configuration: configuration)
        }

        /// Waits up to `seconds` for `task`; cancels it and returns `nil` when it has not ended
        /// (without waiting for it: a task deaf to the cancel must fail the test, not hang it).
        static func outcome(
            of task: Task<(Data, HTTPURLResponse), any Error>, within seconds: Double
        ) async -> Result<(Data, HTTPURLResponse), any Error>? {
            let ended = Locked<Result<(Data, HTTPURLResponse), any Error>?>(nil)
            Task {
                let result = await task.result
                ended.withLock { $0 = result }
            }
            let deadline = Date().addingTimeInterval(seconds)
            while ended.current == nil, Date() < deadline { try? await Task.sleep(nanoseconds: 20_000_000) }
            if ended.current == nil { task.cancel() }
            return ended.current
        }

        @Test("An approver that never answers: .timedOut at the idle timeout; a late answer then changes nothing")
        func silentThenLate() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/start") { _ in .redirect(to: "/next") }
            server.route("GET", "/next") { _ in .status(204) }
            let answers = Locked<[@Sendable (URLRequest?) -> Void]>([])
            let transport = URLSessionTransport(
                session: Self.session(), redirectApprover: { _, _, _, answer in answers.withLock { $0.append(answer) } }
            )
            var request = URLRequest(url: server.url("/start"))
            // Long enough for the first hop on a starved run, so only the approver's wait ends it.
            request.timeoutInterval = 60
            let call = Task { try await transport.data(for: request) }
            // Below the 600 s timeouts of the session: only the approver's deadline ends it.
            let result = await Self.outcome(of: call, within: 200)
            guard case .failure(let error)? = result else {
                Issue.record("expected .timedOut, got \(String(describing: result))")
                return
            }
            let transportError = error as? TransportError
            #expect(transportError?.code == .timedOut, "\(error)")
            #expect(transportError?.message.contains("did not answer the redirect") == true, "\(error)")
            #expect(answers.current.count == 1)
            // corelibs is not waiting for this answer (its task ended with the 302): no trap, and
            // nothing is sent.
            answers.current.first?(URLRequest(url: server.url("/next")))
            try await Task.sleep(nanoseconds: 500_000_000)

            // The transport still works after it, and /next was requested by this call only.
            let done = Task { try await transport.data(for: URLRequest(url: server.url("/next"))) }
            let after = await Self.outcome(of: done, within: 200)
            #expect((try? after?.get())?.1.statusCode == 204)
            #expect(server.requests(path: "/next").count == 1)
            #expect(server.requests(path: "/start").count == 1)
        }

        @Test("A caller cancelled while the approver has not answered gets CancellationError without waiting for it")
        func cancelledWhilePending() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/start") { _ in .redirect(to: "/next") }
            server.route("GET", "/next") { _ in .status(204) }
            let asked = Locked(false)
            let transport = URLSessionTransport(
                session: Self.session(), redirectApprover: { _, _, _, _ in asked.withLock { $0 = true } })
            var request = URLRequest(url: server.url("/start"))
            request.timeoutInterval = 600
            let call = Task { try await transport.data(for: request) }
            let deadline = Date().addingTimeInterval(200)
            while !asked.current, Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
            #expect(asked.current, "the approver was asked")
            call.cancel()
            let result = await Self.outcome(of: call, within: 200)
            guard case .failure(let error)? = result else {
                Issue.record("expected CancellationError, got \(String(describing: result))")
                return
            }
            // Within 200 s (`outcome`), below the 600 s idle timeout a deaf wait would end at.
            #expect(error is CancellationError, "\(error)")
            #expect(server.requests(path: "/next").isEmpty)
        }

        @Test("A changed answer goes by the rules: to another origin without the credentials it adds")
        func changedAnswer() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let other = try LoopbackServer()
            defer { other.shutdown() }
            server.route("GET", "/start") { _ in .redirect(to: "/next") }
            server.route("GET", "/next") { _ in .status(204) }
            other.route("GET", "/elsewhere") { _ in .status(204) }
            let target = other.url("/elsewhere")
            let transport = URLSessionTransport(
                session: Self.session(),
                redirectApprover: { _, _, _, answer in
                    var changed = URLRequest(url: target)
                    changed.setValue("Bearer approver-secret", forHTTPHeaderField: "Authorization")
                    changed.setValue("kept", forHTTPHeaderField: "X-Note")
                    answer(changed)
                })
            var request = URLRequest(url: server.url("/start"))
            request.setValue("Bearer caller-secret", forHTTPHeaderField: "Authorization")
            request.timeoutInterval = 60
            let call = Task { try await transport.data(for: request) }
            let result = await Self.outcome(of: call, within: 200)
            #expect((try? result?.get())?.1.statusCode == 204, "\(String(describing: result))")
            let landed = try #require(other.requests(path: "/elsewhere").first)
            #expect(landed.header("Authorization") == nil, "no credential to another origin")
            #expect(landed.header("X-Note") == "kept")
            #expect(server.requests(path: "/next").isEmpty, "the changed target replaced the proposed one")
        }

        @Test("A changed target is one hop, not two: one redirect allowed, one rewritten, followed; a loop still ends")
        func changedTargetCountsOnce() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/start") { _ in .redirect(to: "/next") }
            server.route("GET", "/next") { _ in .status(204) }
            server.route("GET", "/other") { _ in .status(204) }
            server.route("GET", "/loop") { _ in .redirect(to: "/loop2") }
            server.route("GET", "/loop2") { _ in .redirect(to: "/loop") }
            let transport = URLSessionTransport(
                session: Self.session(), maxRedirects: 1,
                redirectApprover: { _, _, next, answer in
                    guard next.url?.path == "/next" else { return answer(next) }
                    var changed = next
                    changed.url = next.url.flatMap { URL(string: "/other", relativeTo: $0)?.absoluteURL }
                    answer(changed)
                })
            var request = URLRequest(url: server.url("/start"))
            request.timeoutInterval = 60
            let call = Task { try await transport.data(for: request) }
            let result = await Self.outcome(of: call, within: 200)
            #expect((try? result?.get())?.1.statusCode == 204, "\(String(describing: result))")
            #expect(server.requests(path: "/other").count == 1)

            let looping = Task { try await transport.data(for: URLRequest(url: server.url("/loop"))) }
            let loopResult = await Self.outcome(of: looping, within: 200)
            guard case .failure(let error)? = loopResult else {
                Issue.record("expected .tooManyRedirects, got \(String(describing: loopResult))")
                return
            }
            #expect((error as? TransportError)?.code == .tooManyRedirects, "\(error)")
        }
    }
#endif
