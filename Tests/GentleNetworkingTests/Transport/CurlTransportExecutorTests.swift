#if canImport(CCurl)
    import Foundation
    import GentleNetworking
    import GentleNetworkingTesting
    import Testing

    /// The name of the thread running the caller (from /proc/thread-self/comm).
    private func currentThreadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Waits for `condition`, without blocking a thread: up to 6,000 checks 10 ms apart (60 s
    /// when the cooperative pool is free), counted in checks rather than wall time, because in
    /// the parallel suite (under TSan above all) the pool can stall for tens of seconds, and a job
    /// hopping between the pool and a loop waits behind that stall at every hop (a CI run saw
    /// these waits pass after 15–18 s, and fail a 60 s wall-clock budget under TSan). 600 s of
    /// wall time is the hard cap.
    private func eventually(_ condition: () -> Bool) async -> Bool {
        let cap = Date().addingTimeInterval(600)
        for _ in 0..<6_000 where Date() < cap {
            if condition() { return true }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return condition()
    }

    private struct Item: Decodable, Sendable, Equatable {
        let id: Int
    }

    @Suite("CurlTransport.executor: request work on the event-loop thread")
    struct CurlTransportExecutorTests {
        @Test("Under the preference, requests complete and their work runs on the loop thread; without it, it does not")
        func runsOnTheLoop() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/item") { request in
                .json(#"{"id":\#(request.rawQuery?.split(separator: "=").last.map(String.init) ?? "0")}"#)
            }
            let transport = try CurlTransport()
            let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
            let environment = DefaultAPIEnvironment(baseURL: server.baseURL)

            let results = try await withThrowingTaskGroup(of: (Int, Item, String, String).self) { group in
                for n in 0..<64 {
                    group.addTask {
                        try await withTaskExecutorPreference(transport.executor) {
                            let before = currentThreadName()
                            let item: Item = try await service.request(
                                to: Endpoint(
                                    path: "/item", method: .get, query: [URLQueryItem(name: "n", value: "\(n)")]),
                                via: environment)
                            return (n, item, before, currentThreadName())
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.count == 64)
            for (n, item, before, after) in results {
                #expect(item == Item(id: n))
                #expect(before == "gentle.curl")
                #expect(after == "gentle.curl")
            }
            #expect(server.requests(path: "/item").count == 64)

            // The control: the same request without the preference is decoded elsewhere.
            let item: Item = try await service.request(to: Endpoint(path: "/item", method: .get), via: environment)
            #expect(item == Item(id: 0))
            #expect(currentThreadName() != "gentle.curl")
        }

        @Test("A task that re-enqueues itself forever on the loop does not starve the loop's transfers")
        func yieldingTaskDoesNotStarve() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/item") { _ in .json(#"{"id":7}"#) }
            let transport = try CurlTransport()
            let service = HTTPNetworkService(transport: transport, authService: InMemoryAuthService())
            let executor = transport.executor
            // A careless caller: a loop of `Task.yield()` on the transport's thread, never done.
            let spins = Locked(0)
            let spinner = Task.detached {
                await withTaskExecutorPreference(executor) {
                    while !Task.isCancelled {
                        spins.withLock { $0 += 1 }
                        await Task.yield()
                    }
                }
            }
            defer { spinner.cancel() }
            #expect(await eventually { spins.withLock { $0 } > 100 })

            // Requests on the same transport, from outside and under the preference, still complete.
            // The outside one is bounded (120 s, generous for a stalled pool; ~70 ms otherwise): a
            // loop that never leaves its jobs never starts the transfer, and cancelling the
            // request resumes its caller at once.
            let environment = DefaultAPIEnvironment(baseURL: server.baseURL)
            let outside = try await withThrowingTaskGroup(of: Item?.self) { group in
                group.addTask { try await service.request(to: Endpoint(path: "/item", method: .get), via: environment) }
                group.addTask {
                    try await Task.sleep(nanoseconds: 120_000_000_000)
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                return first
            }
            try #require(outside == Item(id: 7), "the loop never turned to its transfers")
            let inside: Item = try await withTaskExecutorPreference(executor) {
                try await service.request(to: Endpoint(path: "/item", method: .get), via: environment)
            }
            #expect(inside == Item(id: 7))
            #expect(server.requests(path: "/item").count == 2)
        }

        @Test("A task preferring the loop of a transport that is gone still runs, on the global executor")
        func stoppedLoopForwards() async throws {
            var transport: CurlTransport? = try CurlTransport()
            let executor = try #require(transport).executor
            weak let gone = transport
            transport = nil
            #expect(gone == nil)

            let ran = Locked<String?>(nil)
            Task.detached {
                await withTaskExecutorPreference(executor) { ran.withLock { $0 = currentThreadName() } }
            }
            #expect(await eventually { ran.withLock { $0 } != nil })
            #expect(ran.withLock { $0 } != "gentle.curl")

            // Many at once, each hopping to the stopped loop and back several times.
            let count = Locked(0)
            for _ in 0..<200 {
                Task.detached {
                    await withTaskExecutorPreference(executor) {
                        for _ in 0..<5 { await Task.yield() }
                        count.withLock { $0 += 1 }
                    }
                }
            }
            #expect(await eventually { count.withLock { $0 } == 200 })
        }

        @Test("Releasing the transport from a job on its own loop stops the loop without a deadlock")
        func releasedOnItsOwnLoop() async throws {
            let box = Locked<CurlTransport?>(try CurlTransport())
            let executor = try #require(box.withLock { $0 }).executor
            let finished = Locked<String?>(nil)
            Task.detached {
                await withTaskExecutorPreference(executor) {
                    let name = currentThreadName()
                    // The last reference: the transport's deinit (and the loop's shutdown) runs here,
                    // on the loop thread itself, before `finished` is set.
                    box.withLock { $0 = nil }
                    finished.withLock { $0 = name }
                }
            }
            #expect(await eventually { finished.withLock { $0 } != nil })
            #expect(finished.withLock { $0 } == "gentle.curl")

            // The loop has stopped: later jobs run elsewhere.
            let later = Locked<String?>(nil)
            Task.detached {
                await withTaskExecutorPreference(executor) { later.withLock { $0 = currentThreadName() } }
            }
            #expect(await eventually { later.withLock { $0 } != nil })
            #expect(later.withLock { $0 } != "gentle.curl")
        }
    }
#endif
