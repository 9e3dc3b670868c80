import WebSocket
import XCTest

/// The server's answer to permessage-deflate offers (RFC 7692 §7.1): the first acceptable offer,
/// the parameters the response must echo, and nil when none can be accepted.
final class DeflateOfferTests: XCTestCase {
    func testOffersOfRealClients() {
        // Chrome and Firefox.
        let browser = PerMessageDeflate.accepting(offer: "permessage-deflate; client_max_window_bits")
        XCTAssertEqual(browser?.response, "permessage-deflate")
        XCTAssertEqual(browser?.parameters, PerMessageDeflate())
        // python websockets' default.
        let python = PerMessageDeflate.accepting(offer: "permessage-deflate; server_max_window_bits=12; client_max_window_bits=12")
        XCTAssertEqual(python?.response, "permessage-deflate; server_max_window_bits=12")
        XCTAssertEqual(python?.parameters, PerMessageDeflate(serverMaxWindowBits: 12))
        XCTAssertEqual(python?.parameters.inflateWindowBits(for: .clientToServer), 15,
                       "client_max_window_bits is not answered: the client may use 15 bits")
        let hints = PerMessageDeflate.accepting(offer: "permessage-deflate; client_no_context_takeover; server_no_context_takeover")
        XCTAssertEqual(hints?.response, "permessage-deflate; client_no_context_takeover; server_no_context_takeover")
        XCTAssertEqual(hints?.parameters, PerMessageDeflate(clientNoContextTakeover: true, serverNoContextTakeover: true))
    }

    func testTheFirstAcceptableOfferWins() {
        let answer = PerMessageDeflate.accepting(offer:
            "x-webkit-deflate-frame, permessage-deflate; server_max_window_bits=7, permessage-deflate; server_max_window_bits=10, permessage-deflate")
        XCTAssertEqual(answer?.response, "permessage-deflate; server_max_window_bits=10", "7 is out of range: that offer is skipped")
        XCTAssertEqual(PerMessageDeflate.accepting(offer: "permessage-deflate; mystery=1, permessage-deflate")?.response,
                       "permessage-deflate", "an unknown parameter declines that offer only")
    }

    func testNothingAcceptable() {
        for offer in ["", "x-webkit-deflate-frame", "permessage-deflate; server_max_window_bits", "permessage-deflate; client_no_context_takeover=1",
                      "permessage-deflate; server_no_context_takeover; server_no_context_takeover", "permessage-deflate; a=\"unterminated",
                      "permessage-deflate; client_max_window_bits=16"] {
            XCTAssertNil(PerMessageDeflate.accepting(offer: offer), offer)
        }
    }
}
