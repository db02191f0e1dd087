import Foundation
import GentleNetworking
import Testing

@Suite("MockNetworkService")
struct MockNetworkServiceTests {
    let endpoint = Endpoint(path: "/anything", method: .get)
    let environment = DefaultAPIEnvironment(baseURL: URL(string: "https://unused.example"))

    @Test("Decodes one model, an array, and answers requestVoid with 200, without latency by default")
    func decodes() async throws {
        let one = MockNetworkService(responseJSON: #"{"id": 7, "property": "p"}"#)
        let model: Model = try await one.request(to: endpoint, via: environment)
        #expect(model == Model(id: 7, property: "p"))
        let many = MockNetworkService(data: Data(#"[{"id": 1, "property": "a"}, {"id": 2, "property": "b"}]"#.utf8))
        let models: [Model] = try await many.requestModels(to: endpoint, via: environment)
        #expect(models.map(\.id) == [1, 2])
        #expect(try await MockNetworkService().requestVoid(to: endpoint, via: environment) == .success(code: 200))
        #expect(MockNetworkService().duration == .zero)
    }

    @Test("The latency is exactly `duration` on the injected clock")
    func exactLatency() async throws {
        let clock = ManualClock()
        let service = MockNetworkService(
            responseJSON: #"{"id": 1, "property": "late"}"#, duration: .milliseconds(300), clock: clock)
        let call = Task { () throws -> Model in try await service.request(to: endpoint, via: environment) }
        #expect(await clock.waitForSleepers())
        clock.advance(by: .milliseconds(299))
        #expect(clock.sleeperCount == 1, "still waiting 1 ms before the deadline")
        clock.advance(by: .milliseconds(1))
        #expect(try await call.value == Model(id: 1, property: "late"))
        #expect(clock.sleeperCount == 0)

        let void = Task { try await service.requestVoid(to: endpoint, via: environment) }
        #expect(await clock.waitForSleepers())
        clock.advance(by: .milliseconds(300))
        #expect(try await void.value == .success(code: 200))
    }

    @Test("Cancelling during the latency throws CancellationError")
    func cancellation() async {
        let clock = ManualClock()
        let service = MockNetworkService(responseJSON: "[]", duration: .seconds(10), clock: clock)
        let call = Task { () throws -> [Model] in try await service.requestModels(to: endpoint, via: environment) }
        #expect(await clock.waitForSleepers())
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
    }

    @Test("A body that is not the model is NetworkError .decodingFailed with context")
    func decodingFailure() async {
        let service = MockNetworkService(responseJSON: #"{"id": "seven"}"#)
        await #expect {
            let _: Model = try await service.request(to: endpoint, via: environment)
        } throws: { error in
            guard let error = error as? NetworkError, error.kind == .decodingFailed else { return false }
            return error.decodingFailure?.modelType == "Model" && error.underlyingError is DecodingError
        }
    }

    @Test("The injected decoder is used")
    func customDecoder() async throws {
        struct Stamp: Decodable, Equatable { let at: Date }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = DateDecodingStrategies.iso8601FractionalAndNonFractionalSeconds
        let service = MockNetworkService(responseJSON: #"{"at": "1970-01-01T00:00:10.5Z"}"#, jsonDecoder: decoder)
        let stamp: Stamp = try await service.request(to: endpoint, via: environment)
        #expect(stamp.at == Date(timeIntervalSince1970: 10.5))
    }
}
