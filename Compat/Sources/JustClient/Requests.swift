import Foundation
import JustNetworking

/// The snake_case decoder the API needs.
public func filmDecoder() -> JSONDecoder {
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    return decoder
}

#if swift(>=6)
    /// The generic helper of the app. In the Swift 6 mode the decoded type is also
    /// `SendableMetatype`: its conformance is used on the response queue.
    public func buildRequest<T: Decodable & SendableMetatype>(
        type: T.Type, router: Router, compose builder: @escaping RequestBuilder = identity
    ) -> RequestType<T> {
        let factory = RequestFactory(router: router, requestBuilder: builder)
        return RequestType<T>(requestFactory: factory, decoder: filmDecoder())
    }
#else
    /// The generic helper of the app, as Swift 5 code writes it: `T: Decodable`.
    public func buildRequest<T: Decodable>(
        type: T.Type, router: Router, compose builder: @escaping RequestBuilder = identity
    ) -> RequestType<T> {
        let factory = RequestFactory(router: router, requestBuilder: builder)
        return RequestType<T>(requestFactory: factory, decoder: filmDecoder())
    }
#endif

/// All films, authenticated, page `page`.
public func filmsRequest(token: Token, page: Int) -> RequestType<GenericResult<Film>> {
    return buildRequest(
        type: GenericResult<Film>.self, router: FilmRouter.films,
        compose: compose(defaultSettings, addSecurity(token), addQuery(["page": page])))
}

/// One film, through the 1.x name `BaseRequest`.
public func filmRequest(id: Int) -> BaseRequest<Film> {
    let factory = RequestFactory(router: FilmRouter.film(id: id), requestBuilder: requestIdentity)
    return BaseRequest<Film>(requestFactory: factory, decoder: filmDecoder())
}

/// Rates a film: only the status matters.
public func rateRequest(id: Int, rating: Rating, token: Token) -> RequestType<Void> {
    let factory = RequestFactory(
        router: FilmRouter.rate(id: id), requestBuilder: compose(addSecurity(token), addJSONBody(rating)))
    return RequestType<Void>(requestFactory: factory)
}

/// A poster, as raw bytes, parsed on a queue of the app's own.
public func posterRequest(name: String, queue: DispatchQueue) -> RequestType<Data> {
    return RequestType<Data>(
        responseQueue: queue, requestFactory: RequestFactory(router: AssetRouter.poster(name: name))
    ) { data in
        return data
    }
}

/// A request type of the app's own, for the health check's plain-text body.
public struct HealthRequest: Request {
    public typealias Response = String

    public let responseQueue: DispatchQueue
    public let requestFactory: RequestFactory
    public let requestParser: RequestParser<String> = { data in
        return String(decoding: data, as: UTF8.self)
    }

    public init(responseQueue: DispatchQueue = .global()) {
        self.responseQueue = responseQueue
        self.requestFactory = RequestFactory(router: HealthRouter(), requestBuilder: identity)
    }
}
