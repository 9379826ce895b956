import HTTPServer
import QuoteVault

/// GoTrue's error answer: both the current body (`code`, `message`) and the legacy one (`error_code`, `msg`),
/// and the `X-Supabase-Api-Version` header without which supabase-py ignores `code` and supabase-swift cannot
/// tell a session error from any other.
struct GoTrueError: Error {
    var status: Int
    var code: String
    var message: String
    var headers: [String: String] = [:]
    /// For `weak_password`: why (GoTrue's `reasons`).
    var weakPasswordReasons: [String]? = nil

    static let apiVersionHeader = ("X-Supabase-Api-Version", "2024-01-01")

    var response: Response {
        var writer = JSONWriter(capacity: 256)
        writer.raw("{")
        writer.key("code"); writer.string(code); writer.comma()
        writer.key("error_code"); writer.string(code); writer.comma()
        writer.key("msg"); writer.string(message); writer.comma()
        writer.key("message"); writer.string(message)
        if let weakPasswordReasons {
            writer.comma(); writer.key("weak_password"); writer.raw("{"); writer.key("reasons")
            writer.array(weakPasswordReasons) { $0.string($1) }
            writer.raw("}")
        }
        writer.raw("}")
        var response = Response.json(bytes: writer.bytes, status: status)
        response.headers.set(Self.apiVersionHeader.0, Self.apiVersionHeader.1)
        for (name, value) in headers { response.headers.set(name, value) }
        return response
    }

    static let noAuthorization = GoTrueError(
        status: 401, code: "no_authorization", message: "This endpoint requires a Bearer token")
    static let badJWT = GoTrueError(
        status: 403, code: "bad_jwt",
        message: "invalid JWT: unable to parse or verify signature, token is expired or revoked")

    static func from(_ error: RecoveryError) -> GoTrueError {
        let (status, code, message) =
            switch error {
            case .flowStateNotFound: (404, "flow_state_not_found", "invalid flow state, no valid flow state found")
            case .flowStateExpired: (403, "flow_state_expired", "invalid flow state, flow state has expired")
            case .badCodeVerifier:
                (403, "bad_code_verifier", "code challenge does not match previously saved code verifier")
            case .samePassword: (422, "same_password", "New password should be different from the old password.")
            }
        return GoTrueError(status: status, code: code, message: message)
    }

    /// GoTrue's answer for `failure`; where GoTrue pins a status of its own for an auth error (400 for bad
    /// credentials, 403 for a bad JWT, 422 for a taken email), the clients expect that one.
    static func from(_ failure: Failure) -> GoTrueError {
        if case .validation(let fields) = failure, let password = fields.first(where: { $0.field == "password" }) {
            return GoTrueError(
                status: 422, code: "weak_password", message: "Password \(password.message)",
                weakPasswordReasons: ["length"])
        }
        let (status, code, message) =
            switch failure {
            case .validation(let fields):
                (
                    400, "validation_failed",
                    fields.contains(where: { $0.field == "email" })
                        ? "Unable to validate email address: invalid format"
                        : fields.map { "\($0.field) \($0.message)" }.joined(separator: "; ")
                )
            case .badRequest("invalid_json", _): (400, "bad_json", "Could not parse request body as JSON")
            case .badRequest(_, let detail): (400, "validation_failed", detail)
            case .emailExists: (422, "user_already_exists", "User already registered")
            case .invalidCredentials: (400, "invalid_credentials", "Invalid login credentials")
            case .refreshTokenInvalid:
                (400, "refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found")
            case .refreshTokenReused: (400, "refresh_token_already_used", "Invalid Refresh Token: Already Used")
            case .userBanned: (400, "user_banned", "User is banned")
            case .unauthorized: (badJWT.status, badJWT.code, badJWT.message)
            case .resetTokenInvalid: (403, "otp_expired", "Token has expired or is invalid")
            case .unsupportedMediaType(let detail): (415, "validation_failed", detail)
            case .payloadTooLarge: (413, "request_too_large", "Request body too large")
            case .rateLimited: (429, "over_request_rate_limit", "Request rate limit reached")
            case .internal: (500, "unexpected_failure", "Unexpected failure")
            default: (failure.status, failure.code, ProblemJSON.problem(failure).detail ?? "")
            }
        var error = GoTrueError(status: status, code: code, message: message)
        if let seconds = failure.retryAfterSeconds { error.headers["Retry-After"] = String(seconds) }
        return error
    }

    /// GoTrue's answers for the secure password change.
    static func from(_ error: ReauthenticationError) -> GoTrueError {
        let (status, code, message) =
            switch error {
            case .needed: (400, "reauthentication_needed", "Password update requires reauthentication")
            case .notValid: (422, "reauthentication_not_valid", "Nonce has expired or is invalid")
            case .tooSoon(let seconds):
                (
                    429, "over_email_send_rate_limit",
                    "For security purposes, you can only request this after \(seconds) seconds."
                )
            }
        var answer = GoTrueError(status: status, code: code, message: message)
        // Every 429 says when to come back (RFC 6585 §4), the e-mail throttle's as much as the rate limits'.
        if case .tooSoon(let seconds) = error { answer.headers["Retry-After"] = String(max(1, seconds)) }
        return answer
    }
}

/// `/auth/v1`'s dialect: GoTrue's bodies, with the API version header on every answer.
struct GoTrueDialect: ErrorDialect {
    func render(_ failure: Failure, thrown: any Error, for request: Request) -> Response {
        switch thrown {
        case let error as GoTrueError: error.response
        case let refusal as SupabaseCaller.Refusal:
            (refusal == .missingKey ? GoTrueError.noAuthorization : .badJWT).response
        case let error as RecoveryError: GoTrueError.from(error).response
        case let error as ReauthenticationError: GoTrueError.from(error).response
        // A body missing a field (not the domain's verdict on a password or an email): GoTrue's 400.
        case let error as HTTPError where error.status == 422:
            GoTrueError(status: 400, code: "validation_failed", message: error.detail ?? error.title).response
        default: GoTrueError.from(failure).response
        }
    }
}
