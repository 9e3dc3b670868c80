import TextEncodings

extension HARLazyDocument {
    /// Entry `index` with its large bodies left in the file as `HARDeferredBody`s: a response or
    /// an upload whose text is base64 of at least `HARDeferredBody.threshold` bytes. Nil when it
    /// has none (the caller parses the entry whole). A body is read from the file, JSON-unescaped
    /// and decoded a piece at a time whenever it is read, and the document stays open while it
    /// may be.
    public func entryDeferringLargeBodies(_ index: Int) -> HAREntry? {
        guard byteCount(ofEntry: index) >= HARDeferredBody.threshold else { return nil }
        var sides = BodySide.allCases
        while !sides.isEmpty {
            guard let (parsed, texts) = entryLeavingOutTexts(index, of: sides, minimumBytes: HARDeferredBody.threshold)
            else { return nil }
            // A text left out that is no large base64 goes back: the entry is read again with
            // only the sides that are.
            let deferrable = texts.filter { $0.value.base64 && $0.value.bodyCount >= HARDeferredBody.threshold }
            guard deferrable.count == texts.count else {
                sides = sides.filter { deferrable[$0] != nil }
                continue
            }
            var entry = parsed
            if let text = texts[.response] {
                entry.response.content.text = nil
                entry.response.content.deferred = deferredBody(text)
            }
            if let text = texts[.request] {
                entry.request.postData?.text = nil
                entry.request.postData?.deferred = deferredBody(text)
            }
            return entry
        }
        return nil
    }

    /// The body `text` stands for, read from the file whenever it is read.
    private func deferredBody(_ text: LeftOutText) -> HARDeferredBody {
        let range = text.range
        let read = { @Sendable (piece: ([UInt8]) throws -> Void) throws in
            try Self.decodeBase64Text(count: range.count, pieces: { try self.forEachPiece(of: range, step: 1 << 20, $0) }, into: piece)
        }
        var prefix: [UInt8] = []
        try? read { piece in
            prefix += piece.prefix(HARDeferredBody.prefixBytes - prefix.count)
            if prefix.count >= HARDeferredBody.prefixBytes { throw PrefixRead() }
        }
        return HARDeferredBody(count: text.bodyCount, prefix: prefix, read: read)
    }

    private struct PrefixRead: Error {}

    /// The body a JSON string's content holds as (lenient) base64, handed to `piece` a part at a
    /// time; `pieces` hands out the content's `count` bytes in order. Throws when the text no
    /// longer decodes (the file changed under it).
    static func decodeBase64Text(count: Int, pieces: ((UnsafeBufferPointer<UInt8>) throws -> Void) throws -> Void,
                                 into piece: ([UInt8]) throws -> Void) throws {
        var text = JSONStringStream()
        var digits = Base64LenientStream()
        var unescaped: [UInt8] = []
        var decoded: [UInt8] = []
        var k = 0
        // `piece` is called only while `pieces` runs.
        try withoutActuallyEscaping(piece) { piece in try pieces { raw in
            k += raw.count
            unescaped.removeAll(keepingCapacity: true)
            decoded.removeAll(keepingCapacity: true)
            let isLast = k == count
            guard text.decode(raw, isLast: isLast, into: &unescaped),
                  unescaped.withUnsafeBufferPointer({ digits.decode($0, into: &decoded) }),
                  !isLast || digits.finish(into: &decoded)
            else { throw HARDeferredBodyError(description: "a body's base64 text no longer decodes") }
            if !decoded.isEmpty { try piece(decoded) }
        } }
        guard k == count else { throw HARDeferredBodyError(description: "a body's base64 text is cut short") }
    }
}
