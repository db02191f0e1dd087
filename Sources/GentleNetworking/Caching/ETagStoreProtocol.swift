/// Where ``ETagTransport`` keeps responses between requests.
///
/// Implementations must be safe to call from many tasks at once. Storage failures are not the
/// caller's problem: a store that cannot read an entry reports a miss, and one that cannot
/// write simply does not keep it.
public protocol ETagStoreProtocol: Sendable {
    /// The entry for `key`, or `nil`.
    func cachedResponse(for key: String) async -> CachedResponse?
    /// Stores `response` under `key`, replacing any previous entry.
    func store(_ response: CachedResponse, for key: String) async
    /// Removes the entry for `key`, if any.
    func remove(for key: String) async
    /// Removes every entry.
    func removeAll() async
}
