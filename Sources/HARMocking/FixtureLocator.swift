// Where `.fixture(name)` response bodies come from.

import Foundation

/// Where `.fixture(name)` bodies are found: the directories given here, then
/// the `HARMOCKING_FIXTURES` environment variable (colon-separated), then Bundle.main and the
/// other loaded bundles' resources.
public enum FixtureLocator {
    private static let directories = Locked<[URL]>([])

    /// Replaces the directories searched first (in order).
    public static func setDirectories(_ directories: [URL]) {
        self.directories.withLock { $0 = directories }
    }

    /// The bytes of the fixture `name` (a file name, or a relative path such as "users/1.json").
    /// Throws `FixtureNotFoundError`, listing every place searched, when no location has it.
    public static func data(named name: String) throws -> Data {
        var searched: [String] = []
        for directory in searchDirectories() {
            let url = directory.appendingPathComponent(name)
            searched.append(directory.path)
            if let data = readRegularFile(url) { return data }
        }
        for bundle in [Bundle.main] + Bundle.allBundles + Bundle.allFrameworks {
            if let url = bundle.url(forResource: name, withExtension: nil), let data = readRegularFile(url) {
                return data
            }
            if let resources = bundle.resourceURL { searched.append(resources.path) }
        }
        var seen = Set<String>()
        throw FixtureNotFoundError(name: name, searched: searched.filter { seen.insert($0).inserted })
    }

    /// The directories from `setDirectories` followed by those in `HARMOCKING_FIXTURES`.
    static func searchDirectories() -> [URL] {
        var result = directories.snapshot
        // getenv rather than ProcessInfo: it sees variables set after launch (setenv in tests).
        if let raw = getenv("HARMOCKING_FIXTURES") {
            for part in String(cString: raw).split(separator: ":") where !part.isEmpty {
                result.append(URL(fileURLWithPath: String(part), isDirectory: true))
            }
        }
        return result
    }

    private static func readRegularFile(_ url: URL) -> Data? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue
        else { return nil }
        return try? Data(contentsOf: url)
    }
}

/// A `.fixture(name)` body that no fixture location holds.
public struct FixtureNotFoundError: Error, CustomStringConvertible, LocalizedError {
    /// The fixture's name as written in the scenario.
    public var name: String
    /// The directories searched, in order.
    public var searched: [String]

    public var description: String {
        var text = "HARMocking: fixture \"\(name)\" not found."
        text += searched.isEmpty ? " No fixture directory is configured." : " Searched: " + searched.joined(separator: ", ") + "."
        text += " Call FixtureLocator.setDirectories(_:), set HARMOCKING_FIXTURES, or add the file to the app's resources."
        return text
    }

    public var errorDescription: String? { description }
}
