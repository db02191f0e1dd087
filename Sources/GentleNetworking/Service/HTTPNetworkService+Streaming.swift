import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HTTPNetworkService {
    /// The most bytes of a non-2xx streamed response read for its ``NetworkError``.
    static let streamedErrorBodyLimit = 64 << 10

    /// Sends `endpoint` and returns as soon as a 2xx response head arrives, with the body as it
    /// arrives: the same request building, credentials, logging and redaction as
    /// ``request(to:via:)``.
    ///
    /// - A non-2xx status throws the same ``NetworkError`` as ``request(to:via:)``, with at most
    ///   64 KiB of the body read for it (that stream is then ended).
    /// - A transport failure mid-body is thrown by the iteration as a ``NetworkError`` with the
    ///   transport's code, as ``request(to:via:)`` throws it; `CancellationError` when cancelled.
    /// - The endpoint's ``EndpointProtocol/maxResponseBytes`` does not apply to a stream, which is
    ///   read as it arrives (``CurlTransport`` buffers at most 1 MiB).
    public func stream(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> (HTTPByteStream, HTTPURLResponse) {
        let (body, response, _) = try await streamExchange(to: endpoint, via: environment)
        return (body, response)
    }

    /// ``stream(to:via:)``, with the request that was sent (for the credentials its errors scrub).
    private func streamExchange(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol
    ) async throws -> (HTTPByteStream, HTTPURLResponse, URLRequest) {
        let request = try await prepare(endpoint, environment)
        let log = NetworkLogSession(logger: logger, request: request, alsoHeaders: [authService.headerField])
        // Steps (retries, refreshes, redirects) are logged as they happen; the metrics logged with
        // the head cover what happened up to it (the transfer of the body is still running).
        let recorder = log.map { ExchangeRecorder(log: $0) }
        let body: HTTPByteStream
        let response: HTTPURLResponse
        let witness: RequestWitness?
        do {
            ((body, response), witness) = try await witnessing(request, authorized: endpoint.requiresAuth) {
                try await ExchangeRecorder.observing(recorder) {
                    try await Origin.withCredentialHeader(authService.headerField) {
                        try await transport.stream(for: request)
                    }
                }
            }
        } catch {
            log?.failure(error, metrics: recorder?.snapshot())
            let failure = mapped(error, request: request)
            await notifyIfUnauthorized(failure)
            throw failure
        }
        guard (200..<300).contains(response.statusCode) else {
            var data = Data()
            do {
                for try await chunk in body {
                    data.append(chunk.prefix(Self.streamedErrorBodyLimit - data.count))
                    if data.count >= Self.streamedErrorBodyLimit { break }
                }
            } catch is CancellationError {
                // The caller cancelled while the error's body was read: a cancellation, not the
                // status error (which a caller's own retry-on-503 would retry).
            } catch {
                // What arrived before the failure is the error's body.
            }
            body.cancel()
            if Task.isCancelled {
                // The exchange's record ends as a cancellation, as every other path's does.
                log?.failure(CancellationError(), metrics: recorder?.snapshot())
                throw CancellationError()
            }
            log?.response(response, body: data, metrics: recorder?.snapshot())
            await notifyIfUnauthorized(status: response.statusCode, from: response.url, for: request, witness: witness)
            // Scrubbed of a token a refresh put on the retried request too, as on every path.
            let sent = request.carryingForScrubbing(witness?.refreshedCredentials ?? [])
            throw statusError(response, data: data, request: sent)
        }
        // The head is logged; the body is the caller's to read, so it is not.
        log?.response(response, body: Data(), metrics: recorder?.snapshot())
        let service = self
        // Scrubbed of a token a refresh put on the retried request too, as on every path.
        let sent = request.carryingForScrubbing(witness?.refreshedCredentials ?? [])
        return (body.mappingErrors { service.mapped($0, request: request) }, response, sent)
    }

    /// ``stream(to:via:)`` as UTF-8 lines; see ``HTTPByteStream/lines(maxLineBytes:)``.
    public func lines(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol,
        maxLineBytes: Int = LineSplitter.defaultMaxLineBytes
    ) async throws -> HTTPLineSequence {
        try await stream(to: endpoint, via: environment).0.lines(maxLineBytes: maxLineBytes)
    }

    /// ``stream(to:via:)`` as Server-Sent Events; see
    /// ``HTTPByteStream/serverSentEvents(maxLineBytes:maxEventBytes:lastEventID:)``.
    public func serverSentEvents(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol,
        maxLineBytes: Int = LineSplitter.defaultMaxLineBytes,
        maxEventBytes: Int = ServerSentEventParser.defaultMaxEventBytes
    ) async throws -> ServerSentEventSequence {
        try await stream(to: endpoint, via: environment).0.serverSentEvents(
            maxLineBytes: maxLineBytes, maxEventBytes: maxEventBytes)
    }

    /// ``stream(to:via:)`` as JSON Lines of `type`, decoded with the service's
    /// ``jsonDecoder``; see ``HTTPByteStream/jsonLines(of:decoder:maxLineBytes:)``. A line that
    /// does not decode is ``StreamingError/undecodableLine(line:message:)`` whose message is
    /// scrubbed of the request's credentials, as ``request(to:via:)``'s decoding errors are.
    public func jsonLines<Element: Decodable>(
        of type: Element.Type, to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol,
        maxLineBytes: Int = LineSplitter.defaultMaxLineBytes
    ) async throws -> JSONLinesSequence<Element> {
        let (body, _, request) = try await streamExchange(to: endpoint, via: environment)
        return JSONLinesSequence(
            bytes: body, decoder: JSONLinesDecoder(decoder: jsonDecoder, secrets: secrets(of: request)),
            maxLineBytes: maxLineBytes)
    }

    /// Server-Sent Events of `endpoint` that survive dropped connections: an `EventSource`-style
    /// client (see ``EventSourceSequence`` and ``EventSourceState`` for the rules). Each
    /// connection is a ``stream(to:via:)`` with `Accept: text/event-stream` and, when one is
    /// known, `Last-Event-ID`.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint to stream, as for ``stream(to:via:)``.
    ///   - environment: Where it is.
    ///   - policy: `EventSourcePolicy()` by default: 3 s before reconnecting unless the server
    ///     says otherwise, 3 backed-off reconnects without an event before giving up.
    ///   - lastEventID: The ID to resume after; `nil` (the default) for the start, or the
    ///     endpoint's own `Last-Event-ID` header when it has one (spelled in several cases: the
    ///     one the request builder would send, the last name in sorted order).
    ///   - clock: ``RetryClock/live`` by default; tests inject one to assert the delays.
    ///   - maxLineBytes: The longest line accepted; 1 MiB by default.
    ///   - maxEventBytes: The largest event data accepted; 8 MiB by default.
    public func eventSource(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol,
        policy: EventSourcePolicy = EventSourcePolicy(), lastEventID: String? = nil, clock: RetryClock = .live,
        maxLineBytes: Int = LineSplitter.defaultMaxLineBytes,
        maxEventBytes: Int = ServerSentEventParser.defaultMaxEventBytes
    ) -> EventSourceSequence {
        let service = self
        // An endpoint that carries `Last-Event-ID` itself (any spelling) resumes from it, as if
        // given as `lastEventID`; the stream's own IDs replace it from then on. Spelled more than
        // once, the one a request would carry: the last in the sorted order the builder sets
        // headers in (the first a dictionary happened to give changed from run to run).
        let resumeID =
            lastEventID
            ?? endpoint.headers.filter { $0.key.equalsIgnoringASCIICase("Last-Event-ID") }.max { $0.key < $1.key }?
            .value
        return EventSourceSequence(
            policy: policy, lastEventID: resumeID, clock: clock, maxLineBytes: maxLineBytes,
            maxEventBytes: maxEventBytes
        ) { lastEventID in
            // The endpoint's own spellings of these names go first: set later (the headers are set
            // in sorted order, `accept` after `Accept`), a stale `Last-Event-Id` of the caller's
            // was sent on every reconnect instead of the stream's.
            var headers = endpoint.headers.filter {
                !$0.key.equalsIgnoringASCIICase("Accept") && !$0.key.equalsIgnoringASCIICase("Last-Event-ID")
            }
            headers["Accept"] = "text/event-stream"
            // An event stream is never answered from a cache (WHATWG: cache mode "no-store"):
            // a URLCache on Apple platforms could keep a finished stream that a careless server
            // sent with `max-age` and replay it on every reconnect, as progress each time. Kept
            // when the endpoint sets its own.
            if !headers.keys.contains(where: { $0.equalsIgnoringASCIICase("Cache-Control") }) {
                headers["Cache-Control"] = "no-cache"
            }
            if let lastEventID, !lastEventID.isEmpty { headers["Last-Event-ID"] = lastEventID }
            // One connection per attempt: the event source's policy is the only retry loop
            // (a `RetryTransport` below, as in the default service, passes each attempt on once).
            return try await RetryTransport.$isBypassed.withValue(true) {
                try await service.stream(to: EventSourceEndpoint(base: endpoint, headers: headers), via: environment)
            }
        }
    }
}

/// An endpoint with the event-stream headers added.
private struct EventSourceEndpoint: EndpointProtocol {
    let base: any EndpointProtocol
    let headers: [String: String]

    var path: String { base.path }
    var method: HTTPMethod { base.method }
    var query: [URLQueryItem]? { base.query }
    var body: [String: EndpointAnyEncodable]? { base.body }
    var requiresAuth: Bool { base.requiresAuth }
    var timeoutInterval: TimeInterval? { base.timeoutInterval }
    var maxResponseBytes: Int64? { base.maxResponseBytes }
}
