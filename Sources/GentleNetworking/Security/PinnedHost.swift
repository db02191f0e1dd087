import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a pinned domain and a request's host are compared: lowercased, without one trailing dot,
/// an IPv6 address in its one canonical spelling.
///
/// `https://api.example.com./` names the same host as `https://api.example.com/`: libcurl and
/// the system strip the dot for SNI and the certificate-name check. A lookup that kept it found
/// no pins, and the connection got default validation only: pinning failed open for any
/// certificate a trusted CA issued.
package enum PinnedHost {
    /// `host` as pins are keyed: lowercased, one trailing dot removed; an IPv6 address, with or
    /// without brackets, as `inet_ntop` writes it (`[0:0::0001]` is `::1`).
    ///
    /// One IPv6 address has many spellings (`::1`, `0::1`, `::0001`, `0:0:0:0:0:0:0:1`) and a
    /// URL's host keeps the one it was written with, while libcurl connects to the address:
    /// pins for `::1` were skipped for `https://[0::1]/`, and a domain pinned as `[::1]` (the
    /// brackets a URL writes) matched no request, since `URL.host` has none.
    package static func key(_ host: String) -> String {
        if let address = canonicalIPv6(host) { return address }
        let lowered = host.lowercased()
        return lowered.hasSuffix(".") && lowered.count > 1 ? String(lowered.dropLast()) : lowered
    }

    /// `host` (bracketed or not) as `inet_ntop` writes it when it is an IPv6 address; `nil`
    /// for anything else.
    static func canonicalIPv6(_ host: String) -> String? {
        guard host.utf8.contains(UInt8(ascii: ":")) else { return nil }
        var bare = Substring(host)
        if bare.utf8.first == UInt8(ascii: "["), bare.utf8.last == UInt8(ascii: "]") {
            bare = bare.dropFirst().dropLast()
        }
        var address = in6_addr()
        guard inet_pton(AF_INET6, String(bare), &address) == 1 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(INET6_ADDRSTRLEN)) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `host` can be compared with pinned domains as text: ASCII letters, digits, `-`,
    /// `_`, `.`, and an IP literal's `:` and brackets only. Anything else (a percent-encoded or
    /// Unicode name) is mapped by libcurl's IDNA to a name the lookup did not see.
    package static func isComparable(_ host: String) -> Bool {
        !host.isEmpty
            && host.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                    UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
                    return true
                default:
                    return false
                }
            }
    }

    /// `pinned` keyed by ``key(_:)``.
    ///
    /// - Throws: ``TransportError/Code/invalidRequest`` when two domains name the same host
    ///   (`API.example.com` and `api.example.com`): which one applied depended on the order of
    ///   a dictionary, which changes from one launch to the next; and for a domain that is not
    ///   plain ASCII (``isComparable(_:)``), whose pins no request could ever match.
    package static func table<Value>(_ pinned: [String: Value]) throws(TransportError) -> [String: Value] {
        var table: [String: Value] = [:]
        for (domain, value) in pinned {
            // A domain in Unicode (`bücher.example`) never equals the ASCII host a URL gives.
            guard isComparable(domain) else {
                throw TransportError(
                    .invalidRequest, url: nil,
                    message: "The pinned domain \(PrintableText.escaping(domain)) is not plain ASCII; "
                        + "write it in its ASCII (punycode) form.")
            }
            let key = key(domain)
            guard table[key] == nil else {
                throw TransportError(
                    .invalidRequest, url: nil,
                    message: "Two pinned domains name the host \(key) (they differ only in case, a trailing dot, "
                        + "or how an IPv6 address is written); "
                        + "give each host one evaluator.")
            }
            table[key] = value
        }
        return table
    }
}
