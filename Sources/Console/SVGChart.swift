import Foundation

/// Charts as inline SVG, drawn on the server: no script, no style attributes (the CSP forbids inline styles),
/// colours as presentation attributes. The `viewBox` scales the chart to its container's width.
enum SVGChart {
    struct Series {
        let name: String
        let colour: String
        /// One value per x position; nil is a gap.
        let values: [Double?]
    }

    private static let width = 640.0, height = 220.0
    private static let left = 48.0, right = 12.0, top = 12.0, bottom = 28.0

    /// Vertical bars, one per label (labels shown every `labelEvery` bars).
    static func bars(
        title: String, labels: [String], values: [Double], colour: String = "#1f5fbf",
        labelEvery: Int = 1
    ) -> HTML {
        let maximum = niceMaximum(values.max() ?? 0)
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let step = plotWidth / Double(max(1, values.count))
        var marks: [HTML] = []
        for (index, value) in values.enumerated() {
            let barHeight = plotHeight * value / maximum
            let x = left + Double(index) * step + step * 0.15
            marks.append(
                """
                <rect x="\(number(x))" y="\(number(top + plotHeight - barHeight))" width="\(number(step * 0.7))" \
                height="\(number(barHeight))" fill="\(colour)"><title>\(labels[index]): \(number(value))</title></rect>
                """)
            if index % labelEvery == 0 {
                marks.append(xLabel(labels[index], x: x + step * 0.35))
            }
        }
        return frame(title: title, maximum: maximum, marks: marks, legend: [])
    }

    /// Lines over the same x positions (labels shown every `labelEvery` positions).
    static func lines(title: String, labels: [String], series: [Series], labelEvery: Int, unit: String = "")
        -> HTML
    {
        let maximum = niceMaximum(series.flatMap { $0.values.compactMap { $0 } }.max() ?? 0)
        let count = series.map(\.values.count).max() ?? 0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let step = plotWidth / Double(max(1, count - 1))
        var marks: [HTML] = []
        for index in stride(from: 0, to: labels.count, by: max(1, labelEvery)) {
            marks.append(xLabel(labels[index], x: left + Double(index) * step))
        }
        for line in series {
            // One polyline per run of values: a gap (nil) is not bridged.
            var runs: [[String]] = [[]]
            var dots: [HTML] = []
            for (index, value) in line.values.enumerated() {
                guard let value else {
                    if !(runs.last?.isEmpty ?? true) { runs.append([]) }
                    continue
                }
                let x = number(left + Double(index) * step), y = number(top + plotHeight * (1 - value / maximum))
                runs[runs.count - 1].append("\(x),\(y)")
                // A dot at each non-zero point, so a lone minute between gaps shows too.
                if value > 0 { dots.append("<circle cx=\"\(x)\" cy=\"\(y)\" r=\"2\" fill=\"\(line.colour)\"/>") }
            }
            marks += dots
            for run in runs where !run.isEmpty {
                marks.append(
                    """
                    <polyline points="\(run.joined(separator: " "))" fill="none" stroke="\(line.colour)" \
                    stroke-width="2"><title>\(line.name)</title></polyline>
                    """)
            }
        }
        let legend = series.map { ($0.name, $0.colour) }
        return frame(title: title + (unit.isEmpty ? "" : " (\(unit))"), maximum: maximum, marks: marks, legend: legend)
    }

    private static func frame(title: String, maximum: Double, marks: [HTML], legend: [(String, String)]) -> HTML {
        let plotHeight = height - top - bottom
        var grid: [HTML] = []
        for fraction in [0.0, 0.5, 1.0] {
            let y = top + plotHeight * (1 - fraction)
            grid.append(
                """
                <line x1="\(number(left))" y1="\(number(y))" x2="\(number(width - right))" y2="\(number(y))" \
                stroke="#dde1e7" stroke-width="1"/>\
                <text x="\(number(left - 6))" y="\(number(y + 4))" text-anchor="end" font-size="11" \
                fill="#5b6574">\(number(maximum * fraction))</text>
                """)
        }
        let keys = legend.map { name, colour -> HTML in
            """
            <li><svg class="key" viewBox="0 0 10 10" aria-hidden="true"><rect width="10" height="10" \
            fill="\(colour)"/></svg> \(name)</li>
            """
        }
        let legendList: HTML = keys.isEmpty ? .empty : "<ul class=\"legend\">\(keys)</ul>"
        return """
            <figure class="chart"><figcaption>\(title)</figcaption>
            <svg viewBox="0 0 \(number(width)) \(number(height))" role="img" aria-label="\(title)" \
            xmlns="http://www.w3.org/2000/svg">\(grid)\(marks)</svg>\(legendList)</figure>
            """
    }

    private static func xLabel(_ text: String, x: Double) -> HTML {
        """
        <text x="\(number(x))" y="\(number(height - 8))" text-anchor="middle" font-size="11" \
        fill="#5b6574">\(text)</text>
        """
    }

    /// The axis' top: the maximum rounded up to 1, 2 or 5 times a power of ten (at least 1).
    static func niceMaximum(_ value: Double) -> Double {
        guard value > 1 else { return 1 }
        let power = pow(10, (log10(value)).rounded(.down))
        for factor in [1.0, 2.0, 5.0, 10.0] where value <= factor * power { return factor * power }
        return 10 * power
    }

    /// A number as SVG and labels want it: whole numbers without a fraction, others with one or two digits.
    static func number(_ value: Double) -> String {
        if value == value.rounded() { return String(Int(value)) }
        return String(format: value < 10 ? "%.2f" : "%.1f", value)
    }
}
