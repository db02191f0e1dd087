import Foundation
import GentleNetworking

/// The app's repository: every call goes through a `NetworkServiceProtocol`, so tests swap it.
public struct TodoRepository: Sendable {
    private let service: any NetworkServiceProtocol
    private let environment: any APIEnvironmentProtocol

    public init(
        service: any NetworkServiceProtocol = HTTPNetworkService(),
        environment: any APIEnvironmentProtocol = productionEnvironment
    ) {
        self.service = service
        self.environment = environment
    }

    public func todos(page: Int) async throws -> [Todo] {
        return try await service.requestModels(to: TodoEndpoint.list(page: page), via: environment)
    }

    public func todo(id: Int) async throws -> Todo {
        return try await service.request(to: TodoEndpoint.todo(id: id), via: environment)
    }

    public func create(title: String) async throws -> Todo {
        let todo: Todo = try await service.request(to: TodoEndpoint.create(title: title), via: environment)
        return todo
    }

    /// Deletes; answers the status code the server sent.
    @discardableResult
    public func delete(id: Int) async throws -> Int {
        let result = try await service.requestVoid(to: TodoEndpoint.delete(id: id), via: environment)
        switch result {
        case .success(let code):
            return code
        }
    }

    /// Whether a failure is "not found", the way the app's error handling asks.
    public func isMissing(id: Int) async -> Bool {
        do {
            _ = try await todo(id: id)
            return false
        } catch NetworkError.httpStatusError(.notFound) {
            return true
        } catch {
            return false
        }
    }
}

/// The status code of an HTTP status error, as the app logs it.
public func loggedStatus(_ status: HTTPStatusError) -> String {
    switch status {
    case .unauthorized, .forbidden:
        return "auth \(status.statusCode)"
    case .notFound:
        return "missing"
    case .rateLimited:
        return "slow down"
    case .internalServerError, .serviceUnavailable:
        return "server down \(status.statusCode)"
    case .clientError(let code), .serverError(let code), .redirect(let code):
        return "other \(code)"
    }
}
