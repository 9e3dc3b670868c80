/// Text safe for a terminal or a log: control characters (C0, DEL, C1) become `\xNN`, so bytes
/// from the wire can never move the cursor, change colours or forge log lines.
public func sanitizedForLog(_ text: String) -> String {
    var needsWork = false
    for scalar in text.unicodeScalars where isControl(scalar) {
        needsWork = true
        break
    }
    guard needsWork else { return text }
    var result = ""
    result.reserveCapacity(text.utf8.count + 8)
    for scalar in text.unicodeScalars {
        if isControl(scalar) {
            let hex = String(scalar.value, radix: 16, uppercase: false)
            result += "\\x" + (hex.count < 2 ? "0" + hex : hex)
        } else {
            result.unicodeScalars.append(scalar)
        }
    }
    return result
}

@inline(__always)
private func isControl(_ scalar: Unicode.Scalar) -> Bool {
    let value = scalar.value
    return value < 0x20 || (value >= 0x7F && value < 0xA0)
}
