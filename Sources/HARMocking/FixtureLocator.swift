// Where `.fixture(name)` response bodies come from.

import Foundation

/// Where `.fixture(name)` bodies are found, in order:
/// 1. the directories given to `setDirectories(_:)`;
/// 2. the directories in the `HARMOCKING_FIXTURES` environment variable (colon-separated);
/// 3. the bundles given to `addBundle(_:)` (a test target's `Bundle.module`);
/// 4. SwiftPM resource bundles beside the running binary (`<Package>_<Target>.resources` on
///    Linux, `<Package>_<Target>.bundle` on Apple platforms), then `Bundle.main` and the other
///    loaded bundles.
///
/// In a bundle the name is looked up at the resource root and, when not there, anywhere below it:
/// `.copy("Fixtures")` keeps `Fixtures/API/v1/browse/v1-orders.json` as a directory tree, so
/// `browse/v1-orders.json` (the names `harrec generate` writes: scenario directory, then file) is
/// found below it. `.process` flattens the tree: when no location has the name's directories, a
/// bundle's root is searched for its last component (`v1-orders.json`) as a last resort. A
/// missing fixture's error lists every place searched.
public enum FixtureLocator {
    private static let directories = Locked<[URL]>([])
    private static let bundles = Locked<[Bundle]>([])
    /// Resource directory -> file name -> paths below it (built once per directory).
    private static let indexes = Locked<[String: [String: [URL]]]>([:])

    /// Replaces the directories searched first (in order).
    public static func setDirectories(_ directories: [URL]) {
        self.directories.withLock { $0 = directories }
    }

    /// Searches `bundle` too (after the directories): `FixtureLocator.addBundle(.module)` in a
    /// SwiftPM test target whose fixtures are resources.
    public static func addBundle(_ bundle: Bundle) {
        bundles.withLock { list in
            if !list.contains(where: { $0.bundleURL == bundle.bundleURL }) { list.append(bundle) }
        }
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
        for (resources, recursive) in resourceDirectories() {
            searched.append(resources.path)
            if let data = readRegularFile(resources.appendingPathComponent(name)) { return data }
            guard recursive else { continue }
            for url in nested(name, in: resources) {
                if let data = readRegularFile(url) { return data }
            }
        }
        // A `.process` resource bundle keeps file names only.
        let last = (name as NSString).lastPathComponent
        if last != name, !last.isEmpty {
            for (resources, recursive) in resourceDirectories() where recursive {
                if let data = readRegularFile(resources.appendingPathComponent(last)) { return data }
            }
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

    /// Resource directories of the added bundles and of SwiftPM resource bundles beside the binary
    /// (searched below their root too), then of the loaded bundles (root only: on Linux the main
    /// bundle's is the build directory), each once.
    static func resourceDirectories() -> [(url: URL, recursive: Bool)] {
        var result: [(URL, Bool)] = []
        var seen = Set<String>()
        func add(_ url: URL?, recursive: Bool) {
            guard let url, seen.insert(url.standardizedFileURL.path).inserted else { return }
            result.append((url, recursive))
        }
        for bundle in bundles.snapshot { add(bundle.resourceURL ?? bundle.bundleURL, recursive: true) }
        for bundle in swiftPMResourceBundles() { add(bundle, recursive: true) }
        for bundle in [Bundle.main] + Bundle.allBundles + Bundle.allFrameworks { add(bundle.resourceURL, recursive: false) }
        return result
    }

    /// `*.resources` (Linux) and `*.bundle` (Apple platforms) directories beside the executable
    /// and beside the main bundle: where SwiftPM puts each target's resources.
    private static func swiftPMResourceBundles() -> [URL] {
        var places = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        if let executable = Bundle.main.executableURL { places.append(executable.deletingLastPathComponent()) }
        var found: [URL] = []
        for place in places {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: place.path) else { continue }
            for name in names.sorted() where name.hasSuffix(".resources") || name.hasSuffix(".bundle") {
                let url = place.appendingPathComponent(name, isDirectory: true)
                found.append(name.hasSuffix(".bundle") ? (Bundle(url: url)?.resourceURL ?? url) : url)
            }
        }
        return found
    }

    /// Files below `directory` whose path ends with `name`, shortest path first.
    private static func nested(_ name: String, in directory: URL) -> [URL] {
        let key = directory.standardizedFileURL.path
        let index = indexes.withLock { $0[key] } ?? buildIndex(directory, key: key)
        let last = (name as NSString).lastPathComponent
        return (index[last] ?? []).filter { $0.path.hasSuffix("/" + name) }
    }

    private static func buildIndex(_ directory: URL, key: String) -> [String: [URL]] {
        var index: [String: [URL]] = [:]
        if let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) {
            for case let url as URL in walker {
                index[url.lastPathComponent, default: []].append(url)
            }
        }
        for name in index.keys { index[name]!.sort { $0.path.count < $1.path.count || ($0.path.count == $1.path.count && $0.path < $1.path) } }
        indexes.withLock { $0[key] = index }
        return index
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
        text += " Call FixtureLocator.setDirectories(_:) or FixtureLocator.addBundle(.module), set HARMOCKING_FIXTURES, or add the file to the target's resources."
        return text
    }

    public var errorDescription: String? { description }
}
