import Foundation

/// An ``ETagStoreProtocol`` on disk: one file per entry in a private directory, bounded by total
/// size with least-recently-used eviction.
///
/// - Entries are written atomically (temporary file, then rename) with mode 0600 in a 0700
///   directory, so a crash never leaves a half-written entry under a real name. The temporary
///   files of writers that died before their rename are removed when the store first reads the
///   directory.
/// - A corrupt, truncated or foreign file is a cache miss (and is deleted), never a crash.
/// - Only what this user wrote is served. The directory must be this user's and not a symlink
///   (one this store creates is 0700; one of this user's that others may write to, such as a
///   0775 directory made under umask 002, is made unwritable by them on first use); otherwise the
///   store reads, writes and removes nothing (every lookup misses) and ``directoryProblem`` says
///   why. An entry is read only if it is a regular file (not a symlink, FIFO or device) owned
///   by this user, not writable by others and no larger than ``maxBytes``. The directory's
///   parents are trusted as they are: put the store under a directory of your own.
/// - Recency survives restarts: reading an entry touches its file's modification time.
/// - No credential is written: a file holds the SHA-256 of its key, not the key (whose URL may
///   carry `?api_key=…`), and an entry's ``CachedResponse/url`` is not stored (it reads back as
///   `nil`) when it has user info or a sensitive query value.
/// - It is an actor, so any number of tasks may use one store at once.
public actor DiskETagStore: ETagStoreProtocol {
    /// The directory holding the entries.
    public let directory: URL
    /// The most bytes the entries may take on disk, each counted in whole 4 KiB blocks (see
    /// ``byteCount``).
    public let maxBytes: Int

    /// Why the store is not using ``directory``, as of its last call (`nil` when it is, or the
    /// directory does not exist yet): it is a symlink, not a directory, or another user's. The
    /// store then serves nothing from it and writes nothing to it; fix the directory (or choose
    /// one of your own) and the next call uses it.
    public private(set) var directoryProblem: String?

    /// The entries' file names and sizes in least-recently-used order, read from the directory
    /// (oldest modification time first) on first use.
    private var index: LRUEntries<Void>?
    private static let magic = Data("GNETAG2\n".utf8)
    private static let fileExtension = "etag"

    /// Creates a store in `directory` (created on first write).
    ///
    /// - Parameters:
    ///   - directory: Where entries live. Use a directory of its own: files there that are not
    ///     entries are ignored, but not protected from eviction of entries.
    ///   - maxBytes: The size cap, entries counted in whole 4 KiB blocks; 50 MiB by default. An
    ///     entry larger than this is not stored.
    public init(directory: URL, maxBytes: Int = 50 * 1024 * 1024) {
        self.directory = directory
        self.maxBytes = max(0, maxBytes)
    }

    /// The bytes the entries take on disk: each entry's size rounded up to whole 4 KiB blocks,
    /// what a file system allocates for it. Counted by length alone, 200,000 entries of 250
    /// bytes fitted the default 50 MiB while taking 800 MB; by blocks at most 12,800 entries do.
    public var byteCount: Int {
        withIndex { $0.totalSize }
    }

    /// The entry for `key`, or `nil` when there is none or it cannot be read.
    public func cachedResponse(for key: String) -> CachedResponse? {
        guard isDirectoryTrusted(creating: false) else { return nil }
        let name = Self.fileName(for: key)
        let url = directory.appendingPathComponent(name)
        let data: Data
        switch PrivateFile.contents(of: url.path, maxBytes: maxBytes) {
        case .data(let contents):
            data = contents
        case .missing:
            withIndex { $0.removeValue(for: name) }
            return nil
        case .unreadable:
            return nil  // perhaps later: kept
        case .refused:
            discard(name)
            return nil
        }
        guard let (storedKeyHash, response) = Self.decode(data), storedKeyHash == SHA256Digest.hexHash(key) else {
            discard(name)
            return nil
        }
        withIndex { $0.set((), size: Self.blocks(data.count), for: name) }
        try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: url.path)
        return response
    }

    /// Stores `response` under `key`, then evicts least-recently-used entries over ``maxBytes``.
    public func store(_ response: CachedResponse, for key: String) {
        guard let data = Self.encode(response, key: key), Self.blocks(data.count) <= maxBytes else {
            remove(for: key)
            return
        }
        let name = Self.fileName(for: key)
        guard isDirectoryTrusted(creating: true) else { return }
        do {
            try AtomicFile.write(data, to: directory.appendingPathComponent(name).path, mode: 0o600)
        } catch {
            return
        }
        withIndex { $0.set((), size: Self.blocks(data.count), for: name) }
        evict()
    }

    /// `size` rounded up to whole 4 KiB blocks (`Int.max` past what an `Int` holds).
    static func blocks(_ size: Int) -> Int {
        let block = 4096
        let count = size / block + (size % block > 0 ? 1 : 0)
        return count > Int.max / block ? Int.max : count * block
    }

    /// Removes the entry for `key`.
    public func remove(for key: String) {
        guard isDirectoryTrusted(creating: false) else { return }
        discard(Self.fileName(for: key))
    }

    /// Removes every entry (and only entries).
    public func removeAll() {
        guard isDirectoryTrusted(creating: false) else { return }
        for name in withIndex({ $0.keysByRecency }) {
            discard(name)
        }
    }

    // MARK: Directory

    /// Whether the directory is one only this user can change (see ``directoryProblem``);
    /// with `creating`, a missing one is made first (0700, parents too).
    private func isDirectoryTrusted(creating: Bool) -> Bool {
        var state = PrivateFile.directoryState(directory.path, tightening: true)
        if state == .missing, creating {
            try? AtomicFile.makeDirectory(directory.path, mode: 0o700)
            state = PrivateFile.directoryState(directory.path, tightening: true)
        }
        switch state {
        case .trusted:
            if directoryProblem != nil { index = nil }  // listed again, now that it is trusted
            directoryProblem = nil
            return true
        case .missing:
            directoryProblem = nil
            return false
        case .untrusted(let reason):
            if directoryProblem == nil { index = nil }  // what was listed is not trusted either
            directoryProblem = reason
            return false
        }
    }

    // MARK: Index and eviction

    /// Runs `body` on the index, reading it from the directory first if this store has not yet.
    private func withIndex<Result>(_ body: (inout LRUEntries<Void>) -> Result) -> Result {
        var loaded = index ?? readIndex()
        index = nil  // `loaded` is then the only reference: mutated in place, not copied.
        defer { index = loaded }
        return body(&loaded)
    }

    /// The entries in the directory, the least recently modified first.
    private func readIndex() -> LRUEntries<Void> {
        guard PrivateFile.directoryState(directory.path, tightening: true) == .trusted else { return LRUEntries() }
        AtomicFile.removeAbandonedTemporaries(in: directory.path, targetsEndingWith: "." + Self.fileExtension)
        var found: [(name: String, size: Int, modified: Date)] = []
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasSuffix("." + Self.fileExtension) {
            let path = directory.appendingPathComponent(name).path
            // Regular files only: a directory named like an entry (a user's `backup.etag/`) was
            // counted, then removed with everything in it by the eviction.
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                attributes[.type] as? FileAttributeType == .typeRegular,
                let size = (attributes[.size] as? NSNumber)?.intValue
            else { continue }
            // Larger than the cap (a sparse 5 EiB file): it could never be read, and its size
            // would only crowd out the rest.
            guard size <= maxBytes else {
                removeFile(name)
                continue
            }
            found.append((name, Self.blocks(size), attributes[.modificationDate] as? Date ?? .distantPast))
        }
        var entries = LRUEntries<Void>()
        for entry in found.sorted(by: { $0.modified < $1.modified }) {
            entries.set((), size: entry.size, for: entry.name)
        }
        return entries
    }

    /// Removes the least recently used entries while they take more than ``maxBytes``: each
    /// eviction costs one file removal, whatever the number of entries.
    private func evict() {
        while let oldest = withIndex({ $0.totalSize > maxBytes ? $0.removeOldest() : nil }) {
            removeFile(oldest)
        }
    }

    private func discard(_ name: String) {
        removeFile(name)
        withIndex { $0.removeValue(for: name) }
    }

    /// Removes the entry file `name` with `unlink`, which never removes a directory (what
    /// `FileManager.removeItem` does, recursively, for whatever the name has become).
    private func removeFile(_ name: String) {
        _ = unlink(directory.appendingPathComponent(name).path)
    }

    // MARK: File format
    // magic "GNETAG2\n" | UInt64 big-endian metadata length | metadata JSON | body
    // The metadata holds the key's SHA-256 and the body length, so a truncated or swapped file
    // is detected. The key itself is never written: it holds the URL, whose query may carry a
    // credential (`?api_key=…`). For the same reason a URL with user info or a sensitive query
    // value is not stored either (the entry's `url` reads back as `nil`).

    private struct Metadata: Codable {
        var keyHash: String
        var bodyLength: Int
        var statusCode: Int
        var headers: [String: String]
        var url: URL?
        var etag: String
        var storedAt: Date
    }

    /// `url`, unless it carries user info or anything a log record hides of a URL (by
    /// ``Redactor/url(_:)``'s rules: a query value or path parameter named like a secret, after
    /// `&`, `;` or a nested `?`, percent-encoded or not, and the query-only names such as
    /// `code`). Only the entry's `url` is left out; the entry is stored.
    static func storableURL(_ url: URL?) -> URL? {
        guard let url, let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
        if components.user != nil || components.password != nil { return nil }
        let shown = Redactor.url(url)
        if shown.hasPrefix("<") || shown.contains(Redactor.placeholder) { return nil }
        return url
    }

    static func fileName(for key: String) -> String {
        SHA256Digest.hexHash(key) + "." + fileExtension
    }

    static func encode(_ response: CachedResponse, key: String) -> Data? {
        let metadata = Metadata(
            keyHash: SHA256Digest.hexHash(key), bodyLength: response.body.count, statusCode: response.statusCode,
            headers: response.headers, url: storableURL(response.url), etag: response.etag,
            storedAt: response.storedAt)
        guard let json = try? JSONEncoder().encode(metadata) else { return nil }
        var data = magic
        var length = UInt64(json.count).bigEndian
        withUnsafeBytes(of: &length) { data.append(contentsOf: $0) }
        data.append(json)
        data.append(response.body)
        return data
    }

    static func decode(_ data: Data) -> (keyHash: String, response: CachedResponse)? {
        let bytes = [UInt8](data)
        let header = magic.count + 8
        guard bytes.count >= header, Data(bytes[0..<magic.count]) == magic else { return nil }
        let length = bytes[magic.count..<header].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard length <= UInt64(bytes.count - header) else { return nil }
        let metadataEnd = header + Int(length)
        guard let metadata = try? JSONDecoder().decode(Metadata.self, from: Data(bytes[header..<metadataEnd])),
            metadata.bodyLength >= 0, bytes.count - metadataEnd == metadata.bodyLength
        else { return nil }
        let response = CachedResponse(
            body: Data(bytes[metadataEnd...]), statusCode: metadata.statusCode, headers: metadata.headers,
            url: metadata.url, etag: metadata.etag, storedAt: metadata.storedAt)
        return (metadata.keyHash, response)
    }
}
