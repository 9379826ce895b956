/// The console's only stylesheet, served from the binary (the CSP allows styles from our own origin only; no
/// inline style, nothing fetched from elsewhere). Mobile first; wider screens get a row layout from 48em.
enum ConsoleStylesheet {
    static let path = "/console/static/console.css"

    static let bytes = Array((css + ConsolePageStyles.css).utf8)

    private static let css = """
        *, *::before, *::after { box-sizing: border-box; }
        html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 100%; }
        body { margin: 0; color: #1d2430; background: #f5f6f8; line-height: 1.45; }
        a { color: #1f5fbf; }
        .bar { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .6rem 1rem;
               background: #1d2430; color: #fff; }
        .bar a, .bar span { color: #fff; }
        .brand { font-weight: 700; text-decoration: none; margin-right: auto; }
        .bar nav ul { display: flex; flex-wrap: wrap; gap: .25rem .9rem; margin: 0; padding: 0; list-style: none; }
        .bar nav a { text-decoration: none; }
        .bar nav a[aria-current="page"] { text-decoration: underline; }
        .sign-out { display: flex; align-items: center; gap: .5rem; margin: 0; }
        .sign-out span { font-size: .85rem; opacity: .8; }
        main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
        h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
        h2 { font-size: 1.15rem; }
        table { width: 100%; border-collapse: collapse; background: #fff; }
        th, td { text-align: left; vertical-align: top; padding: .45rem .5rem; border-bottom: 1px solid #dde1e7; }
        th { font-size: .85rem; color: #4a5565; }
        /* Text wraps between words; a word breaks only when it alone is wider than its column. */
        td { overflow-wrap: break-word; }
        /* Machine text (JSON, user agents) is no prose: it may break anywhere rather than widen the table. */
        td code, td .muted { overflow-wrap: anywhere; }
        .date, .nowrap { white-space: nowrap; }
        .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
        td.select { width: 2rem; }
        form.stack { display: grid; gap: .75rem; max-width: 40rem; background: #fff; padding: 1rem;
                     border: 1px solid #dde1e7; border-radius: .4rem; }
        form.inline { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: 0 0 1rem; }
        label { display: grid; gap: .25rem; font-weight: 600; font-size: .9rem; }
        input, select, textarea, button { font: inherit; padding: .45rem .6rem; border: 1px solid #aab2bf;
                                          border-radius: .3rem; max-width: 100%; }
        input, select, textarea { font-weight: 400; }
        textarea { min-height: 6rem; width: 100%; }
        button, .button { background: #1f5fbf; color: #fff; border-color: #1f5fbf; cursor: pointer;
                          text-decoration: none; display: inline-block; padding: .45rem .9rem; border-radius: .3rem; }
        button.danger, .button.danger { background: #b42318; border-color: #b42318; }
        button.secondary, .button.secondary { background: #fff; color: #1d2430; border-color: #aab2bf; }
        .error { color: #b42318; font-weight: 600; }
        .notice { background: #e8f1fd; border: 1px solid #b6cff5; padding: .6rem .8rem; border-radius: .3rem; }
        .muted { color: #5b6574; font-size: .85rem; }
        .secret { font-family: ui-monospace, monospace; overflow-wrap: anywhere; background: #fff; padding: .5rem;
                  border: 1px dashed #aab2bf; }
        .qr { margin: 0 0 1rem; }
        .qr svg { width: 14rem; max-width: 100%; height: auto; display: block; }
        .pager { display: flex; gap: 1rem; margin: 1rem 0; }
        .row-bad td { background: #fdecea; }
        progress { width: 100%; height: 1.2rem; }
        .actions { white-space: nowrap; }
        @media (max-width: 47.99em) {
            table.cards thead { display: none; }
            table.cards tr { display: block; border-bottom: 2px solid #dde1e7; }
            table.cards td { display: block; border: 0; padding: .2rem .5rem; }
            table.cards td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; color: #4a5565; }
        }
        @media (min-width: 48em) {
            main { padding: 1.5rem 2rem; }
            /* The audit log's columns get the room their content needs: the JSON most, the date its own width. */
            table.audit { table-layout: fixed; font-size: .9rem; }
            table.audit th:nth-child(1) { width: 11rem; }
            table.audit th:nth-child(2) { width: 15%; }
            table.audit th:nth-child(3) { width: 12%; }
            table.audit th:nth-child(4) { width: 10%; }
            table.audit th:nth-child(5), table.audit th:nth-child(6) { width: 15%; }
            h1 { font-size: 1.75rem; }
        }
        """
}
