import HTTPServer

/// What a console handler answers; `ConsolePipeline` turns it into a response with the console's headers.
enum ConsoleAnswer: Sendable {
    /// A page inside the console's layout.
    case page(title: String, body: HTML, status: Int = 200, refreshSeconds: Int? = nil)
    /// A page outside the layout's navigation (sign-in), for visitors without a session. A `refusal` (a sign-in
    /// link refused) is sent after `HTTP_REFUSAL_DELAY`, so a client guessing links pays with time.
    case bare(title: String, body: HTML, status: Int = 200, refusal: Bool = false)
    /// `303 See Other`: after a form post (POST-redirect-GET), or to sign in.
    case redirect(String, setCookie: String? = nil)
    /// A static file of the console (the stylesheet), or a download (an export) saved as `download`.
    case file(contentType: String, bytes: [UInt8], download: String? = nil)
    /// A download written while it is read (`DownloadStream`): `write` runs after the headers are sent.
    case download(contentType: String, filename: String, write: @Sendable (DownloadStream) async throws -> Void)
}
