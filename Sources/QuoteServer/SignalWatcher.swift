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
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.stream = stream
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
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
