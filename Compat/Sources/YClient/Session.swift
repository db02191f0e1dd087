import Foundation
import YNetwork

#if swift(>=6)
    /// The app's session: a bearer token. (Swift 6: `SessionManager` is `Sendable`, so the mutable
    /// token sits behind a lock and the class is `@unchecked Sendable`.)
    public final class TokenSessionManager: SessionManager, @unchecked Sendable {
        private let lock = NSLock()
        private var token: String?

        public init(token: String?) {
            self.token = token
        }

        public var current: String? {
            lock.lock()
            defer { lock.unlock() }
            return token
        }

        public func apply(_ request: inout URLRequest) {
            if let token = current {
                request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            }
        }

        public func refresh(networkManager: NetworkManager) async -> Bool {
            store("refreshed")
            return true
        }

        private func store(_ token: String) {
            lock.lock()
            self.token = token
            lock.unlock()
        }
    }
#else
    /// The app's session: a bearer token, as Swift 5 code keeps it.
    public final class TokenSessionManager: SessionManager {
        private(set) var token: String?

        public init(token: String?) {
            self.token = token
        }

        public var current: String? { return token }

        public func apply(_ request: inout URLRequest) {
            if let token = token {
                request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            }
        }

        public func refresh(networkManager: NetworkManager) async -> Bool {
            token = "refreshed"
            return true
        }
    }
#endif

/// The app's service.
public final class ProfileService {
    public let manager: NetworkManager

    public init(manager: NetworkManager = NetworkManager(), basePath: String = "https://api.example.com/v1") {
        self.manager = manager
        manager.configure(with: makeConfiguration(basePath: basePath), sessionManager: TokenSessionManager(token: "t"))
    }

    public func profiles(page: Int) async throws -> [Profile] {
        return try await manager.submit(GetProfilesRequest(page: page))
    }

    public func update(_ profile: Profile) async throws -> Profile {
        return try await manager.submit(UpdateProfileRequest(profile: profile))
    }

    public func login(user: String) async throws {
        let _: EmptyNetworkResponse = try await manager.submit(LoginRequest(user: user))
    }

    /// The completion form, on the main queue.
    public func loadProfiles(completion: @escaping APICompletion<[Profile]>) {
        manager.submit(GetProfilesRequest(page: 1), completion: completion)
    }

    /// What the app shows for an error.
    public static func message(for error: Error) -> String {
        if let httpError = error as? HttpError {
            return "HTTP \(httpError.statusCode)"
        }
        switch error as? NetworkError {
        case .some(.unauthenticated):
            return "log in"
        case .some(.noBasePath), .some(.invalidURL), .some(.notConfigured):
            return "bad setup"
        case .some(.noInternet):
            return "offline"
        case .some(.deserialization(let inner)):
            return "bad data: \(inner)"
        default:
            return "error"
        }
    }
}
