import AuthJWT
import QuoteVault

/// The owner's second factor: enrol a TOTP authenticator (the secret shown once, as text and as an otpauth URI),
/// confirmed by a code from the app before it is required at sign-in.
enum SecurityPages {
    static func show(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        if request.owner.hasSecondFactor {
            return .page(
                title: "Security",
                body: """
                    <p class="notice">A second factor is enrolled: every sign-in asks for a code from your
                    authenticator app.</p>
                    """)
        }
        return enrolment(request, secret: try TOTP.generateSecret(), message: nil, status: 200)
    }

    static func enrol(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        guard let secret = request.form["secret"].flatMap(Base32.decode), secret.count == TOTP.secretByteCount else {
            throw Failure.badRequest(
                code: "invalid_form", detail: "The secret of the form was changed; open the Security page again.")
        }
        let code = request.form["code"] ?? ""
        guard try await request.context.secondFactor.enrol(request.owner, secret: secret, code: code) else {
            return enrolment(
                request, secret: secret,
                message: "That code does not match; enter the current code "
                    + "your app shows for this secret.", status: 422)
        }
        return .redirect("/console/security")
    }

    private static func enrolment(_ request: ConsoleRequest, secret: [UInt8], message: String?, status: Int)
        -> ConsoleAnswer
    {
        let totp = TOTP(secret: secret)
        let error: HTML = message.map { "<p class=\"error\">\($0)</p>" } ?? .empty
        return .page(
            title: "Security",
            body: """
                <h2>Add a second factor</h2>
                <p>Add this secret to an authenticator app (TOTP, SHA-1, 6 digits, 30 seconds), then enter the code it
                shows. After that, every sign-in asks for a code.</p>
                <p class="secret">\(Base32.encode(secret))</p>
                <p class="muted">otpauth URI:</p><p class="secret">\(totp.provisioningURI(
                account: request.owner.email, issuer: "QuoteVault console"))</p>
                \(error)
                <form class="stack" method="post" action="/console/security/totp">\(request.csrfField)
                <input type="hidden" name="secret" value="\(Base32.encode(secret))">
                <label>Code from the app <input name="code" inputmode="numeric" autocomplete="one-time-code"
                maxlength="8" required></label>
                <button type="submit">Enrol</button></form>
                """, status: status)
    }
}
