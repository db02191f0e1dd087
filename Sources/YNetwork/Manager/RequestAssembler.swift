import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns a ``NetworkRequest`` into the `URLRequest` that is sent.
///
/// Order: URL (``URLBuilder``), method, timeout and cache policy (the request's, else the
/// configuration's), the configuration's headers, `Content-Type` and `Accept` from the content
/// types, the request's own headers (which win), then the body. A multipart body larger than
/// ``MultipartBuilder/streamingThreshold`` is written to a temporary file and sent from there.
struct RequestAssembler {
    let configuration: NetworkManagerConfiguration

    /// A built request, and the temporary file its body streams from, if any.
    struct Built: Sendable {
        let request: URLRequest
        let bodyFile: URL?

        func removeTemporaryFile() {
            if let bodyFile { try? FileManager.default.removeItem(at: bodyFile) }
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
        for (name, value) in (configuration.headers ?? [:]).sorted(by: { $0.key < $1.key }) {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        if request.body != nil, let header = request.requestType.header {
            urlRequest.setValue(header.value, forHTTPHeaderField: header.field)
        }
        if let header = request.responseType.header, urlRequest.value(forHTTPHeaderField: header.field) == nil {
            urlRequest.setValue(header.value, forHTTPHeaderField: header.field)
        }
        for (name, value) in (request.headers ?? [:]).sorted(by: { $0.key < $1.key }) {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        guard let body = request.body else { return Built(request: urlRequest, bodyFile: nil) }
        do {
            if let multipart = body as? MultipartBuilder,
                try multipart.contentLength() > type(of: multipart).streamingThreshold
            {
                let file = FileManager.default.temporaryDirectory
                    .appendingPathComponent("ynetwork-multipart-\(UUID().uuidString)")
                do {
                    try multipart.writeBody(to: file)
                } catch {
                    try? FileManager.default.removeItem(at: file)
                    throw error
                }
                return Built(request: urlRequest, bodyFile: file)
            }
            let factory = request.parserFactory ?? configuration.parserFactory
            urlRequest.httpBody = try body.body(encoder: factory.encoder(for: request.requestType))
        } catch let error as NetworkError {
            throw error
        } catch {
            throw NetworkError.serialization(error)
        }
        return Built(request: urlRequest, bodyFile: nil)
    }
}
