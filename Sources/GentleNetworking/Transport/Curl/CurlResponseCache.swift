#if canImport(CCurl)
    import Foundation
    import FoundationNetworking

    /// The `HTTPURLResponse`s built most recently from libcurl's heads, handed out again when a
    /// response repeats one byte for byte.
    ///
    /// On Linux, `HTTPURLResponse.init` canonicalises every field name through Foundation's
    /// locale-aware string comparison and capitalisation: about 100,000 instructions for the
    /// eight fields of a small nginx response (callgrind), more than the rest of the request.
    /// A client that calls one endpoint over and over gets the same head each time, except for
    /// `Date`, which changes once a second. The response is a pure function of its URL, status
    /// code, HTTP version and field lines, and it is immutable, so one built from the same four
    /// values is the same response: it is reused, and nothing else is. A head whose fields
    /// differ in any byte (a request id, a cookie, the `Date`) builds a response of its own.
    ///
    /// Heads over ``maxFieldBytes`` are never kept (a hostile server's header flood costs no
    /// memory here), and at most ``capacity`` responses are kept, replaced oldest first.
    final class CurlResponseCache: Sendable {
        /// The cache every ``CurlTransport`` shares.
        static let shared = CurlResponseCache(capacity: 8)

        /// The most responses kept.
        let capacity: Int
        /// The largest head kept, in bytes of field lines.
        static let maxFieldBytes = 4096

        private struct Entry {
            let url: URL
            let head: CurlResponseHead
            let response: HTTPURLResponse
        }

        private struct State {
            var entries: [Entry] = []
            /// Where the next new entry goes once the cache is full.
            var next = 0
        }

        private let state = Locked(State())

        init(capacity: Int) {
            self.capacity = max(1, capacity)
        }

        /// The response for `head` from `url`: one built earlier from the same URL and head, or
        /// the one `build` makes (kept for next time when the head is small enough). `nil` when
        /// `build` returns `nil`.
        func response(url: URL, head: CurlResponseHead, build: () -> HTTPURLResponse?) -> HTTPURLResponse? {
            guard head.fieldBytes <= Self.maxFieldBytes else { return build() }
            let found = state.withLock { state in
                state.entries.first { $0.head == head && $0.url == url }?.response
            }
            if let found { return found }
            guard let built = build() else { return nil }
            let entry = Entry(url: url, head: head, response: built)
            state.withLock { state in
                if state.entries.count < capacity {
                    state.entries.append(entry)
                } else {
                    state.entries[state.next] = entry
                    state.next = (state.next + 1) % capacity
                }
            }
            return built
        }

        /// How many responses are kept.
        var count: Int { state.withLock { $0.entries.count } }
    }
#endif
