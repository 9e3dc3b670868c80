#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where the package's own files are, for tests that read fixtures or run scripts. Found from this
/// file's path (`<root>/Tests/TestSupport/PackagePaths.swift`), so tests need no working directory.
public enum PackagePaths {
    /// The package root.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // TestSupport
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// `<root>/Fixtures/<folder>`.
    public static func fixtures(_ folder: String) -> URL {
        root.appendingPathComponent("Fixtures", isDirectory: true).appendingPathComponent(folder, isDirectory: true)
    }

    /// The bytes of `<root>/Fixtures/<folder>/<name>`.
    public static func fixtureBytes(_ folder: String, _ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: fixtures(folder).appendingPathComponent(name)))
    }
}
