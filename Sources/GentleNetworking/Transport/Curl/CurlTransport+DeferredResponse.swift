#if canImport(CCurl)
    import Foundation
    import FoundationNetworking

    extension CurlTransport: FieldAddingTransport {
        /// `data(for:)`, with the `HTTPURLResponse` built only if the caller asks for it.
        ///
        /// Redirects are followed as in `data(for:)` (a 3xx is always built, to read `Location`).
        func deferredData(for request: URLRequest) async throws -> (Data, DeferredResponse) {
            try await deferredData(for: request, adding: [])
        }

        /// ``deferredData(for:)`` with `fields` sent as if `request` carried them; a redirect's
        /// request carries them too, as it would carry the request's own.
        func deferredData(
            for request: URLRequest, adding fields: [(String, String)]
        ) async throws -> (Data, DeferredResponse) {
            let request = try await RequestBodyStream.reading(request)
            // Made at the first redirect: most requests have none.
            var tracker: RedirectTracker?
            var current = request
            var added = fields
            let deadline = CurlEasyRequest.deadline(for: configuration)
            while true {
                try Task.checkCancellation()
                let trust = try trust(for: current.url)
                let easy = try CurlEasyRequest(
                    request: current, configuration: configuration, trust: trust, pool: handles, addedFields: added,
                    deadline: deadline)
                let (body, head) = try await runHead(easy)
                let url = easy.url
                let deferred = DeferredResponse(
                    statusCode: head.statusCode, url: url, receivedFields: { head.headers }
                ) {
                    guard let response = CurlEasyRequest.makeResponse(url: url, head: head) else {
                        throw TransportError(.badResponse, url: url, message: "The server sent no valid status line.")
                    }
                    return response
                }
                guard configuration.maxRedirects > 0, RedirectTracker.redirectStatuses.contains(head.statusCode) else {
                    return (body, deferred)
                }
                // The hop as sent: from here on the added fields are part of the request.
                let sent = added.isEmpty ? current : current.adding(added)
                added = []
                var hops =
                    tracker
                    ?? RedirectTracker(
                        originalURL: request.url, originalMethod: request.httpMethod,
                        maxRedirects: configuration.maxRedirects)
                guard let next = hops.nextRequest(after: try deferred.response(), for: sent) else {
                    return (body, deferred)
                }
                try hops.follow(to: next.url, method: next.httpMethod)
                hops.noteHop(status: head.statusCode, from: sent, to: next)
                tracker = hops
                current = next
            }
        }
    }
#endif
