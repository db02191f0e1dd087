#if canImport(CCurl)
    import CCurl
    import Foundation

    /// Reuses libcurl easy handles (`curl_easy_reset` keeps the allocation, DNS and TLS-session
    /// caches) instead of creating one per request.
    final class CurlHandlePool: @unchecked Sendable {
        // @unchecked: `idle` is only touched inside `lock`; handles in it are owned by no one else.
        private let lock = NSLock()
        private var idle: [UnsafeMutableRawPointer] = []
        private let capacity: Int

        init(capacity: Int = 64) {
            self.capacity = capacity
        }

        /// A reset handle, from the pool or new; `nil` when libcurl cannot allocate one.
        func take() -> UnsafeMutableRawPointer? {
            lock.lock()
            let reused = idle.popLast()
            lock.unlock()
            if let reused {
                curl_easy_reset(reused)
                return reused
            }
            return curl_easy_init()
        }

        /// Takes back a handle that libcurl is done with (removed from the multi handle).
        func give(_ handle: UnsafeMutableRawPointer) {
            lock.lock()
            if idle.count < capacity {
                idle.append(handle)
                lock.unlock()
            } else {
                lock.unlock()
                curl_easy_cleanup(handle)
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
        func discard(_ handle: UnsafeMutableRawPointer) {
            curl_easy_cleanup(handle)
        }

        deinit {
            for handle in idle { curl_easy_cleanup(handle) }
        }
    }
#endif
