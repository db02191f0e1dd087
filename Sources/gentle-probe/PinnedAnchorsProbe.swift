import Foundation
import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The child of the "pinned certificates are the only trust anchors" test: it runs where the
/// test has put its own CA into the system's CA directory (a private mount namespace), sends one
/// GET through a ``PinningTransport`` whose only anchor is another certificate, and prints one
/// line: `success <status>` or `error <TransportError code>` (`error other <type>` for anything
/// else).
///
/// Usage: `gentle-probe pinned-anchors <url> <pinned certificate PEM path>`
enum PinnedAnchorsProbe {
    static func run(_ arguments: [String]) async -> Never {
        guard arguments.count == 2, let url = URL(string: arguments[0]), let host = url.host,
            let pem = try? String(contentsOfFile: arguments[1], encoding: .utf8),
            let certificates = try? CertificatePinning.certificatesDER(fromPEM: pem), !certificates.isEmpty
        else {
            FileHandle.standardError.write(
                Data("usage: gentle-probe pinned-anchors <url> <pinned certificate PEM path>\n".utf8))
            exit(2)
        }
        let transport = PinningTransport(pinnedDomains: [
            host: CertificatePinningEvaluator(pinnedCertificates: Set(certificates), performDefaultValidation: false)
        ])
        var request = URLRequest(url: url)
        request.timeoutInterval = 30
        let line: String
        do {
            let (_, response) = try await transport.data(for: request)
            line = "success \(response.statusCode)"
        } catch let error as TransportError {
            line = "error \(error.code)"
        } catch {
            line = "error other \(type(of: error))"
        }
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
        exit(0)
    }
}
