#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files up to this size are mapped with their pages populated up front (fewer faults); larger
/// ones are faulted in as they are read, so what is resident stays bounded by what is in use.
let populatedMappingBytes = 256 << 20

/// A read-only private mapping of the regular file at `path`; nil when it cannot be mapped (not a
/// regular file, empty, or a failing call).
func mapFileReadOnly(_ path: String) -> (UnsafePointer<UInt8>, Int)? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    return mapFileReadOnly(descriptor: fd)
}

/// The same for the file open as `fd`, which the caller keeps (and closes).
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
