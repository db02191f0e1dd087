/// An in-memory ``ETagStoreProtocol``: least-recently-used, bounded by entry count and by total
/// bytes. The default store of ``ETagTransport``.
///
/// Its entries sit behind a lock rather than in the actor's isolated state: ``ETagTransport``
/// reads and renews them without hopping onto the actor (with many requests in flight, every
/// hop to a busy actor suspends the request and wakes another thread to resume it). The
/// actor's methods take the same lock, so both ways see one consistent store.
///
/// Lookups, insertions and evictions cost O(1) whatever `maxEntries` is (`LRUEntries`).
public actor InMemoryETagStore: ETagStoreProtocol {
    /// The most entries kept; 100 by default.
    public let maxEntries: Int
    /// The most bytes kept (bodies plus headers); 10 MiB by default.
    public let maxBytes: Int

    private let entries = Locked(LRUEntries<CachedResponse>())

    /// Creates a store.
    ///
    /// - Parameters:
    ///   - maxEntries: 100 by default; values below 1 count as 1.
    ///   - maxBytes: 10 MiB by default. An entry larger than this is not stored.
    public init(maxEntries: Int = 100, maxBytes: Int = 10 * 1024 * 1024) {
        self.maxEntries = max(1, maxEntries)
        self.maxBytes = max(0, maxBytes)
    }

    /// How many entries are stored.
    public var count: Int { entries.withLock { $0.count } }

    /// The bytes the entries take, as counted against ``maxBytes``.
    public var byteCount: Int { entries.withLock { $0.totalSize } }

    /// The entry for `key`, marking it most recently used.
    public func cachedResponse(for key: String) -> CachedResponse? {
        entry(for: key)
    }

    /// Stores `response` under `key`, evicting least-recently-used entries to stay within
    /// ``maxEntries`` and ``maxBytes``. A response larger than ``maxBytes`` is not stored (and
    /// an entry already under `key` is removed).
    public func store(_ response: CachedResponse, for key: String) {
        put(response, for: key)
    }

    /// Removes the entry for `key`, if any.
    public func remove(for key: String) {
        drop(for: key)
    }

    /// Removes every entry.
    public func removeAll() {
        entries.withLock { $0.removeAll() }
    }

    /// ``cachedResponse(for:)`` without the actor hop.
    nonisolated func entry(for key: String) -> CachedResponse? {
        entries.withLock { $0.value(for: key) }
    }

    /// ``store(_:for:)`` without the actor hop.
    nonisolated func put(_ response: CachedResponse, for key: String) {
        let size = response.approximateSize
        let (maxEntries, maxBytes) = (self.maxEntries, self.maxBytes)
        entries.withLock { entries in
            guard size <= maxBytes else {
                entries.removeValue(for: key)
                return
            }
            // Replaced in place (a revalidation renews an entry on every request): one hash.
            entries.set(response, size: size, for: key)
            // The entry just stored is the newest and fits alone, so it is never the one evicted.
            while entries.count > maxEntries || entries.totalSize > maxBytes {
                guard entries.removeOldest() != nil else { break }
            }
        }
    }

    /// ``remove(for:)`` without the actor hop.
    nonisolated func drop(for key: String) {
        entries.withLock { $0.removeValue(for: key) }
    }
}
