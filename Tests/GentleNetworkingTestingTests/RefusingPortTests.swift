import Foundation
import Testing

@testable import GentleNetworkingTesting

@Suite("RefusingPort: a loopback port that refuses, and stays reserved")
struct RefusingPortTests {
    @Test("Connections are refused, and no server can take the port while it lives")
    func refusesAndReserves() throws {
        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        #expect(refusing.baseURL.absoluteString == "http://127.0.0.1:\(refusing.port)")
        #expect(!POSIXSocket.canConnect(port: refusing.port))
        // A listening socket (SO_REUSEADDR, as LoopbackServer's) cannot bind the reserved port.
        #expect(throws: POSIXSocket.Failure.self) {
            let (descriptor, _) = try POSIXSocket.listenOnLoopback(port: refusing.port)
            POSIXSocket.closeDescriptor(descriptor)
        }
    }
}
