/// What the quote list confirms after a deletion: a fixed code in `?done=`, never text from the URL.
enum QuoteListNotice {
    static func of(_ request: ConsoleRequest) -> HTML {
        switch request.query("done") {
        case "deleted": "<p class=\"notice\" role=\"status\">The quote was deleted.</p>"
        default: .empty
        }
    }
}
