/// Why a console sign-in was refused (a throttled one is `QuoteVaultError.rateLimited`).
public enum OwnerSignInError: Error, Sendable, Equatable {
    /// The link is unknown, used or expired.
    case invalidLink
    /// The owner enrolled a second factor and no code came with the link.
    case codeRequired
    /// The code is wrong, or was already used.
    case wrongCode
}
