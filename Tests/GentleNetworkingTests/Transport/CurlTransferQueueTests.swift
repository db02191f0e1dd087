#if canImport(CCurl)
    import Foundation
    @testable import GentleNetworking
    import GentleNetworkingTesting
    import Testing

    /// libcurl 7.x costs O(n) per finished transfer with n transfers in the multi handle, so
    /// `CurlTransport` hands it at most `maxRunningTransfers` (1,024 by default) and queues the
    /// rest: 10,000 requests in flight then run as fast as 1,000 instead of ten times slower.
    @Suite("CurlTransport queues transfers beyond its running cap")
    struct CurlTransferQueueTests {
        /// Counts how many requests the server is handling at once.
        final class Concurrency: Sendable {
            private let state = Locked((now: 0, peak: 0))
            var peak: Int { state.current.peak }
            func enter() {
                state.withLock {
                    $0.now += 1
                    $0.peak = max($0.peak, $0.now)
                }
            }
            func leave() { state.withLock { $0.now -= 1 } }
        }

        @Test("Requests beyond the cap wait for a slot, never open more connections, and all complete")
        func queuedRequestsComplete() async throws {
            // Given a server that holds every request 150 ms, and a transport that runs 3 at once
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let concurrency = Concurrency()
            server.route("GET", prefix: "/hold") { _ in
                concurrency.enter()
                defer { concurrency.leave() }
                Thread.sleep(forTimeInterval: 0.15)
                return .text("ok")
            }
            let transport = try CurlTransport(
                configuration: CurlTransport.Configuration(), trustByHost: [:], maxRunningTransfers: 3)

            // When 10 requests start at once
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<10 {
                    group.addTask {
                        try await transport.data(for: URLRequest(url: server.url("/hold/\(index)"))).1.statusCode
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }

            // Then all succeed, but the server never saw more than 3 at once or more than 3 connections
            #expect(statuses == Array(repeating: 200, count: 10))
            #expect(concurrency.peak <= 3)
            #expect(concurrency.peak >= 2, "the cap, not a serial queue")
            #expect(server.acceptedConnectionCount <= 3)
            #expect(server.requests(path: "/hold/9").count == 1)
        }

        @Test("A request cancelled while it waits for a slot ends with CancellationError and is never sent")
        func cancelledWhileWaiting() async throws {
            // Given a transport that runs one transfer at a time, busy with a held request
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let release = DispatchSemaphore(value: 0)
            // Held until released (at most 120 s): with 10 s, a run that starved the test's task
            // for longer (one CI run took 56 s for this test) freed the slot before the cancel,
            // and the queued request went out.
            server.route("GET", "/hold") { _ in
                _ = release.wait(timeout: .now() + 120)
                return .text("held")
            }
            server.route("GET", "/queued") { _ in .text("queued") }
            server.route("GET", "/after") { _ in .text("after") }
            let transport = try CurlTransport(
                configuration: CurlTransport.Configuration(), trustByHost: [:], maxRunningTransfers: 1)
            let held = Task { try await transport.data(for: URLRequest(url: server.url("/hold"))) }
            while server.requests(path: "/hold").isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }

            // When a second request waits for the slot and is cancelled
            let queued = Task { try await transport.data(for: URLRequest(url: server.url("/queued"))) }
            try await Task.sleep(nanoseconds: 200_000_000)
            queued.cancel()
            await #expect(throws: CancellationError.self) { try await queued.value }

            // Then it was never sent, the held one completes, and the slot serves the next request
            release.signal()
            let (heldBody, _) = try await held.value
            #expect(String(decoding: heldBody, as: UTF8.self) == "held")
            let (afterBody, _) = try await transport.data(for: URLRequest(url: server.url("/after")))
            #expect(String(decoding: afterBody, as: UTF8.self) == "after")
            #expect(server.requests(path: "/queued").isEmpty)
        }

        @Test("A request queued behind a stream that is held and never read times out after its timeout, unsent")
        func queuedRequestTimesOut() async throws {
            // Given a transport whose one slot is held by a paused stream (never read)
            let hostile = try HostileServer()
            defer { hostile.shutdown() }
            hostile.route("/endless", .endlessBody(chunked: true))
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/queued") { _ in .text("queued") }
            let transport = try CurlTransport(
                configuration: CurlTransport.Configuration(), trustByHost: [:], maxRunningTransfers: 1)
            let (stream, _) = try await transport.stream(
                for: URLRequest(url: hostile.url("/endless")), bufferSize: 4096)

            // When a request with a 1 s timeout waits for the slot
            var request = URLRequest(url: server.url("/queued"))
            request.timeoutInterval = 1
            let started = Date()
            let outcome = Locked<Result<Data, any Error>?>(nil)
            let queued = Task {
                do {
                    let (data, _) = try await transport.data(for: request)
                    outcome.withLock { $0 = .success(data) }
                } catch {
                    outcome.withLock { $0 = .failure(error) }
                }
            }
            while outcome.current == nil, Date().timeIntervalSince(started) < 150 {
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            let elapsed = Date().timeIntervalSince(started)

            // Then it ends with .timedOut within its timeout and a scan, and was never sent.
            // Before: it waited as long as the stream held the slot (here, forever).
            guard case .failure(let error) = outcome.current else {
                Issue.record("the queued request did not end with an error: \(String(describing: outcome.current))")
                queued.cancel()
                stream.cancel()
                return
            }
            #expect((error as? TransportError)?.code == .timedOut, "\(error)")
            // Not before its timeout; bounded after it (the parallel runs stall the process for up
            // to 65 s at once).
            #expect(elapsed >= 0.9 && elapsed < 120, "\(elapsed) s")
            #expect(server.requests(path: "/queued").isEmpty)
            stream.cancel()
            // The slot, once free, serves the next request.
            let (body, _) = try await transport.data(for: URLRequest(url: server.url("/queued")))
            #expect(String(decoding: body, as: UTF8.self) == "queued")
        }
    }
#endif
