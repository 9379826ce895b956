import Dispatch
import Foundation

/// Turns SIGINT/SIGTERM into an awaitable event. The default actions are ignored so that the process can
/// finish requests in flight before it exits.
final class SignalWatcher: @unchecked Sendable {
    // @unchecked: `sources` is written once in init and only kept alive afterwards.
    private let stream: AsyncStream<Int32>
    private let sources: [DispatchSourceSignal]

    init(signals: [Int32]) {
        signal(SIGPIPE, SIG_IGN)  // a client that hangs up must not kill the server
        var continuation: AsyncStream<Int32>.Continuation!
        stream = AsyncStream { continuation = $0 }
        let yield = continuation!
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { yield.yield(number) }
            source.resume()
            return source
        }
    }

    /// Waits for the first of the watched signals.
    func next() async -> Int32 {
        for await number in stream { return number }
        return 0
    }
}
