import Synchronization

/// Set when the instance has been told to stop: `/ready` then answers 503, so a load balancer's health check
/// takes the instance out of rotation while it still answers everything it is sent (see `Application.drain`).
public final class DrainState: Sendable {
    private let flag = Atomic<Bool>(false)

    public init() {}

    public var isDraining: Bool { flag.load(ordering: .relaxed) }

    public func begin() { flag.store(true, ordering: .relaxed) }
}
