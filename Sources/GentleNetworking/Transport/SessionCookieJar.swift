import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
    /// Linux: stores and sends the cookies of a routed session in corelibs' place.
    ///
    /// corelibs parses every `Set-Cookie` line in its libcurl header callback, before any
    /// delegate sees the response, and its parser traps on some names made of several Unicode
    /// scalars (`🇺🇸=1`, `x\u{301}y=1`): one header from any server ended the process. Its storage
    /// also keeps a cookie for a public suffix or above an IP address, and it sends cookies by
    /// host alone. So a routed session's configuration neither accepts nor sends cookies itself
    /// (``disabling(_:)``), and the jar does both: it stores the cookies of each response a task
    /// receives (each redirect hop included) into the caller's configuration's
    /// `httpCookieStorage` unless its `httpCookieAcceptPolicy` is `.never`, by RFC 6265's rules,
    /// and puts the matching ones on each request and each hop (``cookieField(for:)``). A cookie
    /// with a byte outside printable ASCII and tab is not stored (the others of the response
    /// are): no valid cookie has one (RFC 6265: a name is a token, a value is ASCII), and such a
    /// byte is what the parser traps on.
    struct SessionCookieJar: @unchecked Sendable {
        // @unchecked: HTTPCookieStorage is thread-safe (its own lock).
        private let storage: HTTPCookieStorage?
        /// Where the `Cookie` field of each request comes from (``cookieField(for:)``): the
        /// caller's storage when its configuration sends cookies (`httpShouldSetCookies`),
        /// whatever its accept policy, as corelibs did.
        private let sendingStorage: HTTPCookieStorage?

        init(_ configuration: URLSessionConfiguration) {
            storage = configuration.httpCookieAcceptPolicy == .never ? nil : configuration.httpCookieStorage
            sendingStorage = configuration.httpShouldSetCookies ? configuration.httpCookieStorage : nil
        }

        /// `configuration` with corelibs' own cookie parsing and sending turned off: its
        /// storage keeps a cookie for a public suffix (`Domain=com`), and it sends by host
        /// alone, a `Secure` cookie over plain http, a cookie outside its `Path`, an expired one.
        static func disabling(_ configuration: URLSessionConfiguration) -> URLSessionConfiguration {
            configuration.httpCookieAcceptPolicy = .never
            configuration.httpShouldSetCookies = false
            return configuration
        }

        /// Stores the cookies `response` sets, if the configuration accepts cookies: each cookie
        /// of every `Set-Cookie` field whose bytes are all printable ASCII or tab, by RFC 6265's
        /// storage rules where corelibs' are looser (see ``isAcceptable(_:from:host:)``). A
        /// `Max-Age` (which corelibs ignores) sets the expiry; zero or less deletes the cookie.
        /// A response over plain http sets no cookie named as a stored `Secure` one whose domain
        /// and path it overlaps, so it neither replaces, deletes nor shadows it (RFC 6265bis
        /// §5.7); without a `Path` a cookie gets the request's directory (``defaultPath(for:)``);
        /// a `Domain` that is the host and a public suffix
        /// (`s3.amazonaws.com` from itself) makes a host-only cookie (RFC 6265 §5.3 step 5).
        ///
        /// `acceptsHead` is asked once, only when the response sets a cookie: a head the
        /// transport then refuses (over its field or byte limits, bad framing) stores nothing.
        func store(from response: URLResponse, acceptsHead: () -> Bool = { true }) {
            guard let storage, let response = response as? HTTPURLResponse, let url = response.url,
                let host = url.host?.lowercased()
            else { return }
            // Every spelling of the field (corelibs keeps `Set-Cookie` and `set-cookie` apart),
            // each cookie screened on its own: one bad one does not drop the session cookie.
            let fields = response.allHeaderFields.compactMap { key, value -> String? in
                guard let key = key as? String, key.equalsIgnoringASCIICase("set-cookie") else { return nil }
                return value as? String
            }.flatMap(Self.splitCookies).filter(Self.isParsable)
            guard !fields.isEmpty, acceptsHead() else { return }
            let now = Date()
            let secure = url.scheme?.lowercased() == "https"
            // One look at the storage per response, kept current here: reading `cookies` copies
            // the whole store, and did so for each cookie of the response.
            var stored = storage.cookies ?? []
            var considered = 0
            for field in fields.map(Self.withoutEmptyDomain) {
                // One field is one cookie: where corelibs reads several (it splits at a comma
                // before `b =2`, which ``splitCookies(_:)`` leaves alone), the field's `Path` and
                // `Max-Age`, read below, would be applied to each. None of them is kept.
                let parsed = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": field], for: url)
                guard parsed.count == 1, let received = parsed.first else {
                    considered += parsed.count
                    continue
                }
                considered += 1
                guard considered <= Self.maxCookiesPerResponse else { return }
                guard received.name.utf8.count + received.value.utf8.count <= Self.maxCookieBytes,
                    Self.isAcceptable(received, from: url, host: host)
                else { continue }
                var changes: [HTTPCookiePropertyKey: String] = [:]
                if received.domain.hasPrefix("."), received.domain.dropFirst().lowercased() == host,
                    PublicSuffixList.isPublicSuffix(host)
                {
                    changes[.domain] = host
                }
                if !Self.hasPathAttribute(field) { changes[.path] = Self.defaultPath(for: url) }
                let maxAge = Self.maxAge(in: field)
                var expires: Date?
                if let maxAge { expires = now.addingTimeInterval(Double(maxAge)) }
                guard let cookie = Self.rebuilt(received, changing: changes, expires: expires),
                    Self.keepsNamePrefixPromise(cookie, overHTTPS: secure)
                else { continue }
                // RFC 6265bis §5.7: over plain http, no cookie that a stored `Secure` one of
                // the same name could be confused with: overlapping domains, and a path at
                // or below the stored one's (`Path=/sub` would be sent first to `/sub` and
                // shadow it).
                if !secure,
                    stored.contains(where: { stored in
                        stored.isSecure && stored.name == cookie.name
                            && Self.domainsOverlap(stored.domain, cookie.domain)
                            && Self.pathMatches(stored.path, path: cookie.path)
                    })
                {
                    continue
                }
                let same = { (other: HTTPCookie) in
                    other.name == cookie.name && other.domain == cookie.domain && other.path == cookie.path
                }
                if let maxAge, maxAge <= 0 {
                    // Deleted: the stored cookie of the same name, domain and path goes.
                    for old in stored where same(old) { storage.deleteCookie(old) }
                    stored.removeAll(where: same)
                    continue
                }
                if !stored.contains(where: same) {
                    // A new cookie (a replacement always goes in) within the limits: a
                    // response cannot grow the store, or crowd out a domain's, without end.
                    let domain = cookie.domain.lowercased()
                    guard stored.count < Self.maxStoredCookies,
                        stored.lazy.filter({ $0.domain.lowercased() == domain }).count < Self.maxCookiesPerDomain
                    else { continue }
                }
                storage.setCookie(cookie)
                stored.removeAll(where: same)
                stored.append(cookie)
            }
        }

        /// Whether `cookie` keeps what its name's prefix promises the server (RFC 6265bis
        /// §4.1.3, prefixes compared ignoring case): `__Secure-` only `Secure` and from https;
        /// `__Host-` that too, host-only (no `Domain`) and for `Path=/`. A server reads such a
        /// name as proof; without the check a sibling host (`Domain=` the parent) or plain http
        /// could plant one.
        static func keepsNamePrefixPromise(_ cookie: HTTPCookie, overHTTPS: Bool) -> Bool {
            let name = cookie.name.utf8
            func hasPrefix(_ prefix: String) -> Bool {
                name.count >= prefix.utf8.count
                    && String(decoding: name.prefix(prefix.utf8.count), as: UTF8.self).equalsIgnoringASCIICase(prefix)
            }
            if hasPrefix("__Secure-") { return cookie.isSecure && overHTTPS }
            if hasPrefix("__Host-") {
                return cookie.isSecure && overHTTPS && !cookie.domain.hasPrefix(".") && cookie.path == "/"
            }
            return true
        }

        /// The most bytes of a cookie's name and value together that are stored: 4,096, RFC
        /// 6265 §6.1's least a user agent must take, and what browsers keep to.
        static let maxCookieBytes = 4096
        /// The most cookies one response may set (the others of its `Set-Cookie` fields are not
        /// even parsed): each stored one may rewrite a persistent storage's whole file.
        static let maxCookiesPerResponse = 50
        /// The most cookies kept for one domain (RFC 6265 §6.1's least: 50): a new one beyond
        /// it is not stored; the stored ones stay, and are still replaced or deleted.
        static let maxCookiesPerDomain = 50
        /// The most cookies kept in the storage (RFC 6265 §6.1's least: 3,000), as for a domain.
        static let maxStoredCookies = 3000

        /// `cookie` with `changes` (and, when given, the expiry `expires`, which replaces any
        /// `Max-Age` and `Discard`), built again through `HTTPCookie(properties:)`; `cookie`
        /// itself when there is nothing to change. corelibs' `properties` hold `Secure` and
        /// `Discard` as `Bool` and `Version` as `Int`, but its initializer reads only strings,
        /// and `HttpOnly` is not among them: passed back as they came, a `Secure` cookie lost
        /// its flag and went out over plain http. They are written as the initializer reads them.
        static func rebuilt(
            _ cookie: HTTPCookie, changing changes: [HTTPCookiePropertyKey: String], expires: Date?
        ) -> HTTPCookie? {
            guard !changes.isEmpty || expires != nil else { return cookie }
            var properties: [HTTPCookiePropertyKey: Any] = [:]
            for (key, value) in cookie.properties ?? [:] {
                switch value {
                case let flag as Bool: if flag { properties[key] = "TRUE" }
                case let number as Int: properties[key] = String(number)
                default: properties[key] = value
                }
            }
            properties[.secure] = cookie.isSecure ? "TRUE" : nil
            properties[HTTPCookiePropertyKey("HttpOnly")] = cookie.isHTTPOnly ? "TRUE" : nil
            for (key, value) in changes { properties[key] = value }
            if let expires {
                properties[.expires] = expires
                properties[.maximumAge] = nil
                properties[.discard] = nil
            }
            return HTTPCookie(properties: properties)
        }

        /// Whether `cookie`, set by a response from `url` (whose host is `host`, lowercased),
        /// may be stored (RFC 6265 §5.3, and 6265bis on `Secure`):
        /// - a `Domain` (corelibs marks it with a leading dot) must be the host or a parent of
        ///   it that is not a public suffix (`com`, `co.uk`, `github.io`), and never a parent of
        ///   an IP address (`Domain=0.0.1` from `10.0.0.1` was sent on to `127.0.0.1`); the
        ///   public suffixes are the list libcurl's own cookie engine uses (libpsl, loaded at run
        ///   time), and without it only the host itself is allowed;
        /// - a `Secure` cookie only from an https response (plain http could overwrite it).
        static func isAcceptable(_ cookie: HTTPCookie, from url: URL, host: String) -> Bool {
            if cookie.isSecure, url.scheme?.lowercased() != "https" { return false }
            guard cookie.domain.hasPrefix(".") else { return cookie.domain.lowercased() == host }
            let domain = String(cookie.domain.dropFirst()).lowercased()
            if domain == host { return true }
            guard !isIPAddress(host), host.hasSuffix("." + domain) else { return false }
            return PublicSuffixList.allowsCookie(forDomain: domain, host: host)
        }

        /// One cookie's field without its `Domain` attributes that have no value: RFC 6265
        /// §5.2.3 has them ignored (the cookie is host-only); corelibs made a cookie no host
        /// matched, so it was never stored.
        static func withoutEmptyDomain(_ field: String) -> String {
            let parts = field.split(separator: ";", omittingEmptySubsequences: false)
            let kept = parts.enumerated().filter { index, attribute in
                guard index > 0 else { return true }
                let pair = attribute.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard pair[0].trimmingCharacters(in: .whitespaces).equalsIgnoringASCIICase("domain") else {
                    return true
                }
                return pair.count == 2 && !pair[1].trimmingCharacters(in: .whitespaces).isEmpty
            }
            return kept.count == parts.count ? field : kept.map { String($0.element) }.joined(separator: ";")
        }

        /// Whether one cookie's field has a `Path` attribute that counts (RFC 6265 §5.2.4: its
        /// value starts with `/`; the last one wins). Without one the cookie's path is the
        /// request's directory (``defaultPath(for:)``).
        static func hasPathAttribute(_ field: String) -> Bool {
            var found = false
            for attribute in field.split(separator: ";").dropFirst() {
                let parts = attribute.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts[0].trimmingCharacters(in: .whitespaces).equalsIgnoringASCIICase("path") else { continue }
                found = parts.count == 2 && parts[1].trimmingCharacters(in: .whitespaces).hasPrefix("/")
            }
            return found
        }

        /// RFC 6265 §5.1.4's default path of a cookie set by a response from `url`: its path
        /// (percent-encoded, as ``cookieField(for:)`` matches it) up to, not including, its last
        /// `/`; `/` when that leaves nothing. corelibs gives `/`: a cookie `/app/login` set
        /// without a `Path` went to every path of the host.
        static func defaultPath(for url: URL) -> String {
            let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
            guard path.hasPrefix("/"), let last = path.lastIndex(of: "/"), last != path.startIndex else { return "/" }
            return String(path[..<last])
        }

        /// The `Max-Age` attribute of one cookie's field, if it has a valid one (RFC 6265
        /// §5.2.2: an optional `-` and digits; clamped to ±10 years, so no arithmetic traps).
        static func maxAge(in field: String) -> Int? {
            var found: Int?
            for attribute in field.split(separator: ";").dropFirst() {
                let parts = attribute.split(separator: "=", maxSplits: 1)
                guard parts.count == 2,
                    parts[0].trimmingCharacters(in: .whitespaces).equalsIgnoringASCIICase("max-age")
                else { continue }
                let value = parts[1].trimmingCharacters(in: .whitespaces)
                let digits = value.hasPrefix("-") ? value.dropFirst() : Substring(value)
                guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { continue }
                let limit = 315_360_000
                // Leading zeros first: `0000000000` is zero, not ten digits' worth.
                let significant = digits.drop { $0 == "0" }
                let magnitude = significant.count > 9 ? limit : min(limit, Int(significant) ?? 0)
                found = value.hasPrefix("-") ? -magnitude : magnitude  // the last one wins
            }
            return found
        }

        /// The `Cookie` field for a request to `url` from the configuration's storage, or `nil`
        /// when no stored cookie matches (RFC 6265 §5.4): the domain (the host itself for a
        /// host-only cookie; the domain or a subdomain of it, never for an IP address), the path
        /// (the cookie's path or below it), `Secure` ones only over https, none expired. Longer
        /// paths first, then in the order they were stored.
        func cookieField(for url: URL, now: Date = Date()) -> String? {
            guard let sendingStorage, let host = url.host?.lowercased(), let cookies = sendingStorage.cookies,
                !cookies.isEmpty
            else { return nil }
            let secure = url.scheme?.lowercased() == "https"
            // As sent: still percent-encoded, with its trailing slash (`URL.path` decodes and
            // drops it, so `Path=/app/` did not match `/app/`).
            let encoded = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
            let path = encoded.isEmpty ? "/" : encoded
            let matching = cookies.filter { cookie in
                if cookie.isSecure, !secure { return false }
                if let expires = cookie.expiresDate, expires <= now { return false }
                return Self.domainMatches(cookie.domain, host: host) && Self.pathMatches(cookie.path, path: path)
            }
            guard !matching.isEmpty else { return nil }
            // RFC 6265 §5.4 step 2: longer paths first, then the earlier created (the storage
            // lists its cookies in no stable order, so a server saw a different order each run).
            let created = HTTPCookiePropertyKey("Created")
            return matching.map { ($0, $0.properties?[created] as? Double ?? 0) }
                .sorted { first, second in
                    let (one, other) = (first.0.path.utf8.count, second.0.path.utf8.count)
                    return one != other ? one > other : first.1 < second.1
                }
                .map { "\($0.0.name)=\($0.0.value)" }.joined(separator: "; ")
        }

        /// `request` with the stored cookies for its URL in its `Cookie` field, after the
        /// caller's own value if it set one.
        func addingCookies(to request: URLRequest) -> URLRequest {
            guard request.httpShouldHandleCookies, let url = request.url, let field = cookieField(for: url) else {
                return request
            }
            var request = request
            let own = request.value(forHTTPHeaderField: "Cookie").flatMap { $0.isEmpty ? nil : $0 }
            request.setValue(own.map { "\($0); \(field)" } ?? field, forHTTPHeaderField: "Cookie")
            return request
        }

        /// A redirect hop corelibs follows: its `Cookie` field (carried from the hop before,
        /// stored cookies included) becomes the caller's own value again, if it kept one (a hop
        /// to another origin drops it), and the stored cookies for the hop's URL are added.
        func forRedirectHop(_ request: URLRequest, callerCookie: String?) -> URLRequest {
            var request = request
            if request.value(forHTTPHeaderField: "Cookie") != nil {
                request.setValue(callerCookie, forHTTPHeaderField: "Cookie")
            }
            return addingCookies(to: request)
        }

        /// RFC 6265 §5.1.3, with corelibs' leading dot for a domain cookie.
        static func domainMatches(_ cookieDomain: String, host: String) -> Bool {
            let domain = cookieDomain.lowercased()
            guard domain.hasPrefix(".") else { return domain == host }
            let bare = domain.dropFirst()
            if host == bare { return true }
            return !isIPAddress(host) && host.hasSuffix(domain)
        }

        /// Whether one of two cookie domains (corelibs marks a domain cookie with a leading dot)
        /// domain-matches the other (RFC 6265 §5.1.3, either way round).
        static func domainsOverlap(_ first: String, _ second: String) -> Bool {
            func bare(_ domain: String) -> String {
                String(domain.hasPrefix(".") ? domain.dropFirst() : Substring(domain)).lowercased()
            }
            let (one, other) = (bare(first), bare(second))
            if one == other { return true }
            return (one.hasSuffix("." + other) && !isIPAddress(one))
                || (other.hasSuffix("." + one) && !isIPAddress(other))
        }

        /// RFC 6265 §5.1.4.
        static func pathMatches(_ cookiePath: String, path: String) -> Bool {
            let cookiePath = cookiePath.isEmpty ? "/" : cookiePath
            if path == cookiePath { return true }
            guard path.hasPrefix(cookiePath) else { return false }
            return cookiePath.hasSuffix("/") || path.dropFirst(cookiePath.count).hasPrefix("/")
        }

        /// Whether `host` is an IPv4 or IPv6 literal (as `URL.host` gives it).
        static func isIPAddress(_ host: String) -> Bool {
            if host.contains(":") || host.hasPrefix("[") { return true }
            var address = in_addr()
            return inet_pton(AF_INET, host, &address) == 1
        }

        /// A `Set-Cookie` field that holds several cookies joined by commas (as repeated fields
        /// are merged), split before each `, name=` (a comma inside `Expires=Wed, 21 Oct …` is
        /// followed by no `=` before the next `;` or `,`).
        static func splitCookies(_ field: String) -> [String] {
            var cookies: [String] = []
            var current = Substring(field)
            var searchFrom = current.startIndex
            while let comma = current[searchFrom...].firstIndex(of: ",") {
                let rest = current[current.index(after: comma)...].drop { $0 == " " || $0 == "\t" }
                let name = rest.prefix { $0 != "=" && $0 != ";" && $0 != "," }
                if !name.isEmpty, name.endIndex < rest.endIndex, rest[name.endIndex] == "=",
                    !name.contains(" ")
                {
                    cookies.append(String(current[..<comma]))
                    current = rest
                    searchFrom = current.startIndex
                } else {
                    searchFrom = current.index(after: comma)
                }
            }
            cookies.append(String(current))
            return cookies
        }

        /// Whether `field` is printable ASCII and tab only: text corelibs' cookie parser reads
        /// without trapping.
        static func isParsable(_ field: String) -> Bool {
            field.utf8.allSatisfy { $0 == 0x09 || (0x20...0x7E).contains($0) }
        }
    }
#endif
