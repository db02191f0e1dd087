import Foundation
import GentleNetworkingTesting
import Testing

@testable import GentleNetworking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A pinned domain and a request's host are compared as pins are keyed: lowercased, one trailing
/// dot dropped. `https://api.example.com./` reached the host with default validation only (its
/// lookup kept the dot and found no pins), so any certificate a trusted CA issued was accepted.
@Suite("Pinned hosts: a trailing dot or a case difference never skips the pins")
struct PinnedHostTests {
    @Test("The key: lowercased, one trailing dot dropped")
    func key() {
        #expect(PinnedHost.key("API.Example.com.") == "api.example.com")
        #expect(PinnedHost.key("api.example.com") == "api.example.com")
        #expect(PinnedHost.key(".") == ".")
        #expect(PinnedHost.key("a..") == "a.")
    }

    @Test("The key of an IPv6 address: its one canonical spelling, brackets or not")
    func ipv6Key() {
        for spelling in ["::1", "[::1]", "0::1", "[::0001]", "0:0:0:0:0:0:0:1", "[0000:0::0:1]"] {
            #expect(PinnedHost.key(spelling) == "::1", "\(spelling)")
        }
        #expect(PinnedHost.key("[2001:DB8:0:0:0:0:0:A]") == "2001:db8::a")
        // Not an address: left to the name rules (`isComparable` refuses the zone's `%`).
        #expect(PinnedHost.key("fe80::1%eth0") == "fe80::1%eth0")
        #expect(PinnedHost.key("[::1") == "[::1")
        #expect(PinnedHost.key("127.0.0.1") == "127.0.0.1")
    }

    #if canImport(CCurl)
        @Test("CurlTransport finds a host's pins with a trailing dot and in any case")
        func curlLookup() throws {
            let transport = try CurlTransport(
                configuration: CurlTransport.Configuration(),
                trustByHost: ["localhost": CurlTrustSettings(pinnedKeyHashes: [Data(repeating: 1, count: 32)])])
            for text in ["https://localhost/", "https://LOCALHOST./", "https://localhost.:8443/x"] {
                // Before: nil for the dotted forms, so default validation only.
                #expect(try transport.trust(for: URL(string: text)) != nil, "\(text)")
            }
            #expect(try transport.trust(for: URL(string: "https://other.localhost/")) == nil)
        }

        @Test(
            "An IPv4 address in a shorthand form is refused when hosts are pinned (libcurl connects to its dotted quad)"
        )
        func shorthandIPv4Refused() throws {
            let transport = try CurlTransport(
                configuration: CurlTransport.Configuration(),
                trustByHost: ["127.0.0.1": CurlTrustSettings(pinnedKeyHashes: [Data(repeating: 1, count: 32)])])
            #expect(try transport.trust(for: URL(string: "https://127.0.0.1:8443/")) != nil)
            // Before: no pins found for these, so default validation only, to 127.0.0.1.
            for text in [
                "https://2130706433/", "https://0x7f.1/", "https://127.1/", "https://0177.0.0.1/",
                "https://[::ffff:127.0.0.1]/", "https://[::ffff:7f00:1]/",
            ] {
                #expect(throws: TransportError.self, "\(text)") { _ = try transport.trust(for: URL(string: text)) }
            }
            // Names and IPv6 literals are looked up as before.
            #expect(try transport.trust(for: URL(string: "https://example.com/")) == nil)
            #expect(try transport.trust(for: URL(string: "https://[::1]/")) == nil)
            #expect(CurlTransport.isPlainDottedQuadOrName("10.0.0.5") && CurlTransport.isPlainDottedQuadOrName("a.b"))
        }

        @Test(
            "A host that is not plain ASCII is refused before sending when hosts are pinned (libcurl maps it with IDNA)"
        )
        func nonASCIIHostRefused() async throws {
            let server = try LoopbackServer()
            defer { server.shutdown() }
            server.route("GET", "/x") { _ in .text("ok") }
            let pins = PublicKeyPinningEvaluator(pinnedKeyHashes: [Data(repeating: 1, count: 32)])
            let transport = PinningTransport(pinnedDomains: ["localhost": pins])
            let port = try #require(server.baseURL.port)
            // A fullwidth dot, an ideographic full stop, a soft hyphen, percent-encoded: libcurl
            // decodes and maps each to plain `localhost…`; Foundation's host kept the Unicode,
            // found no pins, and the request went out with default validation only.
            for text in [
                "https://localhost%EF%BC%8E:\(port)/x", "https://localhost%E3%80%82:\(port)/x",
                "https://local%C2%ADhost:\(port)/x",
            ] {
                let url = try #require(URL(string: text))
                let error = await #expect(throws: TransportError.self) {
                    _ = try await transport.data(for: URLRequest(url: url))
                }
                #expect(error?.code == .invalidRequest, "\(text): \(String(describing: error))")
            }
            #expect(server.receivedRequests.isEmpty)
            // A pinned domain in Unicode could never match: refused at once.
            let unicode = PinningTransport(pinnedDomains: ["bücher.example": pins])
            let refused = await #expect(throws: TransportError.self) {
                _ = try await unicode.data(for: URLRequest(url: server.url("/x")))
            }
            #expect(refused?.code == .invalidRequest)
            #expect(PinnedHost.isComparable("api.example.com") && PinnedHost.isComparable("[::1]"))
            #expect(!PinnedHost.isComparable("api．example.com") && !PinnedHost.isComparable(""))
        }
    #endif

    @Test("Two domains naming one host: every request is .invalidRequest and nothing is sent")
    func duplicateDomains() async throws {
        let server = try LoopbackServer()
        defer { server.shutdown() }
        server.route("GET", "/x") { _ in .text("ok") }
        let pins = PublicKeyPinningEvaluator(pinnedKeyHashes: [Data(repeating: 1, count: 32)])
        let unpinned = PublicKeyPinningEvaluator(pinnedKeyHashes: [], performDefaultValidation: true)
        let transport = PinningTransport(pinnedDomains: ["LOCALHOST": pins, "localhost.": unpinned])
        await #expect {
            _ = try await transport.data(for: URLRequest(url: server.url("/x")))
        } throws: { error in
            guard let error = error as? TransportError else { return false }
            return error.code == .invalidRequest && error.message.contains("name the host localhost")
        }
        #expect(server.receivedRequests.isEmpty)
    }
}
