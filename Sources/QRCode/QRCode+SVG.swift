/// A QR code as an SVG image: one path of its dark modules (a rectangle per horizontal run) on a light square
/// with the four-module quiet zone readers need; it scales to whatever width the page gives it.
extension QRCode {
    public static let quietZone = 4

    /// The image alone; the page around it names it for screen readers (`aria-labelledby`, a caption).
    public func svg() -> String {
        let side = size + 2 * Self.quietZone
        var path = ""
        for row in 0..<size {
            var column = 0
            while column < size {
                guard self[column, row] else {
                    column += 1
                    continue
                }
                let start = column
                while column < size && self[column, row] { column += 1 }
                path += "M\(start + Self.quietZone) \(row + Self.quietZone)h\(column - start)v1h-\(column - start)z"
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" shape-rendering="crispEdges">\
            <rect width="\(side)" height="\(side)" fill="#fff"/><path fill="#000" d="\(path)"/></svg>
            """
    }
}
