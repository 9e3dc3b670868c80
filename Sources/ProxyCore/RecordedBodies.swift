import Recording

extension Flow {
    /// Appends `bytes` to the recorded body of `side` (at most `cap` kept). With a `partSize`
    /// (the sink takes bodies in parts; 0: it does not), the kept bytes go out as the next part
    /// once they reach it, so an exchange in flight holds at most a part of its body whatever the
    /// body weighs. An exchange `filter` already skips keeps no bytes at all: nothing of it is
    /// recorded. A side's first part carries a snapshot of the flow (`flowSoFar`).
    mutating func recordBody(_ bytes: [UInt8], _ side: RecordedBodyPart.Side, cap: Int, partSize size: Int,
                             filter: RecordingFilter) -> RecordedBodyPart? {
        switch side {
        case .request: request.body.append(bytes, cap: cap)
        case .response: response?.body.append(bytes, cap: cap)
        }
        guard size > 0 else { return nil }
        let kept = side == .request ? request.body.bytes.count : response?.body.bytes.count ?? 0
        guard kept >= size else { return nil }
        let keeps = filter.isEmpty || filter.keeps(self)
        let part: [UInt8]?
        switch side {
        case .request: part = request.body.takePart(size: size)
        case .response: part = response?.body.takePart(size: size)
        }
        guard keeps, let part else { return nil }
        // A side's first part carries the flow as it stands, so that kill -9 before the flow's
        // record still leaves its heads (and the other side's body so far) in the journal.
        let first = (side == .request ? request.body.streamed : response?.body.streamed ?? 0) == part.count
        return RecordedBodyPart(flowID: id, side: side, bytes: part, flowSoFar: first ? self : nil)
    }
}

extension ProxyConfiguration {
    /// The size of the parts `Flow.recordBody` sends; 0 when bodies are not recorded in parts.
    var bodyPartSize: Int { streamBodies ? bodyPartBytes : 0 }
}
