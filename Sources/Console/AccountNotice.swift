import QuoteVault

/// What an account page confirms after an action: fixed codes in `?done=`, each with fixed text, so nobody can put
/// words of theirs into the console's trusted notice.
enum AccountNotice: String {
    case banned, enabled
    case resetSent = "reset_sent"
    case resetCapped = "reset_capped"

    var text: String {
        switch self {
        case .banned: "The account is disabled: its sessions ended, its tokens are refused and it cannot sign in."
        case .enabled: "The account is enabled again: the user can sign in."
        case .resetSent: "A password-reset mail is on its way; its link works once, for an hour."
        case .resetCapped:
            "No mail was sent: this address already had \(RateLimiter.resetsPerEmail.limit) reset mails within the "
                + "hour, the most it gets. Try again later."
        }
    }

    /// A refusal is shown as an error, not as a success.
    var style: String {
        switch self {
        case .resetCapped: "error"
        default: "notice"
        }
    }

    /// The notice for the code `done`, or nothing for any other text.
    static func of(_ done: String?) -> HTML {
        guard let notice = done.flatMap(AccountNotice.init(rawValue:)) else { return .empty }
        return "<p class=\"\(notice.style)\" role=\"status\">\(notice.text)</p>"
    }
}
