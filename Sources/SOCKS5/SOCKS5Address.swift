// Address text helpers: IPv4/IPv6 formatting and parsing without Foundation or libc.

enum SOCKS5Address {
    /// Dotted-quad text for 4 bytes.
    static func formatIPv4(_ b: ArraySlice<UInt8>) -> String {
        b.map { String($0) }.joined(separator: ".")
    }

    /// RFC 5952 text for 16 bytes: lowercase hex, no leading zeros, the longest run of two or more
    /// zero groups (the first one on a tie) replaced by `::`, and IPv4-mapped addresses
    /// (`::ffff:0:0/96`) written with a dotted-quad tail (RFC 5952 §5).
    static func formatIPv6(_ bytes: ArraySlice<UInt8>) -> String {
        let b = Array(bytes)
        guard b.count == 16 else { return "::" }
        var groups = [UInt16](repeating: 0, count: 8)
        for i in 0..<8 { groups[i] = UInt16(b[2 * i]) << 8 | UInt16(b[2 * i + 1]) }

        if groups[0..<5].allSatisfy({ $0 == 0 }) && groups[5] == 0xFFFF {
            return "::ffff:" + formatIPv4(b[12..<16])
        }

        // Longest run of zero groups, length >= 2 (RFC 5952 §4.2.2: a single group is not shortened).
        var bestStart = -1, bestLen = 0
        var i = 0
        while i < 8 {
            if groups[i] == 0 {
                var j = i
                while j < 8 && groups[j] == 0 { j += 1 }
                if j - i > bestLen { bestStart = i; bestLen = j - i }
                i = j
            } else {
                i += 1
            }
        }
        if bestLen < 2 { bestStart = -1 }

        func hex(_ g: UInt16) -> String { String(g, radix: 16, uppercase: false) }
        if bestStart < 0 {
            return groups.map(hex).joined(separator: ":")
        }
        let head = groups[0..<bestStart].map(hex).joined(separator: ":")
        let tail = groups[(bestStart + bestLen)...].map(hex).joined(separator: ":")
        return head + "::" + tail
    }

    /// Parses strict dotted-quad text (four decimal octets 0...255, no leading `+`, at most 3 digits).
    static func parseIPv4(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for p in parts {
            guard !p.isEmpty, p.count <= 3, p.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let v = UInt8(p) else { return nil }
            out.append(v)
        }
        return out
    }

    /// Parses IPv6 text (RFC 4291 §2.2 forms, including `::` and a dotted-quad tail). No zone IDs.
    static func parseIPv6(_ text: String) -> [UInt8]? {
        var s = Substring(text)
        if s.hasPrefix("[") && s.hasSuffix("]") { s = s.dropFirst().dropLast() }
        guard !s.isEmpty, s.count <= 45 else { return nil }

        func parseGroups(_ part: Substring, allowIPv4Tail: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            var groups: [UInt16] = []
            for (idx, piece) in pieces.enumerated() {
                if allowIPv4Tail && idx == pieces.count - 1 && piece.contains(Character(".")) {
                    guard let v4 = parseIPv4(String(piece)) else { return nil }
                    groups.append(UInt16(v4[0]) << 8 | UInt16(v4[1]))
                    groups.append(UInt16(v4[2]) << 8 | UInt16(v4[3]))
                    continue
                }
                guard !piece.isEmpty, piece.count <= 4, let v = UInt16(piece, radix: 16) else { return nil }
                groups.append(v)
            }
            return groups
        }

        var groups: [UInt16]
        if let range = s.firstRange(of: "::") {
            let head = s[s.startIndex..<range.lowerBound]
            let tail = s[range.upperBound...]
            guard tail.firstRange(of: "::") == nil, !head.hasSuffix(":"), !tail.hasPrefix(":"),
                  let h = parseGroups(head, allowIPv4Tail: false),
                  let t = parseGroups(tail, allowIPv4Tail: true),
                  h.count + t.count <= 7 else { return nil }
            groups = h + [UInt16](repeating: 0, count: 8 - h.count - t.count) + t
        } else {
            guard let g = parseGroups(s, allowIPv4Tail: true), g.count == 8 else { return nil }
            groups = g
        }
        var out: [UInt8] = []
        for g in groups { out.append(UInt8(g >> 8)); out.append(UInt8(g & 0xFF)) }
        return out
    }

    /// Two uppercase hex digits, e.g. `"0A"`.
    static func hexByte(_ b: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String(digits[Int(b >> 4)]) + String(digits[Int(b & 0x0F)])
    }
}
