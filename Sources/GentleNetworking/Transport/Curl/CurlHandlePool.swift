#if canImport(CCurl)
    import CCurl
    import Foundation

    /// A pooled easy handle and its URL handle (``CurlParsedURL``).
    struct CurlPooledHandle: @unchecked Sendable {
        // @unchecked: owned by one request at a time, handed over through the pool.
        let easy: UnsafeMutableRawPointer
        let url: CurlParsedURL
    }

    /// Reuses libcurl easy handles (`curl_easy_reset` keeps the allocation, DNS and TLS-session
    /// caches) instead of creating one per request, each with its URL handle.
    final class CurlHandlePool: @unchecked Sendable {
        // @unchecked: `idle` is only touched inside `lock`; handles in it are owned by no one else.
        private let lock = NSLock()
        private var idle: [CurlPooledHandle] = []
        private let capacity: Int

        init(capacity: Int = 64) {
            self.capacity = capacity
        }

        /// A reset handle, from the pool or new; `nil` when libcurl cannot allocate one.
        func take() -> CurlPooledHandle? {
            lock.lock()
            let reused = idle.popLast()
            lock.unlock()
            if let reused {
                // The reset also forgets `CURLOPT_CURLU`; the URL handle keeps its last URL.
                curl_easy_reset(reused.easy)
                return reused
            }
            return curl_easy_init().map { CurlPooledHandle(easy: $0, url: CurlParsedURL()) }
        }

        /// Takes back a handle that libcurl is done with (removed from the multi handle).
        func give(_ handle: CurlPooledHandle) {
            lock.lock()
            if idle.count < capacity {
                idle.append(handle)
                lock.unlock()
            } else {
                lock.unlock()
                curl_easy_cleanup(handle.easy)
            }
        }

        /// How many handles wait for reuse.
        var idleCount: Int {
            lock.lock()
            defer { lock.unlock() }
            return idle.count
        }

        /// Frees a handle instead of pooling it: one that received through a large buffer
        /// (`curl_easy_reset` keeps libcurl's receive buffer, so a pooled handle would hold it).
        func discard(_ handle: CurlPooledHandle) {
            curl_easy_cleanup(handle.easy)
        }

        deinit {
            for handle in idle { curl_easy_cleanup(handle.easy) }
        }
    }
#endif
