#!/usr/bin/env python3
"""Times each console page for one signed-in owner: REQUESTS requests per page in turn, time to first byte (the
server's time on loopback; exports to their last byte). Prints a table of p50/p99 in ms and the status codes.

Usage: console-pages.py PORT DATABASE_URL SIGN_IN_LINK REQUESTS
"""
import http.client
import statistics
import subprocess
import sys
import time
import urllib.parse


def sql(url, query):
    return subprocess.run(["psql", "-XAtq", url, "-c", query], check=True, capture_output=True,
                          text=True, timeout=60).stdout.strip()


def sign_in(port, link):
    token = urllib.parse.parse_qs(urllib.parse.urlparse(link).query)["token"][0]
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("POST", "/console/sign-in", body=urllib.parse.urlencode({"token": token}),
                       headers={"Content-Type": "application/x-www-form-urlencoded"})
    response = connection.getresponse()
    response.read()
    cookie = response.getheader("Set-Cookie")
    if response.status != 303 or not cookie:
        sys.exit(f"sign-in failed: {response.status}")
    return cookie.split(";")[0]


def timed(connection, path, cookie, whole):
    """(milliseconds, status): to the first byte of the answer, or to its last when `whole`."""
    start = time.perf_counter()
    connection.request("GET", path, headers={"Cookie": cookie})
    response = connection.getresponse()
    first = time.perf_counter()
    response.read()
    end = time.perf_counter()
    return ((end if whole else first) - start) * 1000, response.status


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def main():
    port, url, link, requests = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    cookie = sign_in(port, link)
    quote = sql(url, "SELECT id FROM quotes ORDER BY created_at DESC OFFSET 50000 LIMIT 1")
    account = sql(url, "SELECT id FROM users WHERE email LIKE 'bench-user-%' ORDER BY email LIMIT 1")
    day = sql(url, "SELECT to_char(current_date + 3, 'YYYY-MM-DD')")
    total = int(sql(url, "SELECT count(*) FROM quotes"))
    last = (total + 24) // 25
    pages = [
        ("overview", "/console", False),
        ("quotes", "/console/quotes", False),
        ("quotes, middle page", f"/console/quotes?page={last // 2}", False),
        ("quotes, last page", f"/console/quotes?page={last}", False),
        ("quotes by favorites", "/console/quotes?sort=favorites&dir=desc", False),
        ("quotes by text, page 2000", "/console/quotes?sort=text&page=2000", False),
        ("quotes by author, page 2000", "/console/quotes?sort=author&page=2000", False),
        ("quotes, a category", "/console/quotes?category=wisdom", False),
        ("quotes, a search", "/console/quotes?q=love", False),
        ("quote edit", f"/console/quotes/{quote}/edit", False),
        ("quote delete", f"/console/quotes/{quote}/delete", False),
        ("import", "/console/quotes/import", False),
        ("accounts", "/console/accounts", False),
        ("accounts, page 100", "/console/accounts?page=100", False),
        ("accounts, a search", "/console/accounts?q=user-77", False),
        ("account", f"/console/accounts/{account}", False),
        ("audit", "/console/audit", False),
        ("audit, page 1000", "/console/audit?page=1000", False),
        ("audit, a search", "/console/audit?q=row%2099", False),
        ("qotd calendar", "/console/qotd", False),
        ("qotd day", f"/console/qotd/{day}", False),
        ("security", "/console/security", False),
        ("export CSV, a category (whole)", "/console/quotes/export.csv?category=humor", True),
    ]
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    print(f"{'page':34} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}  statuses")
    over = []
    deadline = time.monotonic() + 600
    for name, path, whole in pages:
        times, statuses = [], {}
        timed(connection, path, cookie, whole)  # warm: the first request plans the statements
        for _ in range(requests if not whole else max(3, requests // 10)):
            if time.monotonic() > deadline:
                break
            elapsed, status = timed(connection, path, cookie, whole)
            times.append(elapsed)
            statuses[status] = statuses.get(status, 0) + 1
        p50, p99 = statistics.median(times), percentile(times, 0.99)
        print(f"{name:34} {p50:8.1f} {p99:8.1f} {max(times):8.1f}  {statuses}")
        if p99 >= 200 and not whole:
            over.append(name)
    print("pages with p99 >= 200 ms: " + (", ".join(over) if over else "none"))


if __name__ == "__main__":
    main()
