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

    @Test("Cancellation, HttpError and NetworkError pass through unchanged")
    func passThrough() {
        #expect(YNetwork.NetworkError.mapping(CancellationError()) is CancellationError)
        #expect(YNetwork.NetworkError.mapping(YNetwork.NetworkError.noData) as? YNetwork.NetworkError == .noData)
        let http = HttpError(statusCode: 418, headers: [:], data: Data())
        #expect((YNetwork.NetworkError.mapping(http) as? HttpError)?.statusCode == 418)
    }

    private func kind(_ error: any Error) -> String {
        switch error {
        case YNetwork.NetworkError.invalidSSL: "invalidSSL"
        case YNetwork.NetworkError.noInternet: "noInternet"
        case is TransportError, is URLError: "unchanged"
        default: "other: \(error)"
        }
    }
}
