import Foundation
import GentleNetworking
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the credential store does with permissions it did not set: it refuses (like ssh), it
/// never tightens, widens or rewrites what it found, and it writes nothing next to it. (Creation
/// under `umask 000`, in a child process, is checked after every kill in
/// `KillNinePersistenceTests`.)
@Suite("The credential file's permissions are enforced: 0600 in 0700, or refused")
struct CredentialFilePermissionTests {
    static func mode(_ path: String) -> mode_t {
        var info = stat()
        lstat(path, &info)
        return info.st_mode & 0o777
    }

    static func isInsecurePermissions(_ error: any Error) -> Bool {
        (error as? CredentialStoreError)?.code == .insecurePermissions
    }

    @Test("A file that exists with wider permissions is refused for reading and writing, and left as it was")
    func widerFileIsRefusedNotTightened() throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("gn")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        chmod(directory.path, 0o700)
        let file = directory.appendingPathComponent("credentials.json")
        let contents = Data(#"{"entries":{"token":"perm-secret"},"version":1}"#.utf8)
        for wide: mode_t in [0o640, 0o604, 0o660, 0o666] {
            try contents.write(to: file)
            chmod(file.path, wide)
            let store = FileCredentialStore(directory: directory)

            #expect(throws: CredentialStoreError.self) { try store.value(for: "token") }
            #expect { try store.value(for: "token") } throws: { Self.isInsecurePermissions($0) }
            #expect { try store.setValue("new", for: "token") } throws: { Self.isInsecurePermissions($0) }
            #expect { try store.setValue(nil, for: "token") } throws: { Self.isInsecurePermissions($0) }

            #expect(Self.mode(file.path) == wide, "the store does not change the mode it found")
            #expect(try Data(contentsOf: file) == contents, "nor the file")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["credentials.json"])
        }
    }

    @Test("A directory that exists with wider permissions is refused before anything is written in it")
    func widerDirectoryIsRefused() throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        for wide: mode_t in [0o750, 0o705, 0o755, 0o777] {
            let directory = root.appendingPathComponent("gn-\(String(wide, radix: 8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            chmod(directory.path, wide)
            let store = FileCredentialStore(directory: directory)

            #expect { try store.setValue("perm-secret", for: "token") } throws: { Self.isInsecurePermissions($0) }
            #expect { try store.value(for: "token") } throws: { Self.isInsecurePermissions($0) }

            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "nothing written")
            #expect(Self.mode(directory.path) == wide, "the store does not change the mode it found")
        }
    }

    @Test("A private directory owned by another user is refused", .enabled(if: getuid() == 0, "needs root to chown"))
    func foreignOwnerIsRefused() throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("gn")
        let store = FileCredentialStore(directory: directory)
        try store.setValue("perm-secret", for: "token")
        #expect(chown(directory.path, 65534, 65534) == 0)

        #expect { try FileCredentialStore(directory: directory).value(for: "token") } throws: {
            Self.isInsecurePermissions($0)
        }
        #expect { try store.setValue("new", for: "token") } throws: { Self.isInsecurePermissions($0) }
    }

    @Test("A credentials file owned by another user is refused", .enabled(if: getuid() == 0, "needs root to chown"))
    func foreignFileOwnerIsRefused() throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("gn")
        try FileCredentialStore(directory: directory).setValue("perm-secret", for: "token")
        #expect(chown(directory.appendingPathComponent("credentials.json").path, 65534, 65534) == 0)

        #expect { try FileCredentialStore(directory: directory).value(for: "token") } throws: {
            Self.isInsecurePermissions($0)
        }
    }

    @Test("A credentials file that is a symbolic link is not followed, for reading or writing")
    func symbolicLinkIsRefused() throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("gn")
        let store = FileCredentialStore(directory: directory)
        try store.setValue("first", for: "token")
        let elsewhere = root.appendingPathComponent("elsewhere.json")
        let decoy = Data(#"{"entries":{"token":"decoy"},"version":1}"#.utf8)
        try decoy.write(to: elsewhere)
        chmod(elsewhere.path, 0o600)
        let file = directory.appendingPathComponent("credentials.json").path
        unlink(file)
        #expect(symlink(elsewhere.path, file) == 0)

        #expect(throws: CredentialStoreError.self) { try FileCredentialStore(directory: directory).value(for: "token") }
        #expect(throws: CredentialStoreError.self) {
            try FileCredentialStore(directory: directory).setValue("x", for: "token")
        }
        #expect(try Data(contentsOf: elsewhere) == decoy, "the link's target is never written")
    }

    @Test("The store creates a missing directory, and missing parents, 0700, and the file 0600")
    func createsPrivate() throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let parent = root.appendingPathComponent("config")
        let directory = parent.appendingPathComponent("gentle-networking")
        let store = FileCredentialStore(directory: directory)

        try store.setValue("perm-secret", for: "token")

        #expect(Self.mode(parent.path) == 0o700)
        #expect(Self.mode(directory.path) == 0o700)
        #expect(Self.mode(directory.appendingPathComponent("credentials.json").path) == 0o600)
    }
}

@Suite("The credential file is a small regular file, or refused without waiting on it")
struct CredentialFileShapeTests {
    private func privateDirectory() throws -> (root: URL, directory: URL) {
        let root = makeTemporaryDirectory()
        let directory = root.appendingPathComponent("gn")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        chmod(directory.path, 0o700)
        return (root, directory)
    }

    @Test("A FIFO where the file belongs is refused at once (no writer ever comes), reads and writes alike")
    func fifoIsRefused() throws {
        let (root, directory) = try privateDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let file = directory.appendingPathComponent("credentials.json")
        #expect(mkfifo(file.path, 0o600) == 0)
        let store = FileCredentialStore(directory: directory)
        let start = Date()
        #expect { try store.value(for: "token") } throws: {
            (($0 as? CredentialStoreError)?.code == .insecurePermissions)
        }
        #expect { try store.setValue("new", for: "token") } throws: {
            (($0 as? CredentialStoreError)?.code == .insecurePermissions)
        }
        #expect(Date().timeIntervalSince(start) < 60)  // a FIFO opened for reading blocks forever
        var info = stat()
        lstat(file.path, &info)
        #expect(info.st_mode & S_IFMT == S_IFIFO, "left as it was")
    }

    @Test("A file over 1 MiB is corruptFile and left untouched, for reads and writes")
    func hugeFileIsRefused() throws {
        let (root, directory) = try privateDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let file = directory.appendingPathComponent("credentials.json")
        let padding = String(repeating: "x", count: (1 << 20) + 1)
        let contents = Data(#"{"entries":{"token":"big-secret","pad":"\#(padding)"},"version":1}"#.utf8)
        try contents.write(to: file)
        chmod(file.path, 0o600)
        let store = FileCredentialStore(directory: directory)
        #expect { try store.value(for: "token") } throws: { (($0 as? CredentialStoreError)?.code == .corruptFile) }
        #expect { try store.setValue(nil, for: "token") } throws: {
            (($0 as? CredentialStoreError)?.code == .corruptFile)
        }
        #expect(try Data(contentsOf: file) == contents)
        // Open to others as well: that is what is reported, as for any such file.
        chmod(file.path, 0o644)
        #expect { try store.value(for: "token") } throws: {
            (($0 as? CredentialStoreError)?.code == .insecurePermissions)
        }
    }
}
