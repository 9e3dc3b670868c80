import TextEncodings

extension HARLazyDocument {
    /// Entry `index` with its response body left in the file as a `HARDeferredBody`, when the
    /// body is base64 of at least `HARDeferredBody.threshold` bytes; nil otherwise (the caller
    /// parses the entry whole). The body is read from the mapping, JSON-unescaped and decoded a
    /// piece at a time whenever it is read, and the document stays open while it may be.
    public func entryDeferringResponseBody(_ index: Int) -> HAREntry? {
        guard byteCount(ofEntry: index) >= HARDeferredBody.threshold,
              let (parsed, text) = entryLeavingOutResponseText(index), text.base64,
              text.bodyCount >= HARDeferredBody.threshold,
              let (bytes, _, offset) = lazyBytes(ofEntry: index), let base = bytes.baseAddress
        else { return nil }
        // The text's range counts from the file's first byte; `bytes` may start after a BOM.
        let source = UncheckedSendable(UnsafeBufferPointer(start: base - offset, count: bytes.count + offset))
        let range = text.range
        let read = { @Sendable (piece: ([UInt8]) throws -> Void) throws in
            try withExtendedLifetime(self) {
                try Self.decodeBase64Text(UnsafeBufferPointer(rebasing: source.value[range]), into: piece)
            }
        }
        var prefix: [UInt8] = []
        try? read { piece in
            prefix += piece.prefix(HARDeferredBody.prefixBytes - prefix.count)
            if prefix.count >= HARDeferredBody.prefixBytes { throw PrefixRead() }
        }
        var entry = parsed
        entry.response.content.text = nil
        entry.response.content.deferred = HARDeferredBody(count: text.bodyCount, prefix: prefix, read: read)
        return entry
    }

    private struct PrefixRead: Error {}

    /// The body a JSON string's content `raw` holds as (lenient) base64, handed to `piece` a
    /// part at a time. Throws when the text no longer decodes (the file changed under it).
    static func decodeBase64Text(_ raw: UnsafeBufferPointer<UInt8>, into piece: ([UInt8]) throws -> Void) throws {
        let step = 1 << 20
        var text = JSONStringStream()
        var digits = Base64LenientStream()
        var unescaped: [UInt8] = []
        var decoded: [UInt8] = []
        var k = 0
        repeat {
            let end = min(raw.count, k + step)
            unescaped.removeAll(keepingCapacity: true)
            decoded.removeAll(keepingCapacity: true)
            let isLast = end == raw.count
            guard text.decode(UnsafeBufferPointer(rebasing: raw[k..<end]), isLast: isLast, into: &unescaped),
                  unescaped.withUnsafeBufferPointer({ digits.decode($0, into: &decoded) }),
                  !isLast || digits.finish(into: &decoded)
            else { throw HARDeferredBodyError(description: "a body's base64 text no longer decodes") }
            if !decoded.isEmpty { try piece(decoded) }
            k = end
        } while k < raw.count
    }
}
