#if canImport(CCurl)
    import CCurl
    import Foundation

    /// The URL handle (`CURLU`) a pooled easy handle is given with `CURLOPT_CURLU`, holding the
    /// last URL parsed into it.
    ///
    /// Given only `CURLOPT_URL`, libcurl 7.88 parses the URL into a URL handle of its own at
    /// every transfer, then prints it back (`curl_url_get`, through its `aprintf`) to normalize
    /// it: about 6k instructions per request in callgrind, 4% of a small request. With
    /// `CURLOPT_CURLU` it copies this handle instead and skips both. The parse happens here, on
    /// the caller's thread rather than the event loop's, and not at all when the handle's last
    /// request had the same URL (a client calling the same endpoints). `CURLOPT_URL` is still
    /// set, so libcurl's notion of the URL (its effective URL) is the request's text.
    ///
    /// The flags are libcurl's own for `CURLOPT_URL` (`CURLU_GUESS_SCHEME |
    /// CURLU_NON_SUPPORT_SCHEME`; we set neither `CURLOPT_PATH_AS_IS` nor
    /// `CURLOPT_DISALLOW_USERNAME_IN_URL`), so what goes on the wire is unchanged. A URL this
    /// parse refuses is left to libcurl (no `CURLOPT_CURLU`), which fails it as it always did.
    ///
    /// Owned by one pooled easy handle, used by one request at a time (the caller's thread while
    /// configuring, libcurl's loop while the transfer runs; the pool and the multi handle hand it
    /// over), freed after that easy handle.
    final class CurlParsedURL: @unchecked Sendable {
        // @unchecked: used by one request at a time, handed over with its easy handle.
        private let handle: OpaquePointer?
        /// The URL `handle` holds; `nil` before the first parse or after a failed one.
        private var text: String?

        /// What ``apply(_:to:)`` did.
        enum Outcome: Equatable {
            /// The URL was parsed into the handle, which libcurl will use.
            case parsed
            /// The handle already held this URL: nothing was parsed.
            case reused
            /// The parse failed (or there is no handle): libcurl parses `CURLOPT_URL` itself.
            case leftToLibcurl
        }

        init() {
            handle = curl_url()
        }

        /// Gives `easy` this URL handle holding `url`, parsing it only when it differs from the
        /// last one. On `.leftToLibcurl`, `easy` has no URL handle.
        func apply(_ url: String, to easy: UnsafeMutableRawPointer) -> Outcome {
            guard let handle else { return .leftToLibcurl }
            var outcome = Outcome.reused
            if text != url {
                text = nil
                let flags = UInt32(CURLU_GUESS_SCHEME) | UInt32(CURLU_NON_SUPPORT_SCHEME)
                guard curl_url_set(handle, CURLUPART_URL, url, flags) == CURLUE_OK else {
                    _ = gn_easy_setopt_pointer(easy, CURLOPT_CURLU, nil)
                    return .leftToLibcurl
                }
                text = url
                outcome = .parsed
            }
            guard gn_easy_setopt_pointer(easy, CURLOPT_CURLU, UnsafeMutableRawPointer(handle)) == CURLE_OK else {
                return .leftToLibcurl
            }
            return outcome
        }

        deinit {
            if let handle { curl_url_cleanup(handle) }
        }
    }
#endif
