// The server's side of permessage-deflate negotiation (RFC 7692 §5, §7.1), for a server that
// never compresses what it sends (RFC 7692 §6.1 lets an endpoint send any message uncompressed)
// and inflates what the client compresses.

extension PerMessageDeflate {
    /// The answer to a client's `Sec-WebSocket-Extensions` offer: the first permessage-deflate
    /// offer whose parameters are all valid is accepted, with the parameters the response must
    /// echo (`server_no_context_takeover`, `server_max_window_bits`) and the client's
    /// `client_no_context_takeover` hint. Returns nil when nothing can be accepted (no offer, or
    /// each is malformed): the 101 then carries no extension and both sides send plain frames.
    ///
    /// `client_max_window_bits` is not answered, which lets the client use up to 15 bits
    /// (RFC 7692 §7.1.2.2); the decoder's window is 15 bits then.
    public static func accepting(offer header: String) -> (parameters: PerMessageDeflate, response: String)? {
        guard let offers = try? ExtensionListParser.parse(Array(header.utf8)) else { return nil }
        offers: for offer in offers where offer.name == "permessage-deflate" {
            var agreed = PerMessageDeflate()
            var response = "permessage-deflate"
            var seen: Set<String> = []
            for (name, value) in offer.params {
                guard seen.insert(name).inserted else { continue offers }
                switch name {
                case "server_no_context_takeover", "client_no_context_takeover":
                    guard value == nil else { continue offers }
                    if name == "server_no_context_takeover" {
                        agreed.serverNoContextTakeover = true
                    } else {
                        agreed.clientNoContextTakeover = true
                    }
                    response += "; " + name
                case "server_max_window_bits":
                    guard let value, let bits = windowBits(value) else { continue offers }
                    agreed.serverMaxWindowBits = bits
                    response += "; server_max_window_bits=\(bits)"
                case "client_max_window_bits":
                    if let value, windowBits(value) == nil { continue offers }
                default:
                    continue offers
                }
            }
            return (agreed, response)
        }
        return nil
    }
}
