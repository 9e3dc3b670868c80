import CSystemShims
#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif

/// A file could not be written; the message names the path and the system error.
public struct FileWriteError: Error, CustomStringConvertible {
    public var description: String

    public init(description: String) { self.description = description }
}

/// Writes a file atomically, in pieces: bytes go to a temporary file in the same directory, and
/// `commit()` syncs it and renames it over the target. A reader never sees half a file, and a
/// failure (or a crash) leaves any previous file untouched. Not thread-safe: one writer at a time.
public final class AtomicFileWriter: @unchecked Sendable {
    public let path: String
    private let temporary: String
    private var fd: Int32
    private var finished = false {
        // Done with the temporary file: a bus error's exit no longer removes it.
        didSet { if finished { harrec_bus_error_cleanup_remove(cleanupSlot) } }
    }
    /// The temporary file's slot in the bus error's cleanup (`harrec_on_bus_error`).
    private var cleanupSlot: Int32 = -1
    /// Bytes written so far, and how many of them already have writeback started.
    private var size = 0
    private var writebackStarted = 0
    /// Writeback is started every this many bytes, so the disk works while the rest is still
    /// being produced and `commit()`'s fsync has little left to wait for.
    static let writebackStride = 4 << 20

    public init(path: String, mode: mode_t = 0o644) throws {
        self.path = path
        temporary = "\(path).tmp-\(getpid())"
        fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw FileWriteError(description: "cannot create \(temporary): \(String(cString: strerror(errno)))")
        }
        cleanupSlot = harrec_bus_error_cleanup_add(temporary)
    }

    deinit {
        if !finished { abort() }
    }

    public func write(_ bytes: [UInt8]) throws {
        let failure: String? = bytes.withUnsafeBytes { raw -> String? in
            var offset = 0
            while offset < raw.count {
                let written = systemWrite(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return String(cString: strerror(errno))
                }
                offset += written
            }
            return nil
        }
        if let failure {
            abort()
            throw FileWriteError(description: "cannot write \(temporary): \(failure)")
        }
        size += bytes.count
        if size - writebackStarted >= Self.writebackStride {
            // Advisory: an error here only means fsync does the work later.
            _ = harrec_start_writeback(fd, Int64(writebackStarted), Int64(size - writebackStarted))
            writebackStarted = size
        }
    }

    /// Syncs the data and renames the temporary file over `path`.
    public func commit() throws {
        guard !finished else { return }
        if fsync(fd) != 0 {
            let message = String(cString: strerror(errno))
            abort()
            throw FileWriteError(description: "cannot sync \(temporary): \(message)")
        }
        close(fd)
        finished = true
        guard rename(temporary, path) == 0 else {
            let message = String(cString: strerror(errno))
            unlink(temporary)
            throw FileWriteError(description: "cannot rename \(temporary) to \(path): \(message)")
        }
        // Persist the rename itself.
        syncDirectory(parentDirectory(of: path))
    }

    /// Removes the temporary file; the target is left as it was.
    public func abort() {
        guard !finished else { return }
        finished = true
        close(fd)
        unlink(temporary)
    }
}

/// The directory `path` is in ("." for a bare name).
public func parentDirectory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

/// fsyncs a directory, so the names created, renamed or removed in it survive a power loss.
public func syncDirectory(_ path: String) {
    let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if fd >= 0 {
        fsync(fd)
        close(fd)
    }
}

/// Writes `bytes` to `path` atomically (see `AtomicFileWriter`).
public func writeFileAtomically(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws {
    let writer = try AtomicFileWriter(path: path, mode: mode)
    try writer.write(bytes)
    try writer.commit()
}

/// Removes the file at `path`, if there is one.
public func removeFile(_ path: String) {
    unlink(path)
}

/// The size of the regular file at `path`, or nil.
public func fileSize(_ path: String) -> Int? {
    var info = stat()
    guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
    return Int(info.st_size)
}

/// Reads a whole file; nil with a message on failure.
public func readFile(_ path: String) throws -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
        throw FileWriteError(description: "cannot open \(path): \(String(cString: strerror(errno)))")
    }
    defer { close(fd) }
    func failure() -> FileWriteError {
        FileWriteError(description: "cannot read \(path): \(String(cString: strerror(errno)))")
    }
    // Read straight into a buffer of the file's size: a 100 MB HAR is not copied while growing.
    var info = stat()
    let expected = fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG ? Int(info.st_size) : 0
    var result = [UInt8]()
    if expected > 0 {
        var readError = false
        result = [UInt8](unsafeUninitializedCapacity: expected) { buffer, initialized in
            while initialized < expected {
                let count = read(fd, buffer.baseAddress! + initialized, expected - initialized)
                if count < 0 && errno == EINTR { continue }
                if count < 0 { readError = true; break }
                if count == 0 { break }
                initialized += count
            }
        }
        if readError { throw failure() }
    }
    // Whatever is beyond the size fstat saw (a growing file, a pipe).
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR { continue }
            throw failure()
        }
        if count == 0 { break }
        result.append(contentsOf: chunk[0..<count])
    }
    return result
}
