/// The styles of the calendar, the overview's charts and the account pages, served with the console's stylesheet.
enum ConsolePageStyles {
    static let css = """

        .tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(12rem, 1fr)); gap: .75rem;
                 margin-bottom: 1rem; }
        .tile { background: #fff; border: 1px solid #dde1e7; border-radius: .4rem; padding: .75rem; }
        .tile span { display: block; font-size: .85rem; color: #4a5565; }
        .tile strong { font-size: 1.3rem; }
        .charts { display: grid; gap: 1rem; }
        figure.chart { margin: 0; background: #fff; border: 1px solid #dde1e7; border-radius: .4rem; padding: .75rem;
                       min-width: 0; }
        figure.chart figcaption { font-weight: 600; margin-bottom: .5rem; }
        figure.chart > svg { display: block; width: 100%; height: auto; }
        .legend { display: flex; gap: 1rem; list-style: none; margin: .5rem 0 0; padding: 0; font-size: .85rem; }
        svg.key { width: .8rem; height: .8rem; vertical-align: middle; }
        .month-nav { align-items: center; flex-wrap: wrap; }
        .weekdays { display: none; }
        .calendar { list-style: none; margin: 0; padding: 0; display: grid; gap: .4rem; }
        .day { background: #fff; border: 1px solid #dde1e7; border-radius: .3rem; padding: .4rem .5rem;
               font-size: .85rem; min-width: 0; overflow-wrap: anywhere; }
        .day.blank { display: none; }
        .day.frozen { background: #eef0f3; }
        .day.today { border-color: #1f5fbf; border-width: 2px; }
        .day.pinned { border-color: #b26a00; }
        .badge { font-size: .75rem; background: #b26a00; color: #fff; border-radius: .2rem; padding: 0 .3rem; }
        .badge.muted { background: #8a94a3; color: #fff; }
        blockquote.card { background: #fff; border-left: 4px solid #1f5fbf; margin: 0 0 1rem; padding: .75rem 1rem; }
        blockquote.card code { overflow-wrap: anywhere; }
        dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; background: #fff;
                   padding: .75rem 1rem; border: 1px solid #dde1e7; border-radius: .4rem; }
        dl.facts dd { margin: 0; }
        @media (max-width: 47.99em) {
            table.cards td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; color: #4a5565; }
        }
        @media (min-width: 48em) {
            .charts { grid-template-columns: 1fr 1fr; }
            .weekdays, .calendar { display: grid; grid-template-columns: repeat(7, minmax(0, 1fr)); gap: .4rem; }
            .weekdays { list-style: none; margin: 0 0 .3rem; padding: 0; font-size: .8rem; color: #4a5565; }
            .day { min-height: 7rem; }
            .day.blank { display: block; visibility: hidden; }
        }
        """
}
