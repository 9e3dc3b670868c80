import Dispatch
import HAR
import Synchronization

/// The two-pass redaction of one file.
///
/// 1. `collect` every entry (and `collectHead` the log's own fields): the rules run and write
///    markers where values go, and each entry's replaced values are kept in order. Entries may be
///    collected on any thread, in any order.
/// 2. `freeze`: every value is numbered in file order (the log's fields, then entry by entry, in
///    order of first appearance), after the numbers of placeholders already in the file.
/// 3. `finalize` every entry (any thread, any order): markers become placeholders, and every
///    value replaced anywhere in the file is replaced wherever else it stands, earlier or later.
///
/// So placeholders stay numbered in file order (the output is deterministic and idempotent), a
/// secret marked only late in the file is still replaced where it was used bare before, and both
/// passes use every core.
///
/// Memory: each distinct value is kept once (`ValueInterner`), and an entry keeps one 4-byte id per
/// value it marked, until it is finalized, or until `release` when the caller builds it again for
/// pass 2 (`redactAgain`). So a long recording exported in a bounded window stays bounded.
public final class FileRedaction: @unchecked Sendable {
    let rules: CompiledRules
    let collectFindings: Bool
    public let entryCount: Int
    private let pending: UnsafeMutablePointer<Pending>
    private var head = Pending()
    private let engines = Mutex<[IdleEngine]>([])

    /// An engine in the pool. An engine is mutable scratch state for one unit at a time: it is
    /// taken out of the pool, used by one thread, and put back, so it never has two users.
    private struct IdleEngine: @unchecked Sendable {
        let engine: RedactionEngine
    }
    private var table = FileNumbering()
    private let interner = ValueInterner()
    /// Each replaced cookie's `name=value`, with where it first occurs (a cookie sent with every
    /// request is kept once).
    private let cookies = Mutex<[String: (first: UInt64, name: String, value: String)]>([:])
    private var known: KnownValueIndex?
    private var frozen = false
    /// What the file's deferred bodies share in pass 2 (set with the known values).
    private var deferredContext = DeferredBodyContext(knownValues: nil)

    /// What pass 1 found in one unit, and what pass 2 adds.
    struct Pending {
        /// The interned id of each value the unit's markers stand for, by marker index.
        var ids: [Int32] = []
        var reserved: [(ValueKind, Int)] = []
        var fixups: [BodyLengthFixup] = []
        /// Nonzero tallies: (cell, count).
        var tallies: [(Int32, Int32)] = []
        var findings: [RedactionFinding] = []
        var binaryBodies = 0
        var knownCounts: [RedactionLocation: Int] = [:]
        var done = false
        /// The response body as pass 1 rewrote it, for pass 2 (the entry's text is nil until then).
        var responseBody: [UInt8]?
    }

    private let deferBodies: Bool

    public convenience init(config: RedactionConfiguration, entryCount: Int, collectFindings: Bool = false) {
        self.init(rules: CompiledRules(config), entryCount: entryCount, collectFindings: collectFindings)
    }

    /// `deferBodies`: response bodies rewritten into bytes stay bytes until pass 2 (off only in
    /// tests, which compare the two ways).
    init(rules: CompiledRules, entryCount: Int, collectFindings: Bool, deferBodies: Bool = true) {
        self.deferBodies = deferBodies
        self.rules = rules
        self.entryCount = entryCount
        self.collectFindings = collectFindings
        pending = .allocate(capacity: max(1, entryCount))
        pending.initialize(repeating: Pending(), count: max(1, entryCount))
    }

    deinit {
        pending.deinitialize(count: max(1, entryCount))
        pending.deallocate()
    }

    private func withEngine<R>(_ body: (RedactionEngine) -> R) -> R {
        let engine = engines.withLock { $0.popLast()?.engine } ?? RedactionEngine(rules: rules, collectFindings: collectFindings)
        engine.deferBodies = deferBodies
        defer { engines.withLock { $0.append(IdleEngine(engine: engine)) } }
        return body(engine)
    }

    /// What the engine collected for unit `unit` (0: the log's fields, entry i: i + 1), its
    /// values interned.
    private func take(_ engine: RedactionEngine, unit number: Int, fixups: [BodyLengthFixup]) -> Pending {
        var unit = Pending()
        let collector = engine.collector
        unit.ids = interner.intern(unit: number, values: collector.values, keys: collector.keys, hashes: collector.hashes)
        for (k, chased) in collector.chased.enumerated() {
            _ = interner.intern(chased.kind, chased.value, hash: nil, position: ValueInterner.position(.chased, unit: number, k))
        }
        if !collector.cookies.isEmpty && !frozen {
            cookies.withLock { seen in
                for (k, cookie) in collector.cookies.enumerated() {
                    let position = ValueInterner.position(.marked, unit: number, k)
                    let key = cookie.name + "=" + cookie.value
                    if let earlier = seen[key], earlier.first <= position { continue }
                    seen[key] = (position, cookie.name, cookie.value)
                }
            }
        }
        unit.reserved = collector.reserved
        unit.fixups = fixups
        unit.responseBody = engine.deferredResponseBody
        engine.deferredResponseBody = nil
        let results = engine.takeResults()
        for (cell, count) in results.tallies.enumerated() where count != 0 { unit.tallies.append((Int32(cell), Int32(count))) }
        unit.findings = results.findings
        unit.binaryBodies = results.binaryBodies
        engine.collector.removeAll()
        return unit
    }

    // MARK: - Pass 1

    /// Pass 1 of the log's own fields (page titles, comments). Call before `freeze`.
    public func collectHead(_ log: inout HARLog) {
        withEngine { engine in
            engine.collectLogFields(&log)
            head = take(engine, unit: 0, fixups: [])
        }
    }

    /// Pass 1 of entry `index`, in place. Thread-safe for distinct indexes. Collecting an entry
    /// again (an export that builds entries twice rather than keeping them) replaces what its
    /// first collection found, which is the same.
    public func collect(_ entry: inout HAREntry, index: Int) {
        precondition(index >= 0 && index < entryCount)
        withEngine { engine in
            let fixups = engine.collectEntry(&entry, index: index)
            pending[index] = take(engine, unit: index + 1, fixups: fixups)
        }
        // The check's second opinion reads what pass 1 leaves: every value a rule replaced is a
        // marker by then, so it reports only what the rules would keep.
        if collectFindings {
            pending[index].findings += SecondOpinion.findings(in: entry, index: index, rewrittenResponseBody: pending[index].responseBody,
                                                              allowed: rules.config.allowedValues)
        }
    }

    // MARK: - Numbering

    /// Numbers every value collected, in file order. Call once, after every `collect`.
    public func freeze() {
        precondition(!frozen)
        frozen = true
        var reserved = head.reserved
        for i in 0..<entryCount { reserved += pending[i].reserved }
        let (numbering, chasedBare) = interner.freeze(reserved: reserved)
        // `name=value` of every replaced cookie, short values included, in file order.
        let replacedCookies = cookies.withLock { seen in
            defer { seen = [:] }
            return seen.values.sorted { $0.first < $1.first }
        }
        var cookiePairs: [(value: String, placeholder: String)] = []
        for cookie in replacedCookies {
            guard let placeholder = numbering.lookup(.secret, cookie.value) ?? numbering.lookup(.email, cookie.value) else { continue }
            cookiePairs.append((cookie.name + "=" + cookie.value, cookie.name + "=" + placeholder))
        }
        self.table = numbering
        guard rules.flags.has(.knownSecrets) else { return }
        // The chased values, then the cookies; each value is looked up by the thread that indexes it.
        let cookies = cookiePairs
        let value = { @Sendable (k: Int) -> String in
            k < chasedBare.count ? numbering.value(chasedBare[k]) : cookies[k - chasedBare.count].value
        }
        deferredContext = DeferredBodyContext(knownValues: (chasedBare.count + cookies.count, value))
        known = KnownValueIndex(count: chasedBare.count + cookies.count, value: value, placeholder: { k in
            k < chasedBare.count ? numbering.placeholder(chasedBare[k]) : cookies[k - chasedBare.count].placeholder
        })
    }

    /// How many distinct values were interned (for tests of the memory bound).
    var distinctValueCount: Int { interner.count }

    /// Entry `index` will not be kept for pass 2 (the caller builds it again, then calls
    /// `redactAgain`): what pass 1 kept for it goes, the body it rewrote too.
    public func release(_ index: Int) {
        pending[index].ids = []
        pending[index].fixups = []
        pending[index].responseBody = nil
    }

    /// Bytes pass 1 holds for entry `index` outside the entry and needs again only in pass 2:
    /// its rewritten response body, and the ids and fixups of its values.
    public func heldBytes(_ index: Int) -> Int {
        (pending[index].responseBody?.count ?? 0) + pending[index].ids.count * 4 + pending[index].fixups.count * 9
    }

    /// Takes away what `heldBytes` counts, as bytes the caller keeps (a spill file) until
    /// `restoreHeld`. What the report and the numbering need stays.
    public func takeHeld(_ index: Int) -> [UInt8]? {
        var unit = pending[index]
        var out: [UInt8] = []
        out.reserveCapacity(heldBytes(index) + 16)
        func put(_ value: UInt64, _ width: Int) {
            for k in 0..<width { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(k)))) }
        }
        put(UInt64(unit.ids.count), 4)
        for id in unit.ids { put(UInt64(UInt32(bitPattern: id)), 4) }
        put(UInt64(unit.fixups.count), 4)
        for fixup in unit.fixups {
            out.append(fixup.body == .request ? 0 : 1)
            put(UInt64(bitPattern: Int64(fixup.oldLength)), 8)
        }
        if let body = unit.responseBody {
            out.append(1)
            out += body
        } else {
            out.append(0)
        }
        unit.ids = []
        unit.fixups = []
        unit.responseBody = nil
        pending[index] = unit
        return out
    }

    /// Gives back what `takeHeld` took, before the entry's pass 2.
    public func restoreHeld(_ index: Int, _ bytes: [UInt8]?) {
        guard let bytes else { return }
        var at = 0
        func take(_ width: Int) -> UInt64 {
            var value: UInt64 = 0
            for k in 0..<width { value |= UInt64(bytes[at + k]) << (8 * UInt64(k)) }
            at += width
            return value
        }
        var unit = pending[index]
        let idCount = Int(take(4))
        unit.ids = (0..<idCount).map { _ in Int32(bitPattern: UInt32(take(4))) }
        let fixupCount = Int(take(4))
        unit.fixups = (0..<fixupCount).map { _ in
            let body: BodyLengthFixup.Body = take(1) == 0 ? .request : .response
            return BodyLengthFixup(body: body, oldLength: Int(Int64(bitPattern: take(8))))
        }
        unit.responseBody = take(1) == 1 ? Array(bytes[at...]) : nil
        pending[index] = unit
    }

    // MARK: - Pass 2

    private func finalizer(_ unit: Pending) -> Finalizer {
        var f = Finalizer(syntax: rules.syntax, placeholders: UnitPlaceholders(ids: unit.ids, numbering: table), known: known)
        f.deferredContext = deferredContext
        return f
    }

    /// Pass 2 of the log's own fields.
    public func finalizeHead(_ log: inout HARLog) {
        precondition(frozen)
        var f = finalizer(head)
        f.finalizeLogFields(&log)
        if !f.hits.isEmpty { head.knownCounts[.other, default: 0] += f.hits.count }
        if collectFindings {
            head.findings += f.hits.map { RedactionFinding(path: "log", rule: .knownSecrets, location: .other, preview: $0) }
        }
    }

    /// Pass 2 of entry `index`, in place (the entry `collect` changed). Thread-safe for distinct
    /// indexes.
    public func finalize(_ entry: inout HAREntry, index: Int) {
        precondition(frozen && index >= 0 && index < entryCount)
        var f = finalizer(pending[index])
        let counts = f.finalizeEntry(&entry, fixups: pending[index].fixups, responseBody: pending[index].responseBody)
        pending[index].responseBody = nil
        pending[index].knownCounts = counts
        if collectFindings {
            let base = "log.entries[\(index)]"
            let late = f.knownValuesInDeferredBodies()
            var hits = f.hits[...]
            for (location, count) in counts.sorted(by: { $0.key < $1.key }) {
                for preview in hits.prefix(count) {
                    pending[index].findings.append(RedactionFinding(path: "\(base) (\(location.rawValue))", rule: .knownSecrets,
                                                                    location: location, preview: preview))
                }
                hits = hits.dropFirst(count)
            }
            if !late.isEmpty { pending[index].knownCounts[.body, default: 0] += late.count }
            pending[index].findings += late.map {
                RedactionFinding(path: "\(base) (body)", rule: .knownSecrets, location: .body, preview: $0)
            }
            pending[index].findings += withEngine { SuspectCheck.residuals(in: entry, base: base, engine: $0) }
        }
        pending[index].done = true
        // The ids are no longer needed; the counts and findings are.
        pending[index].ids = []
    }

    /// Collects, then finalizes, entry `index`: for an export that builds each entry again for
    /// pass 2 instead of keeping pass 1's entries in memory.
    public func redactAgain(_ entry: inout HAREntry, index: Int) {
        // The same entry gives the same values, so the same ids: the interner only looks values up
        // now (a value it never saw would become a plain `redacted`).
        collect(&entry, index: index)
        finalize(&entry, index: index)
    }

    /// The counts and findings of every unit, in file order. Call after every `finalize`.
    public var report: RedactionReport {
        var report = RedactionReport()
        report.entries = entryCount
        var tallies = [Int](repeating: 0, count: (RedactionRule.builtIn.count + rules.config.patterns.count) * RedactionEngine.locationCount)
        func add(_ unit: Pending) {
            for (cell, count) in unit.tallies { tallies[Int(cell)] += Int(count) }
            for (location, count) in unit.knownCounts { report.counts[.knownSecrets, default: [:]][location, default: 0] += count }
            report.findings += unit.findings
            report.binaryBodies += unit.binaryBodies
        }
        add(head)
        for i in 0..<entryCount { add(pending[i]) }
        let late = deferredContext.lateHits.withLock { $0 }
        if late > 0 { report.counts[.knownSecrets, default: [:]][.body, default: 0] += late }
        RedactionEngine.addTallies(tallies, rules: rules, to: &report)
        return report
    }
}

extension RedactionEngine {
    /// Redacts a whole log in place (both passes, on this thread) and returns what was replaced.
    @discardableResult
    public func redact(_ log: inout HARLog) -> RedactionReport {
        let file = FileRedaction(rules: rules, entryCount: log.entries.count, collectFindings: collectFindings)
        file.collectHead(&log)
        for i in log.entries.indices { file.collect(&log.entries[i], index: i) }
        file.freeze()
        file.finalizeHead(&log)
        for i in log.entries.indices { file.finalize(&log.entries[i], index: i) }
        return file.report
    }

    /// Both passes over one piece of text, numbered after what this engine numbered before (the
    /// unit tests' view of a single string; a file goes through `FileRedaction`).
    func standalone(_ work: (RedactionEngine) -> String?) -> String? {
        collector.removeAll()
        let marked = work(self)
        for (kind, number) in collector.reserved { table.reserve(kind, number) }
        let placeholders = collector.values.map { table.assign($0.kind, $0.value) }
        for (kind, value) in collector.chased where table.lookup(kind, value) == nil { table.assign(kind, value) }
        collector.removeAll()
        guard let marked else { return nil }
        var f = Finalizer(syntax: syntax, placeholders: UnitPlaceholders(placeholders), known: nil)
        return f.text(marked) ?? marked
    }
}
