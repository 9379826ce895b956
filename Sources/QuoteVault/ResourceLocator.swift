import Foundation

/// Finds files the server ships beside its code (`migrations/`, `schema/`, `data/quotes.jsonl`): in the working
/// directory, else beside the executable or in one of its parents (a checkout's `.build/release/quote-server`), else
/// in `/usr/share/quote-server` (the Docker image).
public enum ResourceLocator {
    public static func find(_ relativePath: String) -> URL? {
        var candidates = [URL(fileURLWithPath: FileManager.default.currentDirectoryPath)]
        var directory = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath()
            .deletingLastPathComponent()
        for _ in 0..<6 {
            candidates.append(directory)
            directory.deleteLastPathComponent()
        }
        candidates.append(URL(fileURLWithPath: "/usr/share/quote-server"))
        for base in candidates {
            let url = base.appendingPathComponent(relativePath)
            if FileManager.default.fileExists(atPath: url.path) { return url }
        }
        return nil
    }
}
