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
public final class FileRedaction: @unchecked Sendable {
    let rules: CompiledRules
    let collectFindings: Bool
    public let entryCount: Int
    private let pending: UnsafeMutablePointer<Pending>
    private var head = Pending()
    private let engines = Mutex<[RedactionEngine]>([])
    private var table = FileNumbering()
    private var known: KnownValueIndex?
    private var frozen = false

    /// What pass 1 found in one unit, and what pass 2 adds.
    struct Pending {
        var values: [(kind: ValueKind, value: String)] = []
        var hashes: [UInt64] = []
        /// The id of each value in the placeholder table, set by `freeze` (the values are dropped
        /// then).
        var ids: [Int32] = []
        var chased: [(kind: ValueKind, value: String)] = []
        var cookies: [(name: String, value: String)] = []
        var reserved: [(ValueKind, Int)] = []
        var fixups: [BodyLengthFixup] = []
        /// Nonzero tallies: (cell, count).
        var tallies: [(Int32, Int32)] = []
        var findings: [RedactionFinding] = []
        var binaryBodies = 0
        var knownCounts: [RedactionLocation: Int] = [:]
        var done = false
    }

    public convenience init(config: RedactionConfiguration, entryCount: Int, collectFindings: Bool = false) {
        self.init(rules: CompiledRules(config), entryCount: entryCount, collectFindings: collectFindings)
    }

    init(rules: CompiledRules, entryCount: Int, collectFindings: Bool) {
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
        let engine = engines.withLock { $0.popLast() } ?? RedactionEngine(rules: rules, collectFindings: collectFindings)
        defer { engines.withLock { $0.append(engine) } }
        return body(engine)
    }

    private func take(_ engine: RedactionEngine, fixups: [BodyLengthFixup]) -> Pending {
        var unit = Pending()
        unit.values = engine.collector.values
        unit.hashes = engine.collector.hashes
        unit.chased = engine.collector.chased
        unit.cookies = engine.collector.cookies
        unit.reserved = engine.collector.reserved
        unit.fixups = fixups
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
            head = take(engine, fixups: [])
        }
    }

    /// Pass 1 of entry `index`, in place. Thread-safe for distinct indexes. Collecting an entry
    /// again (an export that builds entries twice rather than keeping them) replaces what its
    /// first collection found, which is the same.
    public func collect(_ entry: inout HAREntry, index: Int) {
        precondition(index >= 0 && index < entryCount)
        withEngine { engine in
            let fixups = engine.collectEntry(&entry, index: index)
            pending[index] = take(engine, fixups: fixups)
        }
    }

    // MARK: - Numbering

    /// Numbers every value collected, in file order. Call once, after every `collect`.
    public func freeze() {
        precondition(!frozen)
        frozen = true
        // The log's fields, then entry by entry; then the values only chased (URL passwords).
        var groups: [FileNumbering.Group] = [(head.values, head.hashes)]
        for i in 0..<entryCount { groups.append((pending[i].values, pending[i].hashes)) }
        groups.append((head.chased, []))
        for i in 0..<entryCount { groups.append((pending[i].chased, [])) }
        var reserved = head.reserved
        for i in 0..<entryCount { reserved += pending[i].reserved }
        let (numbering, ids, chasedBare) = FileNumbering.number(groups, reserved: reserved)
        groups = []
        head.ids = ids[0]
        // Pass 1's values are not needed any more; freed on every core.
        let units = SendableBuffer(UnsafeMutableBufferPointer(start: pending, count: entryCount))
        let chunks = max(1, min(64, entryCount / 256))
        DispatchQueue.concurrentPerform(iterations: chunks) { c in
            for i in (entryCount * c / chunks)..<(entryCount * (c + 1) / chunks) {
                units.buffer[i].ids = ids[1 + i]
                units.buffer[i].values = []
                units.buffer[i].hashes = []
                units.buffer[i].chased = []
            }
        }
        var pairs = chasedBare.map { (value: numbering.value($0), placeholder: numbering.placeholder($0)) }
        // `name=value` of every replaced cookie, short values included.
        var cookiesSeen = Set<String>()
        for i in 0..<entryCount {
            for (name, value) in pending[i].cookies {
                guard let placeholder = numbering.lookup(.secret, value) ?? numbering.lookup(.email, value),
                      cookiesSeen.insert(name + "=" + value).inserted else { continue }
                pairs.append((name + "=" + value, name + "=" + placeholder))
            }
            pending[i].cookies = []
        }
        self.table = numbering
        guard rules.flags.has(.knownSecrets) else { return }
        known = KnownValueIndex(pairs: pairs)
    }

    // MARK: - Pass 2

    private func finalizer(_ unit: Pending) -> Finalizer {
        Finalizer(syntax: rules.syntax, placeholders: unit.ids.map { $0 >= 0 ? table.placeholder($0) : "redacted" }, known: known)
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
        let counts = f.finalizeEntry(&entry, fixups: pending[index].fixups)
        pending[index].knownCounts = counts
        if collectFindings {
            let base = "log.entries[\(index)]"
            var hits = f.hits[...]
            for (location, count) in counts.sorted(by: { $0.key < $1.key }) {
                for preview in hits.prefix(count) {
                    pending[index].findings.append(RedactionFinding(path: "\(base) (\(location.rawValue))", rule: .knownSecrets,
                                                                    location: location, preview: preview))
                }
                hits = hits.dropFirst(count)
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
        var ids = pending[index].ids
        collect(&entry, index: index)
        // The same entry gives the same values in the same order, so the same placeholders; were
        // it ever otherwise, each value's own placeholder (the table is read-only now; a value
        // never numbered becomes a plain `redacted`).
        let values = pending[index].values
        if values.count != ids.count {
            ids = values.map { table.id($0.kind, $0.value) ?? -1 }
        }
        pending[index].ids = ids
        pending[index].values = []
        pending[index].hashes = []
        pending[index].chased = []
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
        var f = Finalizer(syntax: syntax, placeholders: placeholders, known: nil)
        return f.text(marked) ?? marked
    }
}
