import HAR
import Synchronization

/// A run of printable bytes of a deferred binary body that pass 1 changed: where it starts in the
/// body, its length, and its bytes with marks (each resolves to a placeholder of the length it
/// replaced, `Reading.sameLength`).
struct DeferredEdit: Sendable {
    let start: Int
    let count: Int
    let marked: [UInt8]
}

extension RedactionEngine {
    /// Pass 1 of a response body left in the journal (`HARDeferredBody`): a binary body's
    /// printable runs are scanned a window at a time, exactly as `redactBinary` scans them in a
    /// whole body (no run spans a window's cut), and the changed runs are kept for pass 2. A body
    /// that `redactBody` would read as text (a text type, or a JSON document's start, and valid
    /// UTF-8 throughout) is read whole into `content.text` instead, and false tells the caller
    /// to redact it as any text.
    func redactDeferred(_ content: inout some HARDeferrableText, _ deferred: HARDeferredBody, mimeType: String,
                        _ path: () -> String) -> Bool {
        let prefix = deferred.prefix
        let blank = prefix.count < deferred.count && prefix.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        // `--check` reads any UTF-8 body whole: its second opinion reads such a body as text,
        // whatever its type says (`SecondOpinion.readable`); only bytes that are no text stream.
        if collectFindings || BodyKind.isTextual(mimeType: mimeType) || blank || prefix.withUnsafeBufferPointer(Self.looksLikeJSON),
           (try? deferred.isValidUTF8()) != false {
            // A failed read keeps the deferred body, so that writing it fails as loudly.
            guard let text = try? deferred.base64Text() else { return true }
            content.text = text
            content.deferred = nil
            return false
        }
        binaryBodies += 1
        var edits: [DeferredEdit] = []
        let reading = Reading.body.with(.sameLength)
        // A failed read leaves the rest unscanned; writing the body then fails the export.
        try? deferred.forEachWindow { window, offset in
            window.withUnsafeBufferPointer { p in
                for run in Self.printableRuns(p) {
                    if let marked = scanBytes(UnsafeBufferPointer(rebasing: p[run]), reading, path) {
                        edits.append(DeferredEdit(start: offset + run.lowerBound, count: run.count, marked: marked))
                    }
                }
            }
        }
        deferred.firstPassState = edits.isEmpty ? nil : edits
        return true
    }
}

extension Finalizer {
    /// Pass 2 of a deferred binary body: as it is written, each window gets pass 1's changed runs
    /// with their marks resolved, then every known value replaced at its length, as
    /// `finalizeBody` does to a whole binary body. Windows are cut only at control bytes no known
    /// value holds (`context.cuts`), so no match spans two. Known values replaced are counted in
    /// `context.lateHits` as they are found.
    mutating func finalizeDeferred(_ deferred: HARDeferredBody, _ context: DeferredBodyContext) {
        let edits = (deferred.firstPassState as? [DeferredEdit]) ?? []
        deferred.firstPassState = nil
        guard !edits.isEmpty || known != nil else { return }
        let state = DeferredFinalizer(self, edits: edits, context: context)
        deferred.transformCuts = context.cuts
        deferred.windowTransform = { window, offset in state.transform(&window, at: offset) }
        deferredFinalizers.append((state, deferred))
    }

    /// `redact --check`: the known values pass 2 replaces in this unit's deferred bodies, found by
    /// reading each through its transform a window at a time, writing nothing: a masked preview
    /// each, as `hits` has them for the rest of the unit.
    mutating func knownValuesInDeferredBodies() -> [String] {
        defer { deferredFinalizers = [] }
        return deferredFinalizers.flatMap { state, deferred in state.knownValues(in: deferred) }
    }

    /// A changed run's bytes with each mark replaced by its placeholder at the length it stands for.
    func resolvedSameLength(_ marked: [UInt8], count n: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(n)
        marked.withUnsafeBufferPointer { p in
            var j = 0
            while j < p.count {
                if p[j] == 0xEE, let m = syntax.parseValue(p, at: j), m.index < placeholders.count {
                    out += binaryPlaceholder(m.index, m.modifier)
                    j = m.end
                } else {
                    out.append(p[j])
                    j += 1
                }
            }
        }
        return out.count == n ? out : Self.fit(out, n)
    }
}

/// The finalizer of one deferred body, used by the thread that writes it, one window after
/// another from the start.
final class DeferredFinalizer: @unchecked Sendable {
    private var finalizer: Finalizer
    private let edits: [DeferredEdit]
    private let context: DeferredBodyContext
    private var next = 0
    /// While `knownValues(in:)` reads: the previews of the known values found, which are then
    /// not counted in `context.lateHits` (nothing is written).
    private var found: [String]?

    init(_ finalizer: Finalizer, edits: [DeferredEdit], context: DeferredBodyContext) {
        self.finalizer = finalizer
        self.edits = edits
        self.context = context
    }

    func transform(_ window: inout [UInt8], at offset: Int) {
        if offset == 0 { next = 0 }  // written again from the start
        let end = offset + window.count
        while next < edits.count && edits[next].start < end {
            let edit = edits[next]
            let at = edit.start - offset
            window.replaceSubrange(at..<(at + edit.count), with: finalizer.resolvedSameLength(edit.marked, count: edit.count))
            next += 1
        }
        guard finalizer.known != nil else { return }
        if let r = window.withUnsafeBufferPointer({ finalizer.bytes($0, sameLength: true) }) { window = r }
        if !finalizer.hits.isEmpty {
            if found != nil {
                found! += finalizer.hits
            } else {
                let n = finalizer.hits.count
                context.lateHits.withLock { $0 += n }
            }
            finalizer.hits = []
        }
    }

    /// The known values `transform` replaces in `deferred`, read through without writing.
    func knownValues(in deferred: HARDeferredBody) -> [String] {
        found = []
        defer { found = nil }
        // A failed read leaves the rest unread: the check's own read then failed loudly.
        try? deferred.forEachWindow(cuts: deferred.transformCuts) { window, offset in transform(&window, at: offset) }
        return found ?? []
    }
}

/// What a file's deferred bodies share in pass 2: the cut bytes of their windows (control bytes
/// that no known value holds, found when the first body needs them) and the count of known values
/// replaced in them as they are written, after their entries' pass 2.
final class DeferredBodyContext: Sendable {
    private let knownValues: (count: Int, value: @Sendable (Int) -> String)?
    private let cutsCache = Mutex<[Bool]?>(nil)
    let lateHits = Mutex(0)

    init(knownValues: (count: Int, value: @Sendable (Int) -> String)?) {
        self.knownValues = knownValues
    }

    var cuts: [Bool] {
        cutsCache.withLock { cache in
            if let cuts = cache { return cuts }
            var cuts = HARDeferredBody.controlBytes
            if let values = knownValues {
                for k in 0..<values.count {
                    for b in values.value(k).utf8 where cuts[Int(b)] { cuts[Int(b)] = false }
                }
            }
            cache = cuts
            return cuts
        }
    }
}
