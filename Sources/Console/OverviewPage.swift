import Foundation

/// The console's first page: how the service is used and how it runs, as charts drawn on the server.
enum OverviewPage {
    static func show(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let figures = try await request.context.usage.figures()
        let status = request.context.serverStatus
        let traffic = status.traffic()
        let delayed = traffic.reduce(0) { $0 + $1.delayedRefusals }
        let signUps = SVGChart.bars(
            title: "Sign-ups per day, last 30 days (UTC)",
            labels: figures.signUps.map { String($0.date.description.suffix(5)) },
            values: figures.signUps.map { Double($0.count) }, labelEvery: 7)
        let active = SVGChart.bars(
            title: "Active users (signed in or refreshed a session)", labels: ["7 days", "30 days"],
            values: [Double(figures.active7Days), Double(figures.active30Days)], colour: "#2e7d4f")
        let minuteLabels = traffic.map { minuteLabel($0.start) }
        let requests = SVGChart.lines(
            title: "Requests and errors (5xx) per minute, last hour", labels: minuteLabels,
            series: [
                .init(name: "requests", colour: "#1f5fbf", values: traffic.map { Double($0.requests) }),
                .init(name: "errors", colour: "#b42318", values: traffic.map { Double($0.errors) }),
            ], labelEvery: 15)
        let latency = SVGChart.lines(
            title: "Latency per minute, last hour (without deliberately delayed refusals)", labels: minuteLabels,
            series: [
                .init(name: "p50", colour: "#1f5fbf", values: traffic.map(\.p50Milliseconds)),
                .init(name: "p99", colour: "#b26a00", values: traffic.map(\.p99Milliseconds)),
            ], labelEvery: 15, unit: "ms")
        let backup: HTML =
            status.lastBackup().map { backup in
                let size: HTML = backup.databaseBytes.map { " · \(byteText($0)) database backed up" } ?? .empty
                return """
                    <div class="tile"><span>Last backup</span>\
                    <strong>\(ConsoleFormat.dateHTML(backup.endedAt))</strong>\(size)</div>
                    """
            } ?? "<div class=\"tile\"><span>Last backup</span><strong>none yet</strong></div>"
        return .page(
            title: "Overview",
            body: """
                <div class="tiles">
                <div class="tile"><span>Database size</span><strong>\(byteText(figures.databaseBytes))</strong></div>
                \(backup)
                <div class="tile"><span>Active users, 7 / 30 days</span>\
                <strong>\(figures.active7Days) / \(figures.active30Days)</strong></div>
                </div>
                <div class="charts">\(signUps)\(active)\(requests)\(latency)</div>
                <p class="muted">Traffic is this server instance's, kept in memory since it started; latency percentiles
                are read from a histogram (within 30 %) and leave out the \(delayed) refusal(s) of the last hour that were
                answered after the deliberate refusal delay (limits, oversized bodies, refused sign-in links).</p>
                """)
    }

    static func byteText(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes), unit = 0
        while value >= 1024, unit < units.count - 1 { value /= 1024; unit += 1 }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f", value) + " " + units[unit]
    }

    private static func minuteLabel(_ date: Date) -> String {
        let minutes = Int(date.timeIntervalSince1970 / 60) % (24 * 60)
        return String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }
}
