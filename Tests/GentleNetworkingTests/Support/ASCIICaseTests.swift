import Testing

@testable import GentleNetworking

@Suite("Header names compare case-insensitively in ASCII only")
struct ASCIICaseTests {
    @Test("Letters fold; everything else compares exactly")
    func folding() {
        #expect("Authorization".equalsIgnoringASCIICase("authorization"))
        #expect("X-API-Key".equalsIgnoringASCIICase("x-api-KEY"))
        #expect("".equalsIgnoringASCIICase(""))
        #expect(!"Authorization".equalsIgnoringASCIICase("Authorizatio"))
        #expect(!"Cookie".equalsIgnoringASCIICase("Cookies"))
        // 0x40 '@' and 0x60 '`' differ by 0x20 but are not letters; nor are '[' and '{'.
        #expect(!"a@b".equalsIgnoringASCIICase("a`b"))
        #expect(!"[".equalsIgnoringASCIICase("{"))
        // Non-ASCII is not folded (HTTP field names are ASCII tokens).
        #expect(!"É".equalsIgnoringASCIICase("é"))
        #expect("é".equalsIgnoringASCIICase("é"))
        #expect("Api-Key".equalsIgnoringASCIICase("API-KEY"))
    }

    @Test("withCredentialHeaders adds a name only when it is not in force, in any case")
    func credentialNames() async {
        let inside = await Origin.withCredentialHeaders(["authorization", "X-Custom-Token"]) {
            await Origin.withCredentialHeaders(["x-custom-token", "X-Other"]) { Origin.credentialHeadersInForce }
        }
        #expect(inside == Origin.credentialHeaders + ["X-Custom-Token", "X-Other"])
        #expect(
            await Origin.withCredentialHeaders(["COOKIE"]) { Origin.credentialHeadersInForce }
                == Origin.credentialHeaders)
    }
}
