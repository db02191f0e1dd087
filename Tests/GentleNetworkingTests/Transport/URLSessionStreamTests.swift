import Foundation
import GentleNetworking
import GentleNetworkingTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("URLSessionTransport.stream(for:): the head first, then the body as it arrives", .serialized)
struct URLSessionStreamTests {
    @Test("The head and the first chunks arrive while the server is still sending; the whole body follows")
    func streamsBeforeTheEnd() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        let payload = patternBytes(4 << 20, multiplier: 11)
        server.route("GET", "/body") { _ in
            // 64 KiB, then a 6 s pause (a starved run still reads its first chunk well within it),
            // then the rest: only a stream that delivers as it goes sees the first bytes in time.
            LoopbackResponse(status: 200, headers: [("X-Kind", "stream")], body: payload).with {
                $0.chunkSize = 64 * 1024
                $0.delayMidBody = 6
            }
        }
        let transport = URLSessionTransport(session: makeIsolatedSession())
        let started = DispatchTime.now()
        let (stream, response) = try await transport.stream(for: URLRequest(url: server.url("/body")))
        #expect(response.statusCode == 200)
        #expect(response.value(forHTTPHeaderField: "X-Kind") == "stream")
        var iterator = stream.makeAsyncIterator()
        var received = try #require(try await iterator.next())
        #expect(seconds(since: started) < 5.9 || server.completedResponseCount == 0, "a chunk before the pause")
        #expect(server.completedResponseCount == 0, "the first bytes came before the server finished")
        while let chunk = try await iterator.next() { received.append(chunk) }
        #expect(received == payload)
        #expect(server.requests(path: "/body").count == 1)
    }

    #if !canImport(Darwin)
        /// `count` bytes that differ from one offset to the next, so loss or reordering shows.
        static func pattern(_ count: Int) -> Data {
            patternBytes(count, multiplier: 7)
        }

        @Test("Linux: a consumer far behind still gets every byte in order; what it has not read waits on disk")
        func slowConsumerSpills() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let body = Self.pattern(8 << 20)
            server.route("GET", "/firehose") { _ in LoopbackResponse(status: 200, body: body) }
            let transport = URLSessionTransport(session: makeIsolatedSession(), streamBufferSize: 256 * 1024)
            #expect(transport.streamBufferSize == 256 * 1024)
            #expect(transport.streamSpillLimit == 1 << 30, "the default")
            let spillFilesBefore = ChunkBufferTests.spillFiles()
            let (stream, _) = try await transport.stream(for: URLRequest(url: server.url("/firehose")))
            var iterator = stream.makeAsyncIterator()
            var received = try #require(try await iterator.next())
            // The consumer falls behind while the server sends everything, and what the session
            // delivers past the buffer goes to disk: a spill file holding at least 6 of the 8 MiB
            // (no other test spills that much; their files may be open meanwhile, so any spill
            // file would not do). Waited for, not assumed once the server has written the last
            // byte: the kernel's socket buffers hold megabytes that corelibs may not have read
            // yet (under load it was not there yet in 1 of 5 runs).
            let deadline = Date().addingTimeInterval(120)
            var ours: [(target: String, size: Int64)] = []
            while Date() < deadline {
                ours = openSpillFiles().filter { $0.size >= 6 << 20 }
                if server.completedResponseCount > 0, !ours.isEmpty { break }
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            #expect(ours.count == 1, "the unread bytes are on disk: \(openSpillFiles())")
            #expect(ours.allSatisfy { $0.target.hasSuffix("(deleted)") }, "in a file with no name: \(ours)")
            while let chunk = try await iterator.next() { received.append(chunk) }
            #expect(received.count == body.count)
            #expect(received == body)
            #expect(
                try await ChunkBufferTests.lingeringSpillFiles(since: spillFilesBefore).isEmpty,
                "the spill file never keeps a name")
            #expect(URLSessionTransport().streamBufferSize == 1 << 20, "the default")
        }

        /// A session delegate that counts every call corelibs makes to it.
        final class CountingDelegate: NSObject, URLSessionDataDelegate, Sendable {
            let calls = Locked<[String]>([])

            func urlSession(
                _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
            ) {
                calls.withLock { $0.append("response") }
                completionHandler(.allow)
            }

            func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
                calls.withLock { $0.append("data") }
            }

            func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
                calls.withLock { $0.append("complete") }
            }

            func urlSession(
                _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
            ) {
                calls.withLock { $0.append("redirect") }
                completionHandler(request)
            }
        }

        /// corelibs hands a session-with-a-delegate's own task its body only at the end (through
        /// the completion handler): the transport sends through a session of its own, made from
        /// the configuration, as for any session. Before, this stream came in one chunk, after
        /// the server had sent everything.
        @Test("Linux: a session with a delegate of its own streams the body as it arrives; its delegate is not called")
        func ownDelegateSession() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            let body = Self.pattern(4 << 20)
            server.route("GET", "/body") { _ in
                // 64 KiB, then a 15 s pause (a TSan run under load took more than 6 s to deliver
                // the first chunk), then the rest.
                LoopbackResponse(status: 200, body: body).with {
                    $0.chunkSize = 64 * 1024
                    $0.delayMidBody = 15
                }
            }
            server.route("GET", "/missing") { _ in LoopbackResponse(status: 404, body: Data("gone".utf8)) }
            server.route("GET", "/moved") { _ in LoopbackResponse(status: 302, headers: [("Location", "/missing")]) }
            server.route("GET", "/cut") { _ in
                LoopbackResponse(status: 200, body: body).with { $0.closeMidBody = true }
            }
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = nil
            let delegate = CountingDelegate()
            let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            defer { session.finishTasksAndInvalidate() }
            let transport = URLSessionTransport(session: session)

            let (stream, response) = try await transport.stream(for: URLRequest(url: server.url("/body")))
            #expect(response.statusCode == 200)
            var iterator = stream.makeAsyncIterator()
            var received = try #require(try await iterator.next())
            #expect(server.completedResponseCount == 0, "the first bytes came before the server finished")
            #expect(received.count < body.count, "not the whole body in one chunk")
            while let chunk = try await iterator.next() { received.append(chunk) }
            #expect(received == body)

            let (missing, status) = try await transport.stream(for: URLRequest(url: server.url("/moved")))
            #expect(status.statusCode == 404, "the redirect was followed")
            #expect(try await missing.collect(maxBytes: 1 << 20) == Data("gone".utf8))

            do {
                let (cut, _) = try await transport.stream(for: URLRequest(url: server.url("/cut")))
                _ = try await cut.collect(maxBytes: 8 << 20)
                Issue.record("a body cut short streamed without an error")
            } catch {
                let code = (error as? TransportError)?.code
                #expect(code == .truncatedBody || code == .connectionLost, "\(error)")
            }
            #expect(server.requests(path: "/body").count == 1)
            #expect(server.requests(path: "/moved").count == 1 && server.requests(path: "/missing").count == 1)
            #expect(delegate.calls.current.isEmpty, "the session's delegate saw \(delegate.calls.current)")
        }

        /// On a session-with-a-delegate's own task corelibs held the whole body out of sight
        /// until it ended, so a body of no declared length grew memory until it ended (an endless
        /// one until a deadline). The routed session sees every byte. (A 304 that
        /// declares a length, which has no body, is checked on the way.)
        @Test(
            "Linux: a session with a delegate of its own: an endless body ends at the limit, a declared length at once, a 304 at once",
            arguments: [true, false])
        func ownDelegateBodyLimit(chunked: Bool) async throws {
            let server = try HostileServer()
            defer { server.shutdown() }
            // 2 MiB of no declared length against a 1 MiB limit, chunked or until the connection
            // closes, and then nothing, the body never ending (not an endless flood: on corelibs
            // one keeps the shared work queue busy for minutes under ThreadSanitizer after the
            // cancel, stalling every other suite's URLSession requests; seen in a TSan run).
            let piece = Data(repeating: 0x61, count: 64 << 10)
            let undeclared =
                chunked
                ? Data("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
                    + (0..<32).reduce(into: Data()) { body, _ in
                        body += Data("10000\r\n".utf8) + piece + Data("\r\n".utf8)
                    }
                : Data("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".utf8) + Data(repeating: 0x61, count: 2 << 20)
            server.route("/endless", .rawThenHold(undeclared))
            let head = Data(
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 67108864\r\n\r\n".utf8)
            server.route("/big", .rawThenHold(head + Data(repeating: 0x61, count: 64 << 10)))
            // Closed after it: the server holds a connection once it has answered, so nothing may
            // be sent on it again.
            let closing = Data("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 67108864\r\n\r\n".utf8)
            server.route("/head", .rawThenHold(closing))
            server.route(
                "/unchanged",
                .rawThenHold(Data("HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nContent-Length: 500\r\n\r\n".utf8)))
            let endlessSession = URLSession(configuration: .ephemeral, delegate: CountingDelegate(), delegateQueue: nil)
            defer { endlessSession.finishTasksAndInvalidate() }
            let session = URLSession(configuration: .ephemeral, delegate: CountingDelegate(), delegateQueue: nil)
            defer { session.finishTasksAndInvalidate() }
            // Before: the body held until its end, which never comes (`.timedOut` at the total
            // deadline).
            let endlessTransport = URLSessionTransport(
                session: endlessSession, limits: ResponseLimits(maxBodyBytes: 1 << 20), totalTimeout: 100)
            let transport = URLSessionTransport(
                session: session, limits: ResponseLimits(maxBodyBytes: 1 << 20), totalTimeout: 100)

            var endless = URLRequest(url: server.url("/endless"))
            endless.timeoutInterval = 120
            await #expect {
                _ = try await endlessTransport.data(for: endless)
            } throws: { error in
                (error as? TransportError)?.code == .responseTooLarge
            }

            var big = URLRequest(url: server.url("/big"))
            big.timeoutInterval = 120
            let started = ContinuousClock.now
            await #expect {
                _ = try await transport.data(for: big)
            } throws: { error in
                (error as? TransportError)?.code == .responseTooLarge
            }
            #expect(ContinuousClock.now - started < .seconds(60), "at once, not at the 120 s idle timeout")

            var headRequest = URLRequest(url: server.url("/head"))
            headRequest.httpMethod = "HEAD"
            headRequest.timeoutInterval = 120
            let (headBody, headResponse) = try await transport.data(for: headRequest)
            #expect(headResponse.statusCode == 200 && headBody.isEmpty)

            // RFC 9110 lets a 304 declare the stored representation's length; it has no body.
            var conditional = URLRequest(url: server.url("/unchanged"))
            conditional.setValue("\"v1\"", forHTTPHeaderField: "If-None-Match")
            conditional.timeoutInterval = 120
            let conditionalStart = ContinuousClock.now
            let (unchangedBody, unchanged) = try await transport.data(for: conditional)
            #expect(unchanged.statusCode == 304 && unchangedBody.isEmpty)
            #expect(ContinuousClock.now - conditionalStart < .seconds(60), "at once, not at the 120 s idle timeout")
        }

        @Test(
            "Linux: a session with a delegate of its own: a body flowing past the timeout arrives whole; silence is .timedOut"
        )
        func ownDelegateIdleTimeout() async throws {
            final class OwnDelegate: NSObject, URLSessionDataDelegate, Sendable {}
            let server = try HostileServer()
            defer { server.shutdown() }
            // 24 bytes, one every 0.25 s: 6 s in all, never 3 s without a byte.
            let body = Data("abcdefghijklmnopqrstuvwx".utf8)
            server.route("/drip", .drip(body: body, interval: 0.25))
            server.route("/silent", .acceptAndHang)
            let session = URLSession(configuration: .ephemeral, delegate: OwnDelegate(), delegateQueue: nil)
            defer { session.finishTasksAndInvalidate() }
            let transport = URLSessionTransport(session: session)
            var request = URLRequest(url: server.url("/drip"))
            request.timeoutInterval = 3
            // Once: .timedOut ("No data for 3.0 s") after 3 s, the bytes still arriving.
            let (data, response) = try await transport.data(for: request)
            #expect(response.statusCode == 200)
            #expect(data == body)

            var silent = URLRequest(url: server.url("/silent"))
            silent.timeoutInterval = 1
            // The watchdog's 1 s (and 1 ms). The shortest of up to three tries counts: a loaded
            // run once took 2.04 s for a 1 s timer, and a timer of 2 s can never take less than 2 s.
            var shortest = Duration.seconds(3_600)
            for _ in 0..<3 where shortest >= .milliseconds(1_800) {
                let started = ContinuousClock.now
                await #expect {
                    _ = try await transport.data(for: silent)
                } throws: { ($0 as? TransportError)?.code == .timedOut }
                shortest = min(shortest, ContinuousClock.now - started)
            }
            #expect(shortest < .milliseconds(1_800), "\(shortest)")

            // A 401 with a Basic challenge (corelibs hangs on it past every timeout when no
            // delegate answers): it is the response here too.
            server.route("/challenge", .challenge())
            var challenged = URLRequest(url: server.url("/challenge"))
            challenged.timeoutInterval = 120
            let challengeStart = ContinuousClock.now
            let (_, challenge) = try await transport.data(for: challenged)
            #expect(challenge.statusCode == 401)
            #expect(ContinuousClock.now - challengeStart < .seconds(60), "not at the 120 s idle timeout")
        }

        @Test(
            "Linux: a consumer further behind than the buffer and the spill limit ends the stream with .responseTooLarge",
            arguments: [Int64(0), 1 << 20])
        func slowConsumerOverflows(spillLimit: Int64) async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/firehose") { _ in
                LoopbackResponse(status: 200, body: Data(repeating: 0x5A, count: 32 << 20))
            }
            let transport = URLSessionTransport(
                session: makeIsolatedSession(), streamBufferSize: 256 * 1024, streamSpillLimit: spillLimit)
            let (stream, _) = try await transport.stream(for: URLRequest(url: server.url("/firehose")))
            var iterator = stream.makeAsyncIterator()
            var received = try #require(try await iterator.next()).count
            try await Task.sleep(nanoseconds: 1_500_000_000)  // the consumer falls behind
            do {
                while let chunk = try await iterator.next() { received += chunk.count }
                Issue.record("the stream ended normally after \(received) bytes; expected an overflow")
            } catch {
                #expect((error as? TransportError)?.code == .responseTooLarge, "\(error)")
            }
            #expect(received < 32 << 20)
        }
    #endif
}

/// Where this process's open descriptors point (from /proc/self/fd).
/// The stream spill files this process has open: where each descriptor points and the size of
/// the file (which has no name any more).
func openSpillFiles() -> [(target: String, size: Int64)] {
    let manager = FileManager.default
    return ((try? manager.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { descriptor in
        let path = "/proc/self/fd/\(descriptor)"
        guard let target = try? manager.destinationOfSymbolicLink(atPath: path), target.contains("gentle-stream-")
        else { return nil }
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return (target, Int64(status.st_size))
    }
}

func openFileTargets() -> [String] {
    let manager = FileManager.default
    return ((try? manager.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap {
        try? manager.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")
    }
}
