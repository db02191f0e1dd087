#if canImport(CCurl)
    import Foundation
    import FoundationNetworking

    extension CurlTransport: DeferredResponseTransport {
        /// `data(for:)`, with the `HTTPURLResponse` built only if the caller asks for it.
        ///
        /// Redirects are followed as in `data(for:)` (a 3xx is always built, to read `Location`).
        func deferredData(for request: URLRequest) async throws -> (Data, DeferredResponse) {
            var tracker = RedirectTracker(originalURL: request.url, maxRedirects: configuration.maxRedirects)
            var current = request
            while true {
                try Task.checkCancellation()
                let trust = trust(for: current.url)
                let easy = try CurlEasyRequest(
                    request: current, configuration: configuration, trust: trust, pool: handles)
                let (body, head) = try await runHead(easy)
                let url = easy.request.url
                let deferred = DeferredResponse(
                    statusCode: head.statusCode, url: url, receivedFields: { head.headers }
                ) {
                    guard let response = CurlEasyRequest.makeResponse(url: url, head: head) else {
                        throw TransportError(.badResponse, url: url, message: "The server sent no valid status line.")
                    }
                    return response
                }
                guard configuration.maxRedirects > 0, RedirectTracker.redirectStatuses.contains(head.statusCode),
                    let next = tracker.nextRequest(after: try deferred.response(), for: current)
                else {
                    return (body, deferred)
                }
                try tracker.follow(to: next.url)
                tracker.noteHop(status: head.statusCode, from: current, to: next)
                current = next
            }
        }
    }
#endif
