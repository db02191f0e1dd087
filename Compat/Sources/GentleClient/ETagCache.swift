import Foundation
import GentleNetworking

/// The app's own ETag store, written to the original's `ETagStoreProtocol`: it keeps
/// `ETagCacheEntry` values and evicts the oldest past a count.
public actor BoundedETagStore: ETagStoreProtocol {
    private var entries: [String: ETagCacheEntry] = [:]
    private var order: [String] = []
    private let limit: Int

    public init(limit: Int = 20) {
        self.limit = limit
    }

    public func cachedResponse(for key: String) -> ETagCacheEntry? {
        return entries[key]
    }

    public func store(_ entry: ETagCacheEntry, for key: String) {
        entries[key] = entry
        order.removeAll { $0 == key }
        order.append(key)
        while order.count > limit {
            entries[order.removeFirst()] = nil
        }
    }

    public func remove(for key: String) {
        entries[key] = nil
        order.removeAll { $0 == key }
    }

    public func removeAll() {
        entries.removeAll()
        order.removeAll()
    }

    /// What the app shows in its debug screen: each entry's tag and status.
    public func summary() -> [String] {
        return order.compactMap { key in
            guard let entry = entries[key] else { return nil }
            return "\(entry.etag) \(entry.response.statusCode) \(entry.data.count) bytes"
        }
    }
}
