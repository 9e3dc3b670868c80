// Small text helpers of the proxy core (no Foundation).

/// The message of a target error, else the error as text.
func describe(_ error: Error) -> String {
    if case TargetError.invalid(let message) = error { return message }
    return "\(error)"
}

/// "15 s", "0.5 s": whole seconds without a fraction.
package func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(format1(seconds)) s"
}

/// One decimal place without Foundation.
package func format1(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}

/// `how` the client left ("client reset the stream (CANCEL)") with when, counted from the
/// request's start `since`: the `_error` a generated mock and `harrec replay` read the wait from
/// (HARScenarioBuilder.clientGaveUp parses it back).
func gaveUpReason(_ how: String, since start: Double, at now: Double) -> String {
    "\(how) after \(format1(max(0, now - start))) s"
}

/// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
func trimmingSpacesAndTabs<S: StringProtocol>(_ text: S) -> String {
    let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
    return String(text.drop(while: blank).reversed().drop(while: blank).reversed())
}

extension String {
    /// Whether the two are equal when ASCII letters are compared without case (header names).
    public func equalsIgnoringASCIICase(_ other: String) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        // Through the bytes when both are stored as UTF-8 (always, in practice): header names
        // are compared once per field per lookup, on every exchange.
        let fast = a.withContiguousStorageIfAvailable { x in
            b.withContiguousStorageIfAvailable { y in
                for i in 0..<x.count where x[i] != y[i] && Self.foldASCII(x[i]) != Self.foldASCII(y[i]) { return false }
                return true
            }
        }
        if let fast, let equal = fast { return equal }
        for (x, y) in zip(a, b) where x != y && Self.foldASCII(x) != Self.foldASCII(y) { return false }
        return true
    }

    private static func foldASCII(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }
}
