// Shared by every fuzz target (compiled into each one): how an input is split into chunks.

/// Chunk sizes for feeding `data` in pieces, chosen by its first byte so the fuzzer explores
/// splits as well as contents: every size from 1 (byte by byte) to 64, plus irregular ones.
func fuzzChunks(_ data: [UInt8], seed: UInt8) -> [ArraySlice<UInt8>] {
    var chunks: [ArraySlice<UInt8>] = []
    var state = UInt32(seed) &* 2_654_435_761 | 1
    var i = 0
    while i < data.count {
        state ^= state << 13; state ^= state >> 17; state ^= state << 5
        let size = seed < 32 ? Int(seed % 8) + 1 : Int(state % 64) + 1
        chunks.append(data[i..<min(data.count, i + size)])
        i += size
    }
    return chunks
}

/// Stops the run with a message libFuzzer shows beside the reproducer.
func fuzzFail(_ message: String) -> Never {
    fatalError("fuzz invariant: " + message)
}
