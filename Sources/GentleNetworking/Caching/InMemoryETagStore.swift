/// An in-memory ``ETagStoreProtocol``: least-recently-used, bounded by entry count and by total
/// bytes. The default store of ``ETagTransport``.
public actor InMemoryETagStore: ETagStoreProtocol {
    /// The most entries kept; 100 by default.
    public let maxEntries: Int
    /// The most bytes kept (bodies plus headers); 10 MiB by default.
    public let maxBytes: Int

    private var entries: [String: (response: CachedResponse, lastUse: UInt64)] = [:]
    private var clock: UInt64 = 0
    private var totalBytes = 0

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
    public var count: Int { entries.count }

    /// The bytes the entries take, as counted against ``maxBytes``.
    public var byteCount: Int { totalBytes }

    /// The entry for `key`, marking it most recently used.
    public func cachedResponse(for key: String) -> CachedResponse? {
        // One hash of the key: it is as long as the URL, and this runs for every GET.
        guard let index = entries.index(forKey: key) else { return nil }
        clock += 1
        entries.values[index].lastUse = clock
        return entries.values[index].response
    }

    /// Stores `response`, then evicts least-recently-used entries until both bounds hold.
    public func store(_ response: CachedResponse, for key: String) {
        let size = response.approximateSize
        guard size <= maxBytes else {
            remove(for: key)
            return
        }
        clock += 1
        // Replaced in place (a revalidation renews an entry on every request): one hash of the key.
        if let replaced = entries.updateValue((response, clock), forKey: key) {
            totalBytes -= replaced.response.approximateSize
        }
        totalBytes += size
        while entries.count > maxEntries || totalBytes > maxBytes {
            guard let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key else { break }
            remove(for: oldest)
        }
    }

    /// Removes the entry for `key`.
    public func remove(for key: String) {
        if let removed = entries.removeValue(forKey: key) {
            totalBytes -= removed.response.approximateSize
        }
    }

    /// Removes every entry.
    public func removeAll() {
        entries.removeAll()
        totalBytes = 0
    }
}
