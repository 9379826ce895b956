import AuthJWT
import PGClient

extension Failure {
    /// The one place where any error becomes a `Failure`: the domain's own, the ones that know theirs
    /// (`FailureConvertible`), the database's (unavailability of every kind, quotas, refusals of what the client
    /// sent) and the token checks'. Anything else is a bug: `.internal`.
    public init(classifying error: any Error) {
        switch error {
        case let failure as Failure: self = failure
        case let convertible as any FailureConvertible: self = convertible.failure
        case is JWTError: self = .unauthorized
        case let recovery as RecoveryError:
            switch recovery {
            case .flowStateNotFound: self = .notFound
            case .flowStateExpired, .badCodeVerifier: self = .forbidden("The recovery flow is expired or invalid")
            case .samePassword: self = .invalid("password", "must differ from the old password")
            }
        case let reauthentication as ReauthenticationError:
            switch reauthentication {
            case .needed: self = .badRequest(code: "reauthentication_needed", detail: "Reauthenticate first")
            case .notValid: self = .invalid("nonce", "has expired or is invalid")
            case .tooSoon(let seconds): self = .rateLimited(retryAfterSeconds: seconds)
            }
        default:
            guard let error = error as? PGError else {
                self = .internal
                return
            }
            if let outage = error.outage {
                self = .databaseUnavailable(outage)
            } else if error.sqlState == "QV001" {
                // A quota of migration 0011, refused by the database whichever door wrote it.
                self = .quotaExceeded(quota: error.constraint ?? "quota", message: error.message)
            } else if error.kind == .server, let state = error.sqlState?.rawValue,
                let rejection = DatabaseRejection(
                    sqlState: state, message: error.message, detail: error.detail, hint: error.hint)
            {
                self = .rejectedByDatabase(rejection)
            } else {
                self = .internal
            }
        }
    }
}
