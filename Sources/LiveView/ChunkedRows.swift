/// An append-only list stored in fixed-size chunks: appending never moves what is stored, so a
/// list of hundreds of thousands of rows grows without copying itself under its owner's lock.
struct ChunkedRows<Row> {
    static var chunkSize: Int { 4096 }

    private var chunks: [[Row]] = []
    private(set) var count = 0

    mutating func append(_ row: Row) {
        if count % Self.chunkSize == 0 {
            chunks.append([])
            chunks[chunks.count - 1].reserveCapacity(Self.chunkSize)
        }
        chunks[chunks.count - 1].append(row)
        count += 1
    }

    subscript(index: Int) -> Row {
        get { chunks[index / Self.chunkSize][index % Self.chunkSize] }
        set { chunks[index / Self.chunkSize][index % Self.chunkSize] = newValue }
    }

    func filter(_ isIncluded: (Row) -> Bool) -> [Row] {
        chunks.flatMap { $0.filter(isIncluded) }
    }
}
