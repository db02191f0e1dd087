import Foundation
import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns a ``NetworkRequest`` into the `URLRequest` that is sent.
///
/// Order: URL (``URLBuilder``), method, timeout and cache policy (the request's, else the
/// configuration's), the configuration's headers (its credential headers only for a request to
/// the base path's origin), `Content-Type` from the request content type (on every request, as
/// Y-Network sets it, with or without a body), for a ``MultipartRequest`` a `Boundary` header
/// naming its boundary (as Y-Network adds one), the request's own headers (which win), then the
/// body. A body that cannot be encoded is ``NetworkError/serialization(_:)`` wrapping the cause
/// (``NetworkError/noEncoder`` included, as in Y-Network). No `Accept` is added, as
/// in Y-Network (set one in the request's or the configuration's headers;
/// ``ResponseContentType/header`` gives the usual one). A multipart body larger than
/// ``MultipartBuilder/streamingThreshold`` is written to a temporary file and sent from there.
///
/// Every header is checked before it is set (Foundation would silently drop a value with CR, LF
/// or NUL): a bad name or value is ``NetworkError/serialization(_:)`` wrapping the core's
/// `TransportError` `.invalidRequest`, and nothing is sent. Headers a ``SessionManager`` applies
/// are set by its own code and cannot be checked this way.
struct RequestAssembler {
    let configuration: NetworkManagerConfiguration

    /// A built request, and the temporary file its body streams from, if any.
    struct Built: Sendable {
        let request: URLRequest
        let bodyFile: URL?

        func removeTemporaryFile() {
            if let bodyFile { PrivateTemporaryFile.remove(bodyFile) }
        }
    }

    func build(_ request: NetworkRequest) throws -> Built {
        let url = try URLBuilder().url(for: request, configuration: configuration)
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        if request.timeoutInterval > 0 {
            urlRequest.timeoutInterval = request.timeoutInterval
        } else if configuration.timeoutInterval > 0 {
            urlRequest.timeoutInterval = configuration.timeoutInterval
        }
        if let policy = request.cachePolicy ?? configuration.cachePolicy {
            urlRequest.cachePolicy = policy
        }
        // The body is read once, and a multipart body's boundary is the one its Content-Type
        // names: `multipart` written as a computed property makes a new builder, with a new
        // random boundary, on every read, so the header named one boundary and the body used
        // another (the server found no parts).
        let body = request.body
        var requestType = request.requestType
        if let multipart = body as? MultipartBuilder, case .multipart = requestType {
            requestType = .multipart(boundary: multipart.boundary)
        }
        // Y-Network's extra `Boundary` field on a multipart request: the boundary of the body
        // that is sent (read once above), else of the request's builder.
        let boundaryField: String? =
            request is any MultipartRequest
            ? ((body as? MultipartBuilder)?.boundary ?? (request as? any MultipartRequest)?.multipart.boundary) : nil
        do throws(TransportError) {
            try RequestValidator.checkFieldsSize(configuration.headers ?? [:], url: urlRequest.url)
            try RequestValidator.checkFieldsSize(request.headers ?? [:], url: urlRequest.url)
            // The configuration's credentials go to the configuration's base path's origin only.
            // An absolute path to another one (a `next` link, a CDN, a presigned upload URL), or
            // a request's own base path elsewhere (an S3 bucket), gets its other headers only,
            // as a redirect there would.
            let toBase = NetworkManager.sessionCovers(url, base: configuration.basePath)
            for (name, value) in (configuration.headers ?? [:]).sorted(by: { $0.key < $1.key })
            where toBase || !Origin.isCredentialHeader(name) {
                try RequestValidator.setHeader(value, named: name, on: &urlRequest)
            }
            if let header = requestType.header {
                try RequestValidator.setHeader(header.value, named: header.field, on: &urlRequest)
            }
            if let boundaryField {
                try RequestValidator.setHeader(boundaryField, named: "Boundary", on: &urlRequest)
            }
            for (name, value) in (request.headers ?? [:]).sorted(by: { $0.key < $1.key }) {
                try RequestValidator.setHeader(value, named: name, on: &urlRequest)
            }
        } catch {
            throw NetworkError.serialization(error)
        }
        guard let body else { return Built(request: urlRequest, bodyFile: nil) }
        do {
            if let multipart = body as? MultipartBuilder,
                try multipart.contentLength() > type(of: multipart).streamingThreshold
            {
                let file: URL
                do {
                    file = try PrivateTemporaryFile.url(named: "ynetwork-multipart-\(UUID().uuidString)")
                } catch {
                    throw MultipartError.cannotWrite(FileManager.default.temporaryDirectory)
                }
                do {
                    try multipart.writeBody(to: file)
                } catch {
                    PrivateTemporaryFile.remove(file)
                    throw error
                }
                return Built(request: urlRequest, bodyFile: file)
            }
            let factory = request.parserFactory ?? configuration.parserFactory
            urlRequest.httpBody = try body.body(encoder: factory.encoder(for: requestType))
        } catch NetworkError.noEncoder {
            // Y-Network wraps every encoding failure, this one too.
            throw NetworkError.serialization(NetworkError.noEncoder)
        } catch let error as NetworkError {
            throw error
        } catch let error as CancellationError {
            // The transfer was cancelled while its multipart body was written: a cancellation,
            // as everywhere else, not a serialization failure.
            throw error
        } catch {
            throw NetworkError.serialization(error)
        }
        return Built(request: urlRequest, bodyFile: nil)
    }
}
