import ArgumentParser
import EmbeddedPostgres
import Foundation

/// BACKUP_SCHEDULE: how often each kind of backup is due, e.g. `full=1d,incr=1h` (the default), or `off`.
struct BackupSchedule: Equatable {
    /// Interval per type; a type not named is not scheduled.
    var intervals: [BackupType: Duration]

    static let standard = BackupSchedule(intervals: [.full: .seconds(86_400), .incr: .seconds(3_600)])

    /// Parses `type=N[s|m|h|d],...`; nil for `off`.
    static func parse(_ text: String?) throws -> BackupSchedule? {
        guard let text else { return standard }
        if text.lowercased() == "off" { return nil }
        var intervals: [BackupType: Duration] = [:]
        for entry in text.split(separator: ",") {
            let parts = entry.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, let type = BackupType(rawValue: parts[0]), intervals[type] == nil,
                let seconds = Self.seconds(parts[1]), (60...31_622_400).contains(seconds)
            else {
                throw ValidationError(
                    """
                    BACKUP_SCHEDULE must be off or entries like full=1d,incr=1h (full, diff, incr; 1m to 366d), \
                    got \(text)
                    """)
            }
            intervals[type] = .seconds(seconds)
        }
        guard !intervals.isEmpty else { throw ValidationError("BACKUP_SCHEDULE names no backup; use off to disable") }
        return BackupSchedule(intervals: intervals)
    }

    private static func seconds(_ text: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        guard let unit = text.last.flatMap({ units[$0] }), let count = Int(text.dropLast()), count > 0 else {
            return nil
        }
        return count.multipliedReportingOverflow(by: unit).overflow ? nil : count * unit
    }

    /// The backup due at `now`, given the repository's backups (oldest first): the biggest kind whose interval
    /// has passed since a backup of at least that kind ended; a full one when there is none.
    func due(at now: Date, backups: [BackupRecord]) -> BackupType? {
        guard !backups.isEmpty else { return .full }
        let covering: [BackupType: Set<BackupType>] = [
            .full: [.full], .diff: [.full, .diff], .incr: [.full, .diff, .incr],
        ]
        for type in [BackupType.full, .diff, .incr] {
            guard let interval = intervals[type] else { continue }
            let last = backups.last { covering[type]!.contains($0.type) }?.stopped ?? .distantPast
            if now.timeIntervalSince(last) >= Double(interval.components.seconds) { return type }
        }
        return nil
    }
}
