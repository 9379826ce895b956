import AuthJWT
import Foundation
import QRCode
import QuoteVault

/// The owner's own security: the TOTP second factor (enrolled, or replaced by a fresh enrolment; the secret shown
/// once, as text and as an otpauth URI, confirmed by a code from the app before it counts), and their console
/// sessions, of which they can end the others.
enum SecurityPages {
    static func show(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        let sessions = try await OwnerSessionList.html(request)
        if request.owner.hasSecondFactor && request.query("replace") != "1" {
            let notice: HTML =
                request.query("done") == "second_factor"
                ? "<p class=\"notice\" role=\"status\">Your second factor is saved.</p>" : .empty
            return .page(
                title: "Security",
                body: """
                    \(notice)<p class="notice">A second factor is enrolled: every sign-in asks for a code from your
                    authenticator app.</p>
                    <p><a class="button secondary" href="/console/security?replace=1">Replace the second factor…</a></p>
                    \(sessions)
                    """)
        }
        return enrolment(request, secret: try TOTP.generateSecret(), message: nil, status: 200, sessions: sessions)
    }

    static func enrol(_ request: ConsoleRequest) async throws -> ConsoleAnswer {
        guard let secret = request.form["secret"].flatMap(Base32.decode), secret.count == TOTP.secretByteCount else {
            throw Failure.badRequest(
                code: "invalid_form", detail: "The secret of the form was changed; open the Security page again.")
        }
        let code = request.form["code"] ?? ""
        let currentCode = request.form["replace"] == "1" ? request.form["current_code"] ?? "" : nil
        do {
            try await request.context.secondFactor.enrol(
                request.owner, secret: secret, code: code, currentCode: currentCode)
        } catch let refusal as OwnerSecondFactor.Refusal {
            let message =
                refusal == .wrongCode
                ? "That code does not match; enter the current code your app shows for this secret."
                : "The code of your current authenticator does not match; nothing was changed."
            return enrolment(
                request, secret: secret, message: message, status: 422,
                sessions: try await OwnerSessionList.html(request))
        }
        return .redirect("/console/security?done=second_factor")
    }

    /// Replacing asks for a code of the authenticator enrolled now, too.
    private static let currentCodeField: HTML = """
        <input type="hidden" name="replace" value="1">
        <label>Code from your current authenticator <input name="current_code" inputmode="numeric"
        autocomplete="one-time-code" maxlength="8" required></label>
        """

    /// The otpauth URI as a QR code an authenticator app scans; drawn here as SVG (no script, no other service).
    /// A URI too long for one (an email near 600 bytes) leaves the text to type.
    private static func qrCode(_ uri: String) -> HTML {
        guard let code = try? QRCode(text: uri, correction: .medium) else { return .empty }
        return HTML(
            rendered: "<figure class=\"qr\" role=\"img\" aria-label=\"QR code of the otpauth URI below\">"
                + code.svg() + "</figure>")
    }

    private static func enrolment(
        _ request: ConsoleRequest, secret: [UInt8], message: String?, status: Int, sessions: HTML
    ) -> ConsoleAnswer {
        let uri = TOTP(secret: secret).provisioningURI(account: request.owner.email, issuer: "QuoteVault console")
        let error: HTML = message.map { "<p class=\"error\">\($0)</p>" } ?? .empty
        let replacing = request.owner.hasSecondFactor
        let heading: HTML =
            replacing
            ? """
            <h2>Replace your second factor</h2>
            <p>Your current authenticator keeps working until this new secret is confirmed with a code of each.</p>
            """
            : "<h2>Add a second factor</h2>"
        return .page(
            title: "Security",
            body: """
                \(heading)
                <p>Add this secret to an authenticator app (TOTP, SHA-1, 6 digits, 30 seconds), then enter the code it
                shows. After that, every sign-in asks for a code.</p>
                \(qrCode(uri))<p class="secret">\(Base32.encode(secret))</p>
                <p class="muted">otpauth URI:</p><p class="secret">\(uri)</p>
                \(error)
                <form class="stack" method="post" action="/console/security/totp">\(request.csrfField)
                <input type="hidden" name="secret" value="\(Base32.encode(secret))">\(
                replacing ? currentCodeField : HTML.empty)
                <label>Code from the \(replacing ? "new " : "")app <input name="code" inputmode="numeric" autocomplete="one-time-code"
                maxlength="8" required></label>
                <button type="submit">\(replacing ? "Replace" : "Enrol")</button></form>
                \(sessions)
                """, status: status)
    }
}
