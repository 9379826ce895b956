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
        case let conflict as ConflictError: self = .conflict(conflict.detail)
        case is SyncTokenExpired: self = .syncTokenExpired
        case let quota as QuotaExceeded: self = .quotaExceeded(quota: quota.quota, message: quota.message)
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
            if let outage = DatabaseUnavailable(error) {
                self = .databaseUnavailable(outage.reason)
            } else if let quota = QuotaExceeded(error) {
                self = .quotaExceeded(quota: quota.quota, message: quota.message)
            } else if let error = error as? PGError, error.kind == .server, let state = error.sqlState?.rawValue,
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
