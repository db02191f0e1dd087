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
        let request = try await prepare(endpoint, environment)
        let logging = logger.isEnabled
        let secrets = logging ? secrets(of: request) : []
        if logging { logger.log(.request(request, secrets: secrets)) }
        let start = DispatchTime.now().uptimeNanoseconds
        func elapsed() -> TimeInterval {
            TimeInterval(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000_000
        }
        let body: HTTPByteStream
        let response: HTTPURLResponse
        do {
            (body, response) = try await Origin.withCredentialHeaders([authService.headerField]) {
                try await transport.stream(for: request)
            }
        } catch {
            if logging { logger.log(.failure(error, request: request, duration: elapsed(), secrets: secrets)) }
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
            } catch {
                // What arrived before the failure is the error's body.
            }
            body.cancel()
            if logging {
                logger.log(.response(response, body: data, request: request, duration: elapsed(), secrets: secrets))
            }
            if response.statusCode == 401 { await invalidationHandler?.handleInvalidToken() }
            throw statusError(response, data: data, request: request)
        }
        // The head is logged; the body is the caller's to read, so it is not.
        if logging {
            logger.log(.response(response, body: Data(), request: request, duration: elapsed(), secrets: secrets))
        }
        let service = self
        return (body.mappingErrors { service.mapped($0, request: request) }, response)
    }

    /// ``stream(to:via:)`` as UTF-8 lines; see ``HTTPByteStream/lines(maxLineBytes:)``.
    public func lines(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol,
        maxLineBytes: Int = LineSplitter.defaultMaxLineBytes
    ) async throws -> HTTPLineSequence {
        try await stream(to: endpoint, via: environment).0.lines(maxLineBytes: maxLineBytes)
    }

    /// ``stream(to:via:)`` as Server-Sent Events; see
    /// ``HTTPByteStream/serverSentEvents(maxLineBytes:maxEventBytes:)``.
    public func serverSentEvents(
        to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol,
        maxLineBytes: Int = LineSplitter.defaultMaxLineBytes,
        maxEventBytes: Int = ServerSentEventParser.defaultMaxEventBytes
    ) async throws -> ServerSentEventSequence {
        try await stream(to: endpoint, via: environment).0.serverSentEvents(
            maxLineBytes: maxLineBytes, maxEventBytes: maxEventBytes)
    }

    /// ``stream(to:via:)`` as JSON Lines of `type`, decoded with the service's
    /// ``jsonDecoder``; see ``HTTPByteStream/jsonLines(of:decoder:maxLineBytes:)``.
    public func jsonLines<Element: Decodable>(
        of type: Element.Type, to endpoint: any EndpointProtocol, via environment: any APIEnvironmentProtocol,
        maxLineBytes: Int = LineSplitter.defaultMaxLineBytes
    ) async throws -> JSONLinesSequence<Element> {
        try await stream(to: endpoint, via: environment).0.jsonLines(
            of: type, decoder: jsonDecoder, maxLineBytes: maxLineBytes)
    }
}
