import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ProxyCore
import Recording
import Synchronization

/// Where live log lines go. Lines are collected during one loop iteration and written with one
/// system call, so logging costs little even at tens of thousands of exchanges per second.
public final class LogOutput: @unchecked Sendable {
    private var pending: [UInt8] = []
    private let fd: Int32
    public var quiet: Bool
    /// Whether styles are drawn: the descriptor is a terminal and NO_COLOR (no-color.org) is unset.
    let styled: Bool

    /// How a line is drawn on a terminal.
    public enum Style {
        case plain
        /// Less prominent: what happened but does not matter much (exchanges not recorded).
        case dim
    }

    public init(fd: Int32 = 2, quiet: Bool = false) {
        self.fd = fd
        self.quiet = quiet
        styled = isatty(fd) == 1 && getenv("NO_COLOR") == nil
    }

    private init(fd: Int32, quiet: Bool, styled: Bool) {
        self.fd = fd
        self.quiet = quiet
        self.styled = styled
    }

    /// Queues one line (control characters escaped, so only harrec's own style codes reach the
    /// terminal).
    public func line(_ text: String, style: Style = .plain) {
        let dim = style == .dim && styled
        if dim { pending.append(contentsOf: [0x1B, 0x5B, 0x32, 0x6D]) }  // ESC [ 2 m
        pending.append(contentsOf: sanitizedForLog(text).utf8)
        if dim { pending.append(contentsOf: [0x1B, 0x5B, 0x30, 0x6D]) }  // ESC [ 0 m
        pending.append(10)
    }

    /// A second output to the same descriptor, for another loop thread: each loop buffers its own
    /// lines and writes them with one call, so lines never interleave mid-line.
    func sibling() -> LogOutput {
        LogOutput(fd: fd, quiet: quiet, styled: styled)
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
