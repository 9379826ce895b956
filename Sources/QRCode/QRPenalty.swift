/// How hard a masked symbol is to read (ISO/IEC 18004 7.8.3): the encoder keeps the mask scoring lowest.
enum QRPenalty {
    static func of(_ matrix: QRMatrix) -> Int {
        let size = matrix.size
        let rows = (0..<size).map { row in (0..<size).map { matrix[$0, row] } }
        let columns = (0..<size).map { column in (0..<size).map { matrix[column, $0] } }
        var penalty = 0
        for line in rows + columns { penalty += runs(line) + finderLike(line) }
        penalty += blocks(rows)
        penalty += balance(rows)
        return penalty
    }

    /// Rule 1: 3 for each run of five same-coloured modules in a row or column, plus 1 per module beyond five.
    static func runs(_ line: [Bool]) -> Int {
        var penalty = 0
        var run = 1
        for index in 1...line.count {
            if index < line.count && line[index] == line[index - 1] {
                run += 1
            } else {
                if run >= 5 { penalty += 3 + run - 5 }
                run = 1
            }
        }
        return penalty
    }

    /// Rule 2: 3 for each 2×2 block of one colour (overlapping blocks each count).
    static func blocks(_ rows: [[Bool]]) -> Int {
        var penalty = 0
        for row in 0..<rows.count - 1 {
            for column in 0..<rows.count - 1 {
                let colour = rows[row][column]
                if rows[row][column + 1] == colour && rows[row + 1][column] == colour
                    && rows[row + 1][column + 1] == colour
                {
                    penalty += 3
                }
            }
        }
        return penalty
    }

    /// The dark-light-dark-dark-dark-light-dark pattern of a finder.
    private static let finder: [Bool] = [true, false, true, true, true, false, true]

    /// Rule 3: 40 for each finder-like pattern (1:1:3:1:1) with four light modules on either side (beyond the
    /// edge counts as light, as the quiet zone is).
    static func finderLike(_ line: [Bool]) -> Int {
        guard line.count >= finder.count else { return 0 }
        func light(_ range: Range<Int>) -> Bool { range.allSatisfy { $0 < 0 || $0 >= line.count || !line[$0] } }
        var penalty = 0
        for start in 0...(line.count - finder.count) where Array(line[start..<start + finder.count]) == finder {
            if light(start - 4..<start) || light(start + 7..<start + 11) { penalty += 40 }
        }
        return penalty
    }

    /// Rule 4: 10 for each full 5 % the share of dark modules is away from half.
    static func balance(_ rows: [[Bool]]) -> Int {
        let total = rows.count * rows.count
        let dark = rows.reduce(0) { $0 + $1.filter { $0 }.count }
        return abs(dark * 20 - total * 10) / total * 10
    }
}
