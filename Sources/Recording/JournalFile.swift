import Files
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The journal's file operations (the only system calls of the journal): a directory of its own
/// (0700) beside the HAR, one records file in it (0600, raw secrets), an exclusive lock held while
/// a recorder writes, appends, syncs and positioned reads.
public enum JournalFile {
    /// The journal directory for the HAR at `harPath`.
    public static func directory(for harPath: String) -> String { harPath + ".journal" }

    /// The records file inside `directory`.
    public static func recordsPath(in directory: String) -> String { directory + "/records" }

    /// Whether a journal exists for `harPath`.
    public static func exists(for harPath: String) -> Bool {
        var info = stat()
        return stat(directory(for: harPath), &info) == 0
    }

    static func message(_ what: String) -> FileWriteError {
        FileWriteError(description: "\(what): \(String(cString: strerror(errno)))")
    }

    /// Creates the journal directory and its records file, and locks the file. Throws when a
    /// journal is already there (a crashed run's data is never overwritten).
    static func create(for harPath: String) throws -> Int32 {
        let dir = directory(for: harPath)
        if mkdir(dir, 0o700) != 0 { throw message("cannot create \(dir)") }
        // mkdir honours the umask; the directory must not be readable by others whatever it is.
        chmod(dir, 0o700)
        let path = recordsPath(in: dir)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0o600)
        if fd < 0 { throw message("cannot create \(path)") }
        fchmod(fd, 0o600)
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            close(fd)
            throw message("cannot lock \(path)")
        }
        syncDirectory(dir)
        return fd
    }

    /// Opens the records file for reading. `lock`: also take the exclusive lock, failing when a
    /// running recorder holds it.
    static func openForReading(_ path: String, lock: Bool) throws -> Int32 {
        let fd = open(path, (lock ? O_RDWR : O_RDONLY) | O_CLOEXEC)
        if fd < 0 { throw message("cannot open \(path)") }
        if lock && flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let busy = errno == EWOULDBLOCK
            close(fd)
            if busy { throw FileWriteError(description: "\(path) is in use by a running harrec") }
            throw message("cannot lock \(path)")
        }
        return fd
    }

    /// Whether another process holds the lock on the journal of `harPath` (a recorder running).
    public static func isLockedByAnotherProcess(harPath: String) -> Bool {
        let fd = open(recordsPath(in: directory(for: harPath)), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK
    }

    /// The most buffers one writev takes (Linux's IOV_MAX).
    static let maximumBuffersPerWrite = 1024

    /// Writes every byte of `chunks` in order, many records per system call (writev); nil or the
    /// error text. A short write resumes where it stopped.
    static func append(_ fd: Int32, _ chunks: [[UInt8]]) -> String? {
        var index = 0, skip = 0  // the next chunk, and bytes of it already written
        while index < chunks.count {
            var vectors: [iovec] = []
            vectors.reserveCapacity(min(maximumBuffersPerWrite, chunks.count - index))
            // The chunks are alive for the whole call, so their base addresses stay valid.
            var k = index
            while k < chunks.count && vectors.count < maximumBuffersPerWrite {
                chunks[k].withUnsafeBytes { raw in
                    let offset = k == index ? skip : 0
                    if raw.count > offset {
                        vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress! + offset),
                                             iov_len: raw.count - offset))
                    }
                }
                k += 1
            }
            if vectors.isEmpty { index = k; skip = 0; continue }
            let n = writev(fd, vectors, Int32(vectors.count))
            if n < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            // Advance past what was written.
            var left = n
            while left > 0 && index < chunks.count {
                let remaining = chunks[index].count - skip
                if left >= remaining {
                    left -= remaining
                    index += 1
                    skip = 0
                } else {
                    skip += left
                    left = 0
                }
            }
            while index < chunks.count && chunks[index].count == skip { index += 1; skip = 0 }
        }
        return nil
    }

    /// fdatasync: the appended records survive a power loss.
    static func sync(_ fd: Int32) -> String? {
        fdatasync(fd) == 0 ? nil : String(cString: strerror(errno))
    }

    /// The size of an open file.
    static func size(_ fd: Int32) -> UInt64 {
        var info = stat()
        return fstat(fd, &info) == 0 ? UInt64(info.st_size) : 0
    }

    /// Reads exactly `count` bytes at `offset`.
    static func read(_ fd: Int32, at offset: UInt64, count: Int) throws -> [UInt8] {
        let bytes = try readSome(fd, at: offset, count: count)
        guard bytes.count == count else {
            throw FileWriteError(description: "cannot read the journal at offset \(offset): \(bytes.count) of \(count) bytes")
        }
        return bytes
    }

    /// Reads up to `count` bytes at `offset` (fewer at the end of the file).
    static func readSome(_ fd: Int32, at offset: UInt64, count: Int) throws -> [UInt8] {
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            while initialized < count {
                let n = pread(fd, buffer.baseAddress! + initialized, count - initialized, off_t(offset) + off_t(initialized))
                if n < 0 && errno == EINTR { continue }
                if n < 0 { failure = errno; break }
                if n == 0 { break }
                initialized += n
            }
        }
        if failure != 0 {
            throw FileWriteError(description: "cannot read the journal: \(String(cString: strerror(failure)))")
        }
        return bytes
    }

    /// Removes the journal of `harPath` (its records file, then the directory).
    public static func remove(for harPath: String) throws {
        let dir = directory(for: harPath)
        let path = recordsPath(in: dir)
        if unlink(path) != 0 && errno != ENOENT { throw message("cannot remove \(path)") }
        if rmdir(dir) != 0 && errno != ENOENT { throw message("cannot remove \(dir)") }
        syncDirectory(parentDirectory(of: dir))
    }

    static func closeFile(_ fd: Int32) { close(fd) }

    /// The process id, for the session record.
    static var processID: Int { Int(getpid()) }
}
