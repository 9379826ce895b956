import Foundation
import Synchronization

/// The exports streaming now, per owner and in all, capped by `ConsoleExportLimits`: an export takes a slot
/// before its download starts and gives it back when its writer ends (done, client gone, stalled, or failed).
final class ExportSlots: Sendable {
    private let limits: ConsoleExportLimits
    private let running = Mutex(Running())

    private struct Running {
        var byOwner: [UUID: Int] = [:]
        var total = 0
    }

    /// A slot held; `release` gives it back (once).
    final class Slot: Sendable {
        private let release: Mutex<(@Sendable () -> Void)?>

        fileprivate init(_ release: @escaping @Sendable () -> Void) { self.release = Mutex(release) }

        func giveBack() {
            let body = release.withLock { body -> (@Sendable () -> Void)? in
                let taken = body
                body = nil
                return taken
            }
            body?()
        }
    }

    /// Which cap refused an export.
    enum Refusal: Error {
        case owner(limit: Int)
        case all(limit: Int)
    }

    init(_ limits: ConsoleExportLimits) { self.limits = limits }

    /// A slot for one more export of `owner`, or the cap it would pass.
    func take(owner: UUID) -> Result<Slot, Refusal> {
        let limits = self.limits
        let refusal = running.withLock { running -> Refusal? in
            if running.byOwner[owner, default: 0] >= limits.perOwner { return .owner(limit: limits.perOwner) }
            if running.total >= limits.inAll { return .all(limit: limits.inAll) }
            running.byOwner[owner, default: 0] += 1
            running.total += 1
            return nil
        }
        if let refusal { return .failure(refusal) }
        return .success(Slot { [self] in giveBack(owner: owner) })
    }

    private func giveBack(owner: UUID) {
        running.withLock { running in
            running.total -= 1
            let left = running.byOwner[owner, default: 1] - 1
            running.byOwner[owner] = left > 0 ? left : nil
        }
    }
}
