import Foundation
import JustNetworking

/// The app's requester facade: any `Requester`, URLSession by default.
public final class FilmService {
    private let requester: Requester
    private let token: Token

    public init(requester: Requester = URLSession.shared, token: Token) {
        self.requester = requester
        self.token = token
    }

    #if swift(>=6)
        /// Loads the titles of a page of films. (Swift 6: the completion is `@Sendable`, as it is
        /// called on the response queue.)
        public func loadTitles(page: Int, completion: @escaping @Sendable (Result<[String], Error>) -> Void) {
            requester.execute(filmsRequest(token: token, page: page)) { result in
                completion(result.map { $0.results.map(\.title) })
            }
        }
    #else
        /// Loads the titles of a page of films.
        public func loadTitles(page: Int, completion: @escaping (Result<[String], Error>) -> Void) {
            requester.execute(filmsRequest(token: token, page: page)) { result in
                completion(result.map { $0.results.map(\.title) })
            }
        }
    #endif

    /// Rates a film.
    public func rate(id: Int, stars: Int, completion: @escaping Response<Void>) {
        requester.execute(rateRequest(id: id, rating: Rating(stars: stars), token: token), response: completion)
    }
}

/// A requester in the README's style (the README wraps Alamofire): parses with `request.parser`
/// on `request.responseQueue`, here over a plain data-task loader.
public struct LoaderRequester: Requester {
    /// Loads the bytes of a request: the app's networking stack.
    public typealias Loader = @Sendable (URLRequest, @escaping @Sendable (Data?, Error?) -> Void) -> Void

    private let load: Loader

    public init(load: @escaping Loader) {
        self.load = load
    }

    public func execute<T: Request>(_ request: T, response: @escaping Response<T.Response>) {
        let urlRequest = request.urlRequest
        load(urlRequest) { data, error in
            request.responseQueue.async {
                if let data = data {
                    do {
                        response(.success(try request.parser(data)))
                    } catch {
                        response(.failure(error))
                    }
                } else {
                    response(.failure(error ?? URLError(.badServerResponse)))
                }
            }
        }
    }
}
