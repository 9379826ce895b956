import Foundation

/// The kinds of backup pgBackRest takes.
public enum BackupType: String, Sendable, CaseIterable {
    case full, diff, incr
}

/// One backup in the repository, as `pgbackrest info` describes it.
public struct BackupRecord: Sendable, Equatable {
    public let label: String
    public let type: BackupType
    public let started: Date
    public let stopped: Date
    /// Size of the database it restores, and what it added to the repository (compressed, this backup only).
    public let databaseBytes: Int64
    public let repositoryBytes: Int64

    /// The first time a restore from this backup can reach: pgBackRest keeps the stop time in whole seconds and
    /// picks a backup for a time target only when it stopped strictly before it.
    public var restorableFrom: Date { stopped.addingTimeInterval(1) }
}

/// The times a restore can reach: from the end of the oldest backup to the last commit in the WAL archive.
public struct RestorableRange: Sendable, Equatable, CustomStringConvertible {
    public let oldest: Date
    public let newest: Date
    /// False when `newest` is only now: the last archived commit could not be read.
    public let newestIsLastCommit: Bool

    public init(oldest: Date, newest: Date, newestIsLastCommit: Bool = true) {
        self.oldest = oldest
        self.newest = newest
        self.newestIsLastCommit = newestIsLastCommit
    }

    public func contains(_ time: Date) -> Bool { time >= oldest && time <= newest }

    public var description: String {
        "\(BackupTime.text(oldest)) to "
            + (newestIsLastCommit
                ? BackupTime.text(newest) : "now (the last archived commit is read once a data directory exists)")
    }
}

/// What the repository holds for the stanza.
public struct RepositoryInfo: Sendable {
    public let backups: [BackupRecord]
    /// The oldest and newest WAL segment archived for the current database, if any.
    public let archiveMin: String?
    public let archiveMax: String?

    /// Parses `pgbackrest info --output=json` for one stanza. Throws when the stanza is missing or unreadable.
    static func parse(_ output: String, repository: String) throws -> RepositoryInfo {
        guard let start = output.firstIndex(of: "["),
            let stanzas = try? JSONSerialization.jsonObject(with: Data(output[start...].utf8)) as? [[String: Any]],
            let stanza = stanzas.first
        else {
            throw EmbeddedPostgresError("cannot read the backup repository at \(repository)", output: output)
        }
        let status = stanza["status"] as? [String: Any]
        let code = status?["code"] as? Int ?? -1
        // 0: ok; 2: no backups yet (the stanza exists); others: missing, unreadable, mismatched.
        guard code == 0 || code == 2 else {
            throw EmbeddedPostgresError(
                "the backup repository at \(repository) is not usable: \(cause(of: stanza, status: status))")
        }
        let backups = (stanza["backup"] as? [[String: Any]] ?? []).compactMap { entry -> BackupRecord? in
            guard let label = entry["label"] as? String,
                let type = (entry["type"] as? String).flatMap(BackupType.init(rawValue:)),
                let times = entry["timestamp"] as? [String: Any],
                let started = (times["start"] as? NSNumber)?.doubleValue,
                let stopped = (times["stop"] as? NSNumber)?.doubleValue,
                entry["error"] as? Bool != true
            else { return nil }
            let info = entry["info"] as? [String: Any]
            let repository = info?["repository"] as? [String: Any]
            return BackupRecord(
                label: label, type: type, started: Date(timeIntervalSince1970: started),
                stopped: Date(timeIntervalSince1970: stopped),
                databaseBytes: (info?["size"] as? NSNumber)?.int64Value ?? 0,
                repositoryBytes: (repository?["delta"] as? NSNumber)?.int64Value ?? 0)
        }
        let archive = (stanza["archive"] as? [[String: Any]])?.last
        return RepositoryInfo(
            backups: backups, archiveMin: archive?["min"] as? String,
            archiveMax: archive?["max"] as? String)
    }
}

/// Why the stanza is not usable: the stanza's status says only "other" when a repository failed, and the
/// repository's own status holds the reason (e.g. `[PathOpenError] ... Permission denied`).
private func cause(of stanza: [String: Any], status: [String: Any]?) -> String {
    let repositories = (stanza["repo"] as? [[String: Any]] ?? []).compactMap { repository -> String? in
        let status = repository["status"] as? [String: Any]
        guard (status?["code"] as? Int).map({ $0 != 0 && $0 != 2 }) == true else { return nil }
        return status?["message"] as? String
    }
    let summary = status?["message"] as? String ?? "unknown status"
    return repositories.isEmpty ? summary : repositories.joined(separator: "; ")
}

/// Times as backups and restores show and accept them: UTC, ISO 8601.
public enum BackupTime {
    public static func text(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    /// Parses `2026-11-25T14:42:24Z`, with optional fractional seconds, `T` or a space, and a `Z` or `±hh:mm` zone.
    public static func parse(_ text: String) -> Date? {
        let normalised = text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: " ", with: "T")
        for options: ISO8601DateFormatter.Options in [
            [.withInternetDateTime, .withFractionalSeconds], [.withInternetDateTime],
        ] {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = options
            if let date = formatter.date(from: normalised) { return date }
        }
        return nil
    }

    /// The form PostgreSQL's recovery_target_time takes, in UTC with microseconds.
    static func postgres(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down))
        let seconds = micros / 1_000_000
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second],
            from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d.%06d+00", parts.year!, parts.month!, parts.day!,
            parts.hour!, parts.minute!, parts.second!, Int(micros % 1_000_000))
    }
}
