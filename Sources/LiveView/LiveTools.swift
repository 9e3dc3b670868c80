import Dispatch
import Recording
import Synchronization

/// What harrec adds to the view beyond the recording, as closures (this module knows neither the
/// redaction engine nor the generator): the redaction preview of a flow, and `harrec generate`
/// for a page or a selection.
public struct LiveTools: Sendable {
    /// `flow` as a HAR entry, raw and redacted, and what each rule replaced.
    public var redactionPreview: @Sendable (Flow) -> LivePreview
    /// The Swift scenario and fixtures for `flows` (with the marks that make their pages), named
    /// `name`: the files, or why there are none.
    public var generate: @Sendable (_ flows: [Flow], _ name: String) -> Result<[LiveGeneratedFile], LiveToolError>
    /// Writes the HAR of what is recorded so far, as the final one will be (redacted unless the
    /// recording is not), to a file beside it: where, with how many entries and bytes.
    public var exportNow: @Sendable () -> Result<LiveExport, LiveToolError>
    /// The bytes of that file, for a download.
    public var exportBytes: @Sendable (String) -> [UInt8]?
    /// What redaction would replace in the whole recording so far, per rule (as the export counts).
    public var redactionCounts: @Sendable () -> Result<[(rule: String, count: Int)], LiveToolError> = { .failure(LiveToolError("no counts here")) }

    public init(redactionPreview: @escaping @Sendable (Flow) -> LivePreview,
                generate: @escaping @Sendable ([Flow], String) -> Result<[LiveGeneratedFile], LiveToolError>,
                exportNow: @escaping @Sendable () -> Result<LiveExport, LiveToolError> = { .failure(LiveToolError("no export here")) },
                exportBytes: @escaping @Sendable (String) -> [UInt8]? = { _ in nil }) {
        self.redactionPreview = redactionPreview
        self.generate = generate
        self.exportNow = exportNow
        self.exportBytes = exportBytes
    }
}

/// An export made while recording.
public struct LiveExport: Sendable, Equatable {
    public var path: String
    public var entries: Int
    public var bytes: Int
    public var redacted: Bool
    public init(path: String, entries: Int, bytes: Int, redacted: Bool) {
        (self.path, self.entries, self.bytes, self.redacted) = (path, entries, bytes, redacted)
    }
}

/// A flow's entry before and after redaction (pretty JSON), and each replacement.
public struct LivePreview: Sendable, Equatable {
    public var raw: String
    public var redacted: String
    public var findings: [Finding]
    /// What a rule matched, without the value: where and which rule.
    public struct Finding: Sendable, Equatable {
        public var path: String
        public var rule: String
        public init(path: String, rule: String) { (self.path, self.rule) = (path, rule) }
    }

    public init(raw: String, redacted: String, findings: [Finding]) {
        (self.raw, self.redacted, self.findings) = (raw, redacted, findings)
    }
}

public struct LiveGeneratedFile: Sendable, Equatable {
    public var path: String
    public var role: String
    public var text: String
    public init(path: String, role: String, text: String) { (self.path, self.role, self.text) = (path, role, text) }
}

public struct LiveToolError: Error, Sendable, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// Answers that read the journal or run the generator go to a worker queue, so an event loop
/// (which also drives proxied connections) never waits for them; the session looks for the
/// result on its wake-ups.
public final class LiveJobs: Sendable {
    private struct State {
        var next: UInt64 = 1
        var done: [UInt64: LiveResponse] = [:]
        /// Jobs whose asker left before they finished: their results are dropped.
        var abandoned: Set<UInt64> = []
    }

    private let queue = DispatchQueue(label: "harrec.live-view", attributes: .concurrent)
    private let state = Mutex(State())
    /// The last export made while recording (what `/api/export/file` serves).
    let lastExport = Mutex<LiveExport?>(nil)

    public init() {}

    /// Starts `work`; its id.
    func start(_ work: @escaping @Sendable () -> LiveResponse) -> UInt64 {
        let id = state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        queue.async { [self] in
            let response = work()
            self.state.withLock { state in
                if state.abandoned.remove(id) == nil { state.done[id] = response }
            }
        }
        return id
    }

    /// The response of job `id` once it is done (taken: asked once).
    func take(_ id: UInt64) -> LiveResponse? {
        state.withLock { $0.done.removeValue(forKey: id) }
    }

    /// Forgets job `id`: its result is dropped, now or when it comes.
    func abandon(_ id: UInt64) {
        state.withLock { state in
            if state.done.removeValue(forKey: id) == nil { state.abandoned.insert(id) }
        }
    }

    /// Jobs done and not yet taken (tests).
    var pending: Int { state.withLock { $0.done.count + $0.abandoned.count } }
}
