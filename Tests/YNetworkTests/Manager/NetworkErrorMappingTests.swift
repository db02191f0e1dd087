import Foundation
import GentleNetworking
import Testing
import YNetwork

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("NetworkError mapping from the transports' errors")
struct NetworkErrorMappingTests {
    @Test(
        "libcurl transport errors: TLS and pin failures are invalidSSL; unreachable hosts are noInternet",
        arguments: [
            (TransportError.Code.tlsFailure, "invalidSSL"), (.pinMismatch, "invalidSSL"),
            (.cannotResolveHost, "noInternet"), (.cannotConnect, "noInternet"), (.connectionLost, "noInternet"),
            (.notConnectedToInternet, "noInternet"), (.timedOut, "unchanged"), (.tooManyRedirects, "unchanged"),
        ])
    func transportErrors(code: TransportError.Code, expected: String) {
        let error = TransportError(code, url: nil, message: "m")
        #expect(kind(YNetwork.NetworkError.mapping(error)) == expected)
    }

    @Test(
        "URLSession errors map the same way",
        arguments: [
            (URLError.Code.secureConnectionFailed, "invalidSSL"), (.serverCertificateUntrusted, "invalidSSL"),
            (.cannotFindHost, "noInternet"), (.cannotConnectToHost, "noInternet"),
            (.networkConnectionLost, "noInternet"), (.notConnectedToInternet, "noInternet"),
            (.dnsLookupFailed, "noInternet"), (.timedOut, "unchanged"),
        ])
    func urlErrors(code: URLError.Code, expected: String) {
        #expect(kind(YNetwork.NetworkError.mapping(URLError(code))) == expected)
    }

    @Test(
        "An NSError in NSURLErrorDomain (what URLProtocols and mocks report) maps by its code, keeping the error",
        arguments: [
            (NSURLErrorSecureConnectionFailed, "invalidSSL"), (NSURLErrorServerCertificateUntrusted, "invalidSSL"),
            (NSURLErrorCannotFindHost, "noInternet"), (NSURLErrorNotConnectedToInternet, "noInternet"),
            (NSURLErrorNetworkConnectionLost, "noInternet"), (NSURLErrorTimedOut, "unchanged"),
        ])
    func nsErrors(code: Int, expected: String) {
        let error = NSError(domain: NSURLErrorDomain, code: code)
        let mapped = YNetwork.NetworkError.mapping(error)
        #expect(kind(mapped) == expected)
        switch mapped as? YNetwork.NetworkError {
        case .invalidSSL(let cause), .noInternet(let cause):
            #expect((cause as NSError).code == code && (cause as NSError).domain == NSURLErrorDomain)
        default:
            #expect((mapped as NSError).code == code, "unchanged: \(mapped)")
        }
        let other = NSError(domain: "app", code: NSURLErrorCannotFindHost)
        #expect(kind(YNetwork.NetworkError.mapping(other)) == "unchanged", "another domain is not mapped")
    }

    @Test("== compares as Y-Network does: noInternet by NSError code and domain, wrapped errors by description")
    func equalityAsInYNetwork() {
        let bare = URLError(.notConnectedToInternet)
        let withURL = URLError(
            .notConnectedToInternet, userInfo: [NSURLErrorFailingURLErrorKey: URL(string: "https://a.example/x")!])
        #expect(YNetwork.NetworkError.noInternet(bare) == .noInternet(withURL))
        #expect(YNetwork.NetworkError.noInternet(bare) != .noInternet(URLError(.timedOut)))
        struct Described: LocalizedError {
            let detail: String
            var errorDescription: String? { "bad body" }
        }
        #expect(
            YNetwork.NetworkError.deserialization(Described(detail: "1"))
                == .deserialization(Described(detail: "2")))
        #expect(YNetwork.NetworkError.invalidSSL(bare) != .noInternet(bare))
    }

    @Test("HttpError and NetworkError pass through unchanged; a cancellation is URLError(.cancelled), as Y-Network's")
    func passThrough() {
        #expect((YNetwork.NetworkError.mapping(CancellationError()) as? URLError)?.code == .cancelled)
        #expect((YNetwork.NetworkError.mapping(URLError(.cancelled)) as? URLError)?.code == .cancelled)
        #expect(YNetwork.NetworkError.mapping(YNetwork.NetworkError.noData) as? YNetwork.NetworkError == .noData)
        let http = HttpError(statusCode: 418, headers: [:], data: Data())
        #expect((YNetwork.NetworkError.mapping(http) as? HttpError)?.statusCode == 418)
    }

    private func kind(_ error: any Error) -> String {
        switch error {
        case YNetwork.NetworkError.invalidSSL: "invalidSSL"
        case YNetwork.NetworkError.noInternet: "noInternet"
        case is TransportError, is URLError: "unchanged"
        case let other as NSError where [NSURLErrorDomain, "app"].contains(other.domain): "unchanged"
        default: "other: \(error)"
        }
    }
}
