import Foundation
import Testing

@testable import GentleNetworking

func entry(_ body: String, etag: String = "\"e\"") -> CachedResponse {
    CachedResponse(
        body: Data(body.utf8), statusCode: 200, headers: ["ETag": etag], url: URL(string: "https://h/x"), etag: etag,
        storedAt: Date(timeIntervalSince1970: 0))
}

@Suite("InMemoryETagStore")
struct InMemoryETagStoreTests {
    @Test("Evicts the least recently used entry when over the entry count")
    func lruByCount() async {
        let store = InMemoryETagStore(maxEntries: 2)
        await store.store(entry("a"), for: "a")
        await store.store(entry("b"), for: "b")
        _ = await store.cachedResponse(for: "a")  // a is now more recent than b
        await store.store(entry("c"), for: "c")
        #expect(await store.cachedResponse(for: "a") != nil)
        #expect(await store.cachedResponse(for: "b") == nil)
        #expect(await store.cachedResponse(for: "c") != nil)
        #expect(await store.count == 2)
    }

    @Test("Evicts by total bytes, and never stores an entry larger than the cap")
    func lruByBytes() async {
        let one = entry(String(repeating: "x", count: 400)).approximateSize
        let store = InMemoryETagStore(maxEntries: 100, maxBytes: one * 2)
        await store.store(entry(String(repeating: "x", count: 400)), for: "1")
        await store.store(entry(String(repeating: "y", count: 400)), for: "2")
        await store.store(entry(String(repeating: "z", count: 400)), for: "3")
        #expect(await store.cachedResponse(for: "1") == nil)
        #expect(await store.byteCount <= one * 2)
        await store.store(entry(String(repeating: "w", count: 5000)), for: "big")
        #expect(await store.cachedResponse(for: "big") == nil)
        #expect(await store.cachedResponse(for: "3") != nil)
        await store.removeAll()
        #expect(await store.count == 0)
        #expect(await store.byteCount == 0)
    }

    @Test("Long URLs (a redirect's Location, a request's own) count against the byte limit")
    func urlsCount() async throws {
        let store = InMemoryETagStore(maxEntries: 1_000, maxBytes: 1 << 20)
        for index in 0..<100 {
            let long = "https://h.example/" + String(repeating: "p", count: 100_000) + "/\(index)"
            let url = try #require(URL(string: long))
            let response = CachedResponse(
                body: Data("{}".utf8), statusCode: 200, headers: [:], url: url, etag: "\"v\"", storedAt: Date())
            await store.store(response, for: "GET " + long)
        }
        // 100 entries of ~100 KB of URL are ~10 MB: at most 1 MiB is kept.
        let kept = await store.count
        #expect(kept <= 10, "\(kept) entries kept")
        #expect(await store.byteCount <= 1 << 20)
    }
}

@Suite("DiskETagStore")
struct DiskETagStoreTests {
    @Test("Round-trips entries across store instances, with private file modes")
    func roundTrip() async throws {
        let directory = makeTemporaryDirectory().appendingPathComponent("etags")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let original = entry(#"{"id":1}"#, etag: "W/\"abc\"")
        await DiskETagStore(directory: directory).store(original, for: "GET https://h/x")
        let reopened = DiskETagStore(directory: directory)
        #expect(await reopened.cachedResponse(for: "GET https://h/x") == original)
        #expect(await reopened.cachedResponse(for: "GET https://h/other") == nil)
        let file = directory.appendingPathComponent(DiskETagStore.fileName(for: "GET https://h/x")).path
        let fileMode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? NSNumber
        let directoryMode =
            try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? NSNumber
        #expect(fileMode?.intValue == 0o600)
        #expect(directoryMode?.intValue == 0o700)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.count == 1 && names[0].hasSuffix(".etag"), "no temporary files are left: \(names)")
    }

    @Test("A corrupt, truncated or swapped file is a miss and is removed")
    func corruptIsMiss() async throws {
        let directory = makeTemporaryDirectory().appendingPathComponent("etags")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let store = DiskETagStore(directory: directory)
        await store.store(entry(String(repeating: "b", count: 1000)), for: "k1")
        await store.store(entry("other"), for: "k2")
        let path1 = directory.appendingPathComponent(DiskETagStore.fileName(for: "k1"))
        let path2 = directory.appendingPathComponent(DiskETagStore.fileName(for: "k2"))
        let full = try Data(contentsOf: path1)

        try full.prefix(full.count - 10).write(to: path1)  // a partial write
        #expect(await store.cachedResponse(for: "k1") == nil)
        #expect(!FileManager.default.fileExists(atPath: path1.path))

        try Data("garbage".utf8).write(to: path1)
        #expect(await store.cachedResponse(for: "k1") == nil)

        try Data(contentsOf: path2).write(to: path1)  // another key's entry under this name
        #expect(await store.cachedResponse(for: "k1") == nil)
        #expect(await store.cachedResponse(for: "k2")?.body == Data("other".utf8))
    }

    @Test("The size cap evicts least-recently-used entries, also after a restart")
    func sizeCap() async throws {
        let directory = makeTemporaryDirectory().appendingPathComponent("etags")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let body = String(repeating: "x", count: 1000)
        // Counted in whole 4 KiB blocks, as a file system allocates them.
        let size = DiskETagStore.blocks(try #require(DiskETagStore.encode(entry(body), key: "k0")).count)
        let store = DiskETagStore(directory: directory, maxBytes: size * 3 + 10)
        for index in 0..<3 {
            await store.store(entry(body), for: "k\(index)")
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        _ = await store.cachedResponse(for: "k0")  // k1 is now the least recently used
        await store.store(entry(body), for: "k3")
        #expect(await store.cachedResponse(for: "k1") == nil)
        #expect(await store.cachedResponse(for: "k0") != nil)
        #expect(await store.byteCount <= size * 3 + 10)

        try await Task.sleep(nanoseconds: 20_000_000)
        let restarted = DiskETagStore(directory: directory, maxBytes: size * 3 + 10)
        _ = await restarted.cachedResponse(for: "k2")
        await restarted.store(entry(body), for: "k4")
        // Recency after phase one, oldest first: k2, k3, k0 (read last); reading k2 after the
        // restart makes k3 the least recently used.
        #expect(await restarted.cachedResponse(for: "k3") == nil)
        #expect(await restarted.cachedResponse(for: "k0") != nil)
        #expect(await restarted.cachedResponse(for: "k2") != nil)
        #expect(await restarted.cachedResponse(for: "k4") != nil)
    }

    @Test("With 500 entries at the cap, each new one evicts exactly the least recently used")
    func evictionOrderAtScale() async throws {
        let directory = makeTemporaryDirectory().appendingPathComponent("etags")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let size = DiskETagStore.blocks(try #require(DiskETagStore.encode(entry("v"), key: "k0")).count)
        #expect(size == 4096, "a small entry takes one block")
        let store = DiskETagStore(directory: directory, maxBytes: size * 500)
        for index in 0..<500 {
            await store.store(entry("v"), for: "k\(index)")
        }
        // Reading k0…k49 makes them the newest: the next 50 entries evict k50…k99.
        for index in 0..<50 {
            #expect(await store.cachedResponse(for: "k\(index)") != nil)
        }
        for index in 500..<550 {
            await store.store(entry("v"), for: "k\(index)")
        }
        #expect(await store.byteCount == size * 500)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).count == 500)
        for index in [0, 49, 100, 499, 549] {
            #expect(await store.cachedResponse(for: "k\(index)") != nil, "k\(index)")
        }
        for index in [50, 75, 99] {
            #expect(await store.cachedResponse(for: "k\(index)") == nil, "k\(index)")
        }
    }

    @Test("Many tasks may use one store at once")
    func concurrentUse() async throws {
        let directory = makeTemporaryDirectory().appendingPathComponent("etags")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let store = DiskETagStore(directory: directory)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    await store.store(entry("v\(index % 20)"), for: "k\(index % 20)")
                    _ = await store.cachedResponse(for: "k\((index + 7) % 20)")
                }
            }
        }
        for index in 0..<20 {
            #expect(await store.cachedResponse(for: "k\(index)")?.body == Data("v\(index)".utf8))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).count == 20)
    }
}

@Suite("SHA-256")
struct SHA256Tests {
    @Test("Matches the FIPS 180-4 test vectors")
    func vectors() {
        #expect(SHA256Digest.hexHash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256Digest.hexHash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256Digest.hexHash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            SHA256Digest.hexHash(String(repeating: "a", count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}

@Suite("DiskETagStore: sizes read from disk never overflow, and count in whole blocks")
struct DiskETagStoreSizeTests {
    @Test("Two sparse 5 EiB entry files (tmpfs allows them): removed on first use, no trap; the rest counted by blocks")
    func sparseGiants() async throws {
        // tmpfs, where a file may claim up to 2^63 - 1 bytes (ext4 refuses more than 16 TiB).
        var shm = stat()
        try #require(stat("/dev/shm", &shm) == 0, "the test needs tmpfs at /dev/shm")
        let root = URL(fileURLWithPath: "/dev/shm/gentle-etag-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("etags")
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for name in ["a", "b"] {
            let path = directory.appendingPathComponent("\(name).etag").path
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            try #require(descriptor >= 0)
            #expect(ftruncate(descriptor, 5 << 60) == 0)
            close(descriptor)
        }
        let store = DiskETagStore(directory: directory)
        await store.store(
            CachedResponse(
                body: Data("v".utf8), statusCode: 200, headers: [:], url: nil, etag: "\"1\"", storedAt: Date()),
            for: "k")
        #expect(await store.byteCount == 4096)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.count == 1 && !names.contains("a.etag") && !names.contains("b.etag"), "\(names)")
        #expect(await store.cachedResponse(for: "k")?.body == Data("v".utf8))
        #expect(DiskETagStore.blocks(0) == 0 && DiskETagStore.blocks(1) == 4096 && DiskETagStore.blocks(4096) == 4096)
        #expect(DiskETagStore.blocks(Int.max) == Int.max)
    }
}
