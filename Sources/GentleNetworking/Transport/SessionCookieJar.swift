import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if !canImport(Darwin) && !GENTLE_APPLE_TYPECHECK
    /// Linux: stores the cookies of a routed session's responses in corelibs' place.
    ///
    /// corelibs parses every `Set-Cookie` line in its libcurl header callback, before any
    /// delegate sees the response, and its parser traps on some names made of several Unicode
    /// scalars (`🇺🇸=1`, `x\u{301}y=1`): one header from any server ended the process. So a routed
    /// session's configuration never accepts cookies itself (``disabling(_:)``), and the jar
    /// stores them instead, from each response a task receives (each redirect hop included),
    /// into the caller's configuration's `httpCookieStorage` unless its
    /// `httpCookieAcceptPolicy` is `.never`, with the URL corelibs would use and no main
    /// document (as corelibs does). A cookie with a byte outside printable ASCII and tab is not
    /// stored (the others of the response are): no valid cookie has one (RFC 6265: a name is a
    /// token, a value is ASCII), and such a byte is what the parser traps on. Cookies are still sent
    /// from the storage by corelibs (`httpShouldSetCookies`).
    struct SessionCookieJar: @unchecked Sendable {
        // @unchecked: HTTPCookieStorage is thread-safe (its own lock) and never mutated here.
        private let storage: HTTPCookieStorage?

        init(_ configuration: URLSessionConfiguration) {
            storage = configuration.httpCookieAcceptPolicy == .never ? nil : configuration.httpCookieStorage
        }

        /// `configuration` with corelibs' own cookie parsing turned off.
        static func disabling(_ configuration: URLSessionConfiguration) -> URLSessionConfiguration {
            configuration.httpCookieAcceptPolicy = .never
            return configuration
        }

        /// Stores the cookies `response` sets, if the configuration accepts cookies: each cookie
        /// of every `Set-Cookie` field whose bytes are all printable ASCII or tab.
        func store(from response: URLResponse) {
            guard let storage, let response = response as? HTTPURLResponse, let url = response.url else { return }
            // Every spelling of the field (corelibs keeps `Set-Cookie` and `set-cookie` apart),
            // each cookie screened on its own: one bad one does not drop the session cookie.
            let cookies = response.allHeaderFields.compactMap { key, value -> String? in
                guard let key = key as? String, key.equalsIgnoringASCIICase("set-cookie") else { return nil }
                return value as? String
            }.flatMap(Self.splitCookies).filter(Self.isParsable)
            guard !cookies.isEmpty else { return }
            let parsed = HTTPCookie.cookies(
                withResponseHeaderFields: ["Set-Cookie": cookies.joined(separator: ", ")], for: url)
            guard !parsed.isEmpty else { return }
            storage.setCookies(parsed, for: url, mainDocumentURL: nil)
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
