// Pending: needs URLProtocolStub, URLProtocolStubNetworkEngine, the seed's NetworkEngine
// requirements (submitBackgroundDownload(_:), submitBackgroundUpload(_:fileUrl:)),
// JSONEncoder.defaultEncoder, GifBuilder, URLBuilder as an open class with
// queryParameterString(field:value:contentType:), and NetworkManager subclassable with state.
import Foundation
import YNetwork

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A NetworkManager that remembers the last status it saw, as apps subclass it to read headers.
open class PeekingNetworkManager: NetworkManager {
    public private(set) var lastStatusCode: Int?

    open override func peekTaskResult(request: NetworkRequest, data: Data?, response: URLResponse?, error: Error?) {
        lastStatusCode = (response as? HTTPURLResponse)?.statusCode
    }
}

/// A manager wired to the stub, as the seed's tests wire one.
public func makeStubbedManager() -> PeekingNetworkManager {
    let manager = PeekingNetworkManager()
    manager.configure(
        with: NetworkManagerConfiguration(
            basePath: "https://api.example.com", networkEngine: URLProtocolStubNetworkEngine()))
    return manager
}

/// An engine of the app's own, written to the seed's protocol.
public final class RecordingEngine: NetworkEngine {
    public private(set) var requests: [URLRequest] = []
    private var session: URLSession = .shared

    public init() {}

    public func configure(with configuration: NetworkEngineConfiguration) {
        session = URLSession(configuration: .ephemeral, delegate: configuration.sessionDelegate, delegateQueue: nil)
    }

    public func submit(_ request: URLRequest) async throws -> (Data, URLResponse) {
        requests.append(request)
        return try await session.data(for: request)
    }

    public func submitBackgroundDownload(_ request: URLRequest) throws -> Cancelable {
        return session.downloadTask(with: request)
    }

    public func submitBackgroundUpload(_ request: URLRequest, fileUrl: URL) throws -> Cancelable {
        return session.uploadTask(with: request, fromFile: fileUrl)
    }
}

/// A URL builder that keeps `false` flags as `=false`.
public final class FlagKeepingURLBuilder: URLBuilder {
    public override func queryParameterString(field: String, value: Any, contentType: RequestContentType) -> String? {
        if let flag = value as? Bool, !flag {
            return "\(field)=false"
        }
        return super.queryParameterString(field: field, value: value, contentType: contentType)
    }
}

/// A GIF upload from the bundle.
public struct GifUploadRequest: MultipartRequest {
    public init() {}

    public var path: PathRepresentable { return "/gifs" }
    public var multipart: MultipartBuilder {
        return GifBuilder(fileName: "loading", formFields: ["caption": "spinner"], boundary: "gif-boundary")
    }
}

/// The pretty-printed encoder the app logs bodies with.
public let loggingEncoder: JSONEncoder = .defaultEncoder

/// Query parameters of the app's own type.
public struct PagingParameters: ParametersBuilder {
    public let page: Int

    public init(page: Int) {
        self.page = page
    }

    public var parameters: Parameters { return ["page": page] }
}
