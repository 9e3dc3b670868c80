import Export
import HAR
import Redaction

/// Redaction is the export pipeline's two-pass transform: pass 1 collects and numbers every
/// value, pass 2 places the placeholders (`FileRedaction`).
extension FileRedaction: TwoPassTransform {
    public func firstPass(head: inout HARLog) { collectHead(&head) }
    public func firstPass(_ entry: inout HAREntry, index: Int) { collect(&entry, index: index) }
    public func betweenPasses() { freeze() }
    public func secondPass(head: inout HARLog) { finalizeHead(&head) }
    public func secondPass(_ entry: inout HAREntry, index: Int) { finalize(&entry, index: index) }
    public func bothPasses(_ entry: inout HAREntry, index: Int) { redactAgain(&entry, index: index) }
    public func released(_ index: Int) { release(index) }
}

/// A HAR file's entries, parsed from the mapped file as the pipeline asks for them (again, for an
/// entry it neither kept nor spilled).
struct DocumentEntries: EntrySource {
    let document: HARLazyDocument
    var count: Int { document.entryCount }
    func entry(at i: Int) throws -> HAREntry {
        // A large base64 body (a response or an upload) is left in the file (`HARDeferredBody`),
        // for the HAR writer to stream and `--check` to read through, a window at a time.
        if let entry = document.entryDeferringLargeBodies(i) { return entry }
        return try document.entry(i)
    }
    func byteCount(at i: Int) -> Int { document.byteCount(ofEntry: i) }
    func built(_ indices: Range<Int>) { document.dropResidentBytes(ofEntries: indices) }
}
