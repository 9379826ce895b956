/// Where the request being served comes from, for per-address throttles and the hashing queue's fair share.
/// The HTTP layer binds it around each handler, so services reached through any API see it.
public enum RequestOrigin {
    /// The client's IP address as text; nil outside a request.
    @TaskLocal public static var clientAddress: String?
}
