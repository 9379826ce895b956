/// Failures to start the server.
public enum HTTPServerError: Error, CustomStringConvertible {
    case invalidHost(String)
    case couldNotStart(host: String, port: Int)

    public var description: String {
        switch self {
        case .invalidHost(let host): return "HOST \(host) is not an IPv4 address"
        case .couldNotStart(let host, let port): return "could not listen on \(host):\(port) (in use or not permitted)"
        }
    }
}
