import Foundation
import XCTest
import AuthJWT

/// Measures hash time per parameter set, to choose `ScryptParameters.default`.
/// Opt-in (`AUTHJWT_BENCHMARK=1`) and assertion-free: timings vary by machine.
final class PasswordHashBenchmark: XCTestCase {
    func testHashTimes() throws {
        guard ProcessInfo.processInfo.environment["AUTHJWT_BENCHMARK"] == "1" else {
            throw XCTSkip("set AUTHJWT_BENCHMARK=1 to measure")
        }
        let candidates = [(14, 8, 1), (14, 12, 1), (14, 8, 2), (14, 16, 1), (15, 8, 1), (16, 8, 1)]
        for (logN, r, p) in candidates {
            let hasher = PasswordHasher(parameters: ScryptParameters(logN: logN, r: r, p: p))
            _ = try hasher.hash("warm-up")
            var times: [Double] = []
            for _ in 0..<15 {
                let start = ContinuousClock.now
                _ = try hasher.hash("correct horse battery staple")
                let elapsed = ContinuousClock.now - start
                times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
            }
            times.sort()
            let mean = times.reduce(0, +) / Double(times.count)
            print(
                String(
                    format: "scrypt ln=%d r=%d p=%d (%d MiB): min %.1f ms, median %.1f ms, mean %.1f ms, max %.1f ms",
                    logN, r, p, ((128 * r) << logN) >> 20, times[0], times[times.count / 2], mean, times.last!))
        }
    }
}
