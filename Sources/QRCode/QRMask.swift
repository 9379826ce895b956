/// One of the eight data masks (ISO/IEC 18004 table 10), which invert data modules in a pattern so that the
/// code has no large areas or finder-like runs a reader could mistake.
struct QRMask: Sendable, Equatable {
    /// 0...7, as the format information names it.
    let number: Int

    static let all = (0..<8).map(QRMask.init(number:))

    func inverts(column x: Int, row y: Int) -> Bool {
        switch number {
        case 0: (x + y) % 2 == 0
        case 1: y % 2 == 0
        case 2: x % 3 == 0
        case 3: (x + y) % 3 == 0
        case 4: (x / 3 + y / 2) % 2 == 0
        case 5: x * y % 2 + x * y % 3 == 0
        case 6: (x * y % 2 + x * y % 3) % 2 == 0
        default: ((x + y) % 2 + x * y % 3) % 2 == 0
        }
    }
}
