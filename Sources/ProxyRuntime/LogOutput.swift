import Dispatch
import Glibc
import ProxyCore
import Recording
import Synchronization

/// Where live log lines go. Lines are collected during one loop iteration and written with one
/// system call, so logging costs little even at tens of thousands of exchanges per second.
public final class LogOutput: @unchecked Sendable {
    private var pending: [UInt8] = []
    private let fd: Int32
    public var quiet: Bool

    public init(fd: Int32 = 2, quiet: Bool = false) {
        self.fd = fd
        self.quiet = quiet
    }

    /// Queues one line (control characters escaped).
    public func line(_ text: String) {
        pending.append(contentsOf: sanitizedForLog(text).utf8)
        pending.append(10)
    }

    /// A second output to the same descriptor, for another loop thread: each loop buffers its own
    /// lines and writes them with one call, so lines never interleave mid-line.
    func sibling() -> LogOutput {
        LogOutput(fd: fd, quiet: quiet)
    }

    public func flush() {
        guard !pending.isEmpty else { return }
        pending.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
        pending.removeAll(keepingCapacity: true)
    }
}
