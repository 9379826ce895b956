/// How log lines are written (`LOG_FORMAT`): JSON objects for collectors, or readable text for a terminal.
public enum LogFormat: String, Sendable {
    case json
    case text
}
