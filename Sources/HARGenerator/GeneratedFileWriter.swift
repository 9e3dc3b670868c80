#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Files

/// Why writing generated files failed.
public struct GeneratedFileWriteError: Error, CustomStringConvertible {
    /// The file or directory that could not be written.
    public var path: String
    /// The system's reason, one line.
    public var reason: String
    public var description: String { "cannot write \(path): \(reason)" }
}

extension Array where Element == GeneratedFile {
    /// Writes the files: Swift sources under `outDirectory`, fixtures under `fixturesDirectory`
    /// (both created when missing). Each file is written to a temporary file beside it and renamed
    /// over the old one, so a reader never sees half a file; files whose content is unchanged are
    /// not touched, so an incremental build does not recompile them.
    /// - Returns: the paths written (unchanged files excluded).
    @discardableResult
    public func write(to outDirectory: URL, fixturesDirectory: URL) throws -> [URL] {
        var written: [URL] = []
        for file in self {
            let base = file.role == .fixture ? fixturesDirectory : outDirectory
            let target = base.appendingPathComponent(file.relativePath)
            if try GeneratedFileWriter.writeIfChanged(file.bytes, to: target) { written.append(target) }
        }
        return written
    }
}

enum GeneratedFileWriter {
    /// Writes through `AtomicFileWriter` (Recording's, the one atomic writer): a temporary file
    /// beside the target, synced, then renamed over it.
    static func writeIfChanged(_ bytes: [UInt8], to target: URL) throws -> Bool {
        let fm = FileManager.default
        if let existing = fm.contents(atPath: target.path), existing.elementsEqual(bytes) { return false }
        let directory = target.deletingLastPathComponent()
        do {
            try fm.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw GeneratedFileWriteError(path: directory.path, reason: "\(error)")
        }
        do {
            let writer = try AtomicFileWriter(path: target.path)
            try writer.write(bytes)
            try writer.commit()
        } catch let error as FileWriteError {
            throw GeneratedFileWriteError(path: target.path, reason: error.description)
        }
        return true
    }
}
