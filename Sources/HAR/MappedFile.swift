#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A read-only private mapping of the regular file at `path`, its pages populated up front; nil
/// when it cannot be mapped (not a regular file, empty, or a failing call).
func mapFileReadOnly(_ path: String) -> (UnsafePointer<UInt8>, Int)? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size > 0 else { return nil }
    let count = Int(info.st_size)
    #if os(Linux)
    let flags = MAP_PRIVATE | MAP_POPULATE
    #else
    let flags = MAP_PRIVATE
    #endif
    guard let base = mmap(nil, count, PROT_READ, flags, fd, 0), base != MAP_FAILED else { return nil }
    return (UnsafePointer(base.assumingMemoryBound(to: UInt8.self)), count)
}

/// Undoes `mapFileReadOnly`.
func unmapFile(_ base: UnsafePointer<UInt8>, _ count: Int) {
    munmap(UnsafeMutableRawPointer(mutating: base), count)
}
