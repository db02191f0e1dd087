import Foundation
import Testing

@testable import YNetwork

private struct Plain: NetworkRequest {
    var path: PathRepresentable { "/items" }
    var method: HttpMethod = .GET
    var body: BodyBuilder? = nil
    var headers: HttpHeaders? = nil
}

@Suite("The headers NetworkManager sets, as Y-Network sets them")
struct RequestHeadersTests {
    private let assembler = RequestAssembler(
        configuration: NetworkManagerConfiguration(basePath: "https://api.example.com"))

    @Test("A JSON request without a body gets its Content-Type, as Y-Network sets it, and no Accept")
    func contentTypeWithoutBody() throws {
        let built = try assembler.build(Plain())
        #expect(built.request.allHTTPHeaderFields ?? [:] == ["Content-Type": "application/json"])
        #expect(built.request.httpBody == nil)
    }

    @Test("A body adds its Content-Type only; an Accept the request sets is kept")
    func bodyAndOwnAccept() throws {
        let built = try assembler.build(
            Plain(method: .POST, body: Data(#"{"a":1}"#.utf8), headers: ["Accept": "application/json"]))
        #expect(built.request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(built.request.value(forHTTPHeaderField: "Accept") == "application/json")
        #expect(built.request.allHTTPHeaderFields?.count == 2)
    }

    @Test("A body that needs an encoder the factory does not have is .serialization(.noEncoder), as in Y-Network")
    func noEncoderIsWrapped() throws {
        struct Encodes: Encodable, BodyBuilder { let a: Int }
        struct NoEncoders: DataParserFactory {
            func encoder(for contentType: RequestContentType) -> DataEncoder? { nil }
            func decoder(for contentType: ResponseContentType) -> DataDecoder? { nil }
        }
        struct Post: NetworkRequest {
            var path: PathRepresentable { "items" }
            var method: HttpMethod { .POST }
            var body: BodyBuilder? { Encodes(a: 1) }
            var parserFactory: DataParserFactory? { NoEncoders() }
        }
        do {
            _ = try assembler.build(Post())
            Issue.record("no encoder must throw")
        } catch NetworkError.serialization(let inner) {
            #expect(inner as? NetworkError == .noEncoder)
        } catch {
            Issue.record("expected .serialization(.noEncoder), got \(error)")
        }
    }

    @Test("A multipart request carries Y-Network's Boundary field beside its Content-Type")
    func boundaryField() throws {
        struct Upload: MultipartRequest {
            var path: PathRepresentable { "upload" }
            var multipart: MultipartBuilder { MultipartForm(parts: ["a": .formField(value: "1")], boundary: "bnd-7") }
        }
        let built = try assembler.build(Upload())
        #expect(built.request.value(forHTTPHeaderField: "Boundary") == "bnd-7")
        #expect(built.request.value(forHTTPHeaderField: "Content-Type") == "multipart/form-data; boundary=bnd-7")
        #expect(try assembler.build(Plain()).request.value(forHTTPHeaderField: "Boundary") == nil)
    }
}
