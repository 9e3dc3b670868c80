import Recording

extension Flow {
    /// Appends `bytes` to the recorded body of `side` (at most `cap` kept). With `partsFor` (the
    /// recording filter and the part size, when the sink takes bodies in parts), the kept bytes
    /// go out as the next part once they reach that size, so an exchange in flight holds at most
    /// a part of its body whatever the body weighs. An exchange the filter already skips keeps no
    /// bytes at all: nothing of it is recorded.
    mutating func recordBody(_ bytes: [UInt8], _ side: RecordedBodyPart.Side, cap: Int,
                             partsFor parts: (filter: RecordingFilter, size: Int)?) -> RecordedBodyPart? {
        switch side {
        case .request: request.body.append(bytes, cap: cap)
        case .response: response?.body.append(bytes, cap: cap)
        }
        guard let (filter, size) = parts else { return nil }
        let kept = side == .request ? request.body.bytes.count : response?.body.bytes.count ?? 0
        guard kept >= size else { return nil }
        let keeps = filter.isEmpty || filter.keeps(self)
        let part: [UInt8]?
        switch side {
        case .request: part = request.body.takePart(size: size)
        case .response: part = response?.body.takePart(size: size)
        }
        guard keeps, let part else { return nil }
        return RecordedBodyPart(flowID: id, side: side, bytes: part)
    }
}

extension ProxyConfiguration {
    /// What `Flow.recordBody` needs to send parts: the filter it checks first, and the part size;
    /// nil when bodies are not recorded in parts.
    var bodyParts: (filter: RecordingFilter, size: Int)? { streamBodies ? (recordingFilter, bodyPartBytes) : nil }
}
