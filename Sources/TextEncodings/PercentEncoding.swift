/// Percent-decoding (RFC 3986 §2.1), with "+" as a space for forms and queries: the one percent
/// decoder of the package.
public enum PercentEncoding {
    /// Decodes percent escapes (and "+" as a space when `plusAsSpace`, as forms and harrec's
    /// `queryString` do); "%zz" or a truncated "%4" stays as written. Text without either is
    /// returned as is, without copying.
    public static func decoded(_ text: String, plusAsSpace: Bool) -> String {
        guard text.utf8.contains(where: { $0 == 0x25 || (plusAsSpace && $0 == 0x2B) }) else { return text }
        return String(decoding: decodedBytes(Array(text.utf8)[...], plusAsSpace: plusAsSpace), as: UTF8.self)
    }

    /// The bytes of `s` with percent escapes decoded (and "+" as a space when `plusAsSpace`);
    /// "%zz" or a truncated "%4" stays as written. The one percent decoder of the package.
    public static func decodedBytes(_ s: ArraySlice<UInt8>, plusAsSpace: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(s.count)
        var i = s.startIndex
        while i < s.endIndex {
            let c = s[i]
            if c == 0x2B && plusAsSpace {
                out.append(0x20)
            } else if c == 0x25, i + 2 < s.endIndex, let hi = hexValue(s[i + 1]), let lo = hexValue(s[i + 2]) {
                out.append(hi << 4 | lo)
                i += 3
                continue
            } else {
                out.append(c)
            }
            i += 1
        }
        return out
    }

    /// The value of a hex digit (either case), nil for any other byte.
    @inlinable public static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }
}
