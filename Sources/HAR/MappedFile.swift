#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files up to this size are mapped with their pages populated up front (fewer faults); larger
/// ones are faulted in as they are read, so what is resident stays bounded by what is in use.
let populatedMappingBytes = 256 << 20

/// The descriptor of the file at `path`, open for reading; nil when it cannot be opened.
func openForReading(_ path: String) -> Int32? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    return fd >= 0 ? fd : nil
}

func closeDescriptor(_ fd: Int32) { _ = close(fd) }

/// A second descriptor of the same open file, closed on exec; nil when none can be made.
func duplicateDescriptor(_ fd: Int32) -> Int32? {
    let own = fcntl(fd, F_DUPFD_CLOEXEC, 0)
    return own >= 0 ? own : nil
}

/// The size of the file open as `fd`; nil when it is not a regular file.
func regularFileSize(_ fd: Int32) -> Int? {
    var info = stat()
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
    return Int(info.st_size)
}

/// The address space this process may use (`ulimit -v`, RLIMIT_AS), in bytes; `Int.max` when
/// there is no limit.
public func addressSpaceLimit() -> Int {
    var limit = rlimit()
    #if os(Linux)
    let asked = getrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit)
    #else
    let asked = getrlimit(RLIMIT_AS, &limit)
    #endif
    guard asked == 0, limit.rlim_cur != rlim_t.max else { return .max }
    return Int(clamping: limit.rlim_cur)
}

/// A read-only private mapping of the regular file open as `fd`, which the caller keeps (and
/// closes); nil when it cannot be mapped (not a regular file, empty, or a failing call: too
/// little address space for it, for one).
func mapFileReadOnly(descriptor fd: Int32) -> (UnsafePointer<UInt8>, Int)? {
    var info = stat()
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size > 0 else { return nil }
    let count = Int(info.st_size)
    #if os(Linux)
    let flags = count <= populatedMappingBytes ? MAP_PRIVATE | MAP_POPULATE : MAP_PRIVATE
    #else
    let flags = MAP_PRIVATE
    #endif
    guard let base = mmap(nil, count, PROT_READ, flags, fd, 0), base != MAP_FAILED else { return nil }
    return (UnsafePointer(base.assumingMemoryBound(to: UInt8.self)), count)
}

/// Lets the kernel drop the mapping's resident pages: they are the file's own (clean, read-only),
/// so a later read faults them in again from the file.
/// Only whole pages inside the range go (a page shared with bytes outside it stays).
func dropResidentPages(_ base: UnsafePointer<UInt8>, _ count: Int) {
    let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    let start = (Int(bitPattern: base) + page - 1) / page * page
    let end = (Int(bitPattern: base) + count) / page * page
    guard end > start, let pointer = UnsafeMutableRawPointer(bitPattern: start) else { return }
    _ = madvise(pointer, end - start, Int32(MADV_DONTNEED))
}

/// Undoes `mapFileReadOnly`.
func unmapFile(_ base: UnsafePointer<UInt8>, _ count: Int) {
    munmap(UnsafeMutableRawPointer(mutating: base), count)
}

/// Reads bytes at an offset without holding them: a file's `pread`, or an array in tests.
struct PositionalReader: Sendable {
    /// How many bytes there are.
    let count: Int
    /// Fills `buffer` from `offset`; returns the bytes read (fewer only at the end), or -1 when
    /// the read failed.
    let read: @Sendable (_ offset: Int, _ buffer: UnsafeMutableRawBufferPointer) -> Int
    /// Lets go of what the reader holds (a descriptor).
    let close: @Sendable () -> Void

    /// The file open as `fd`, `count` bytes long; the reader owns `fd` and closes it.
    static func file(_ fd: Int32, count: Int) -> PositionalReader {
        PositionalReader(count: count, read: { offset, buffer in
            var done = 0
            while done < buffer.count {
                let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                if n < 0 { return -1 }
                if n == 0 { break }
                done += n
            }
            return done
        }, close: { closeDescriptor(fd) })
    }
}
