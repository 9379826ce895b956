#!/usr/bin/env python3
"""Hostile traffic beside a legitimate client mix, for bench/fairuse.sh.

Usage: fairuse.py PORT ANON_KEY SECONDS [ATTACK ...]   (SCALE=3: every attack from 3 times the addresses)
Legitimate clients on 127.0.0.1 (keep-alive): quote pages, a category, one quote, a keyword search, a login, an
authenticated write (a favorite added and removed) and a few sign-ups. Each attack runs from several loopback source addresses (127.0.0.2, ...)
while the legitimate mix is measured for SECONDS. Prints one table row per phase: the legitimate requests' p50 and
p99, the 5xx among logins, sign-ups and writes, and what the attack got. Every loop is bounded by time and by a
fixed number of threads or sockets. Loopback only.
"""
import http.client
import json
import os
import random
import socket
import statistics
import string
import sys
import threading
import time
import uuid
from collections import Counter

HOST = "127.0.0.1"
PASSWORD = "correct horse battery"
CATEGORIES = ["wisdom", "love", "success", "motivation", "humor"]
WORDS = ["love", "life", "time", "truth", "friend", "heart", "world", "dream", "peace", "courage", "hope", "mind"]
SCALE = int(os.environ.get("SCALE", "1"))


def connection(source="127.0.0.1", timeout=10.0):
    return http.client.HTTPConnection(HOST, PORT, timeout=timeout, source_address=(source, 0))


def call(conn, method, path, body=None, headers=None):
    """One request on a keep-alive connection; (status, body bytes), status 0 when the connection failed."""
    payload = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    all_headers = dict(headers or {})
    if payload is not None and "Content-Type" not in all_headers:
        all_headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=payload, headers=all_headers)
        response = conn.getresponse()
        return response.status, response.read()
    except (OSError, http.client.HTTPException):
        conn.close()
        return 0, b""


def session(email, source="127.0.0.1"):
    """An access token for `email`: signs up, or logs in when the account exists."""
    conn = connection(source)
    for route in ("signup", "login"):
        status, body = call(conn, "POST", f"/v1/auth/{route}", {"email": email, "password": PASSWORD})
        if status in (200, 201):
            return json.loads(body)["access_token"]
    raise SystemExit(f"no session for {email} from {source}")


# ---- the legitimate mix -----------------------------------------------------------------------------------------

def legit_worker(stop, samples, failures, token, quote_ids, seed):
    """Pages, a category, an authenticated write and a login in turn, back to back until `stop`."""
    rng = random.Random(seed)
    conn = connection()
    auth = {"Authorization": f"Bearer {token}"}
    n = 0
    while not stop.is_set():
        n += 1
        kind = ("write", "login", "category", "page", "search", "page", "quote", "category")[n % 8]
        if kind == "search":
            method, path, body, headers = "GET", f"/v1/quotes/search?q={rng.choice(WORDS)}&page_size=20", None, {}
        elif kind == "quote":
            method, path, body, headers = "GET", f"/v1/quotes/{rng.choice(quote_ids)}", None, {}
        elif kind == "page":
            method, path, body, headers = "GET", f"/v1/quotes?page_size=20&page={rng.randint(1, 50)}", None, {}
        elif kind == "category":
            method, path, body, headers = "GET", f"/v1/quotes?category={rng.choice(CATEGORIES)}&page_size=20", None, {}
        elif kind == "write":
            method = "PUT" if (n // 8) % 2 == 0 else "DELETE"
            path, body, headers = f"/v1/favorites/{quote_ids[(n // 16 + seed) % len(quote_ids)]}", None, auth
        else:
            method, path, body, headers = "POST", "/v1/auth/login", {"email": f"legit{seed}@bench.local",
                                                                    "password": PASSWORD}, {}
        started = time.perf_counter()
        status, _ = call(conn, method, path, body, headers)
        samples.append((kind, time.perf_counter() - started, status))
        if status == 0 or status >= 500:
            failures[(kind, status)] += 1
        if status == 0:
            conn = connection()


def legit_signups(stop, samples, failures, count):
    """`count` sign-ups spread over the phase (sign-ups are throttled per address: a few per phase)."""
    conn = connection()
    for _ in range(count):
        if stop.wait(1.5):
            return
        email = f"signup-{uuid.uuid4().hex[:12]}@bench.local"
        started = time.perf_counter()
        status, _ = call(conn, "POST", "/v1/auth/signup", {"email": email, "password": PASSWORD})
        samples.append(("signup", time.perf_counter() - started, status))
        if status == 0 or status >= 500:
            failures[("signup", status)] += 1


# ---- the attacks ------------------------------------------------------------------------------------------------

def sources(count):
    """`count` × SCALE loopback addresses, 127.0.0.2 on (then 127.0.1.x, ...)."""
    return [f"127.0.{(1 + index) // 254}.{(1 + index) % 254 + 1}" for index in range(count * SCALE)]


def looping(stop, outcome, source, make):
    """Sends `make()` requests back to back on a keep-alive connection from `source` until `stop`."""
    conn = connection(source, timeout=15.0)
    while not stop.is_set():
        method, path, body, headers = make()
        status, _ = call(conn, method, path, body, headers)
        outcome[status] += 1
        if status == 0:
            conn = connection(source, timeout=15.0)
            stop.wait(0.05)


def rest_ilike(stop, outcome):
    """16 parallel `/rest/v1/quotes?text=ilike.*<198 characters>*` (the longest pattern allowed) from each of 3
    addresses, anon key."""
    def make():
        needle = "".join(random.choice(string.ascii_lowercase) for _ in range(198))
        return "GET", f"/rest/v1/quotes?select=id&text=ilike.*{needle}*", None, {"apikey": ANON,
                                                                                 "Authorization": f"Bearer {ANON}"}
    return [(source, make) for source in sources(3) for _ in range(16)]


def search_one_letter(stop, outcome):
    """2 one-letter keyword searches at once from each of 8 addresses, on pages no cache holds."""
    def make():
        return "GET", f"/v1/quotes/search?q={random.choice('aeiost')}&page={random.randint(2, 400)}", None, {}
    return [(source, make) for source in sources(8) for _ in range(2)]


def rest_bulk(stop, outcome):
    """Bulk writes through /rest/v1 (500 collections a request), 2 at once from each of 2 accounts' addresses."""
    jobs = []
    for source in sources(2):
        token = session(f"bulk-{source}@bench.local", source)
        user_id = json.loads(__import__("base64").urlsafe_b64decode(token.split(".")[1] + "=="))["sub"]

        def make(token=token, user_id=user_id):
            rows = [{"user_id": user_id, "name": f"c{uuid.uuid4().hex[:10]}"} for _ in range(500)]
            return "POST", "/rest/v1/collections", rows, {"apikey": ANON, "Authorization": f"Bearer {token}",
                                                          "Prefer": "return=minimal"}
        jobs += [(source, make)] * 2
    return jobs


def sync_batches(stop, outcome):
    """Sync batches of 500 operations, 2 at once from each of 4 accounts' addresses."""
    jobs = []
    for source in sources(4):
        token = session(f"sync-{source}@bench.local", source)

        def make(token=token):
            operations = [{"id": str(uuid.uuid4()), "op": "favorite.add" if i % 2 else "favorite.remove",
                           "quote_id": QUOTE_IDS[i % len(QUOTE_IDS)]} for i in range(500)]
            return "POST", "/v1/sync", {"operations": operations}, {"Authorization": f"Bearer {token}",
                                                                    "Idempotency-Key": str(uuid.uuid4())}
        jobs += [(source, make)] * 2
    return jobs


def reset_mail(stop, outcome):
    """Reset mails to ever new addresses on both doors, 2 at once from each of 3 addresses."""
    def make():
        email = f"victim-{uuid.uuid4().hex[:10]}@bench.local"
        if random.random() < 0.5:
            return "POST", "/v1/auth/password-reset", {"email": email}, {}
        return "POST", "/auth/v1/recover", {"email": email}, {"apikey": ANON}
    return [(source, make) for source in sources(3) for _ in range(2)]


def open_from(source, outcome, head=b""):
    """A non-blocking socket from `source` to the server that has sent `head`; None (counted as refused) when the
    server would not take it."""
    sock = socket.socket()
    try:
        sock.settimeout(1.0)
        sock.bind((source, 0))
        sock.connect((HOST, PORT))
        if head:
            sock.sendall(head)
        sock.setblocking(False)
        outcome["opened"] += 1
        return sock
    except OSError:
        outcome["refused"] += 1
        sock.close()
        return None


def stalled_uploads(stop, outcome, with_token):
    """64 uploads announcing 1 MiB that stall after a few bytes, from each of 4 addresses; reopens what the server
    closes. With `with_token`, each address has an account's token (admitted, then cut by the minimum rate)."""
    tokens = {source: session(f"stall-{source}@bench.local", source) if with_token else None for source in sources(4)}

    def holder(source):
        sockets = []
        while not stop.is_set():
            while len(sockets) < 64 and not stop.is_set():
                auth = f"Authorization: Bearer {tokens[source]}\r\n" if tokens[source] else ""
                head = (f"POST /storage/v1/object/avatars/x{uuid.uuid4().hex[:6]}.png HTTP/1.1\r\nHost: x\r\n"
                        f"apikey: {ANON}\r\n{auth}Content-Type: image/png\r\nContent-Length: {1 << 20}\r\n\r\n")
                sock = open_from(source, outcome, head.encode() + b"\x89PNG")
                if sock is None:
                    break
                sockets.append(sock)
            alive = []
            for sock in sockets:
                try:
                    data = sock.recv(4096)
                    outcome[int(data[9:12]) if data.startswith(b"HTTP/1.1 ") else "cut"] += 1
                    sock.close()
                except BlockingIOError:
                    alive.append(sock)
                except OSError:
                    outcome["cut"] += 1
                    sock.close()
            sockets = alive
            stop.wait(0.5)
        for sock in sockets:
            sock.close()
    return holder


def anon(extra=None):
    return {"apikey": ANON, "Authorization": f"Bearer {ANON}", **(extra or {})}


def rest_or(stop, outcome, spread=False):
    """F1: `or=(...600 branches)` with `Prefer: count=exact`, 6 at once from one address (or 1 from each of 6)."""
    def make():
        branches = ",".join(f"text.eq.w{random.randint(0, 99999):05d}" for _ in range(600))
        return "GET", f"/rest/v1/quotes?select=id&or=({branches})&limit=1", None, anon({"Prefer": "count=exact"})
    return [(source, make) for source in sources(6)] if spread else [(source, make) for source in sources(1)
                                                                           for _ in range(6)]


def rest_offset(stop, outcome):
    """F1: a deep offset sorted on unindexed columns, 6 at once from one address."""
    def make():
        return "GET", f"/rest/v1/quotes?select=id,text&order=text.desc,author&offset={random.randint(9000, 10000)}" \
            "&limit=1000", None, anon()
    return [(source, make) for source in sources(1) for _ in range(6)]


def rest_embed(stop, outcome):
    """F1: a signed-in user's collections embedded three deep, 6 at once from one address."""
    source = sources(1)[0]
    token = session(f"embed-{uuid.uuid4().hex[:6]}@bench.local", source)

    def make():
        return "GET", "/rest/v1/collections?select=id,collection_quotes(quote_id,collections(id,collection_quotes(" \
            "quote_id)))", None, {"apikey": ANON, "Authorization": f"Bearer {token}"}
    return [(source, make) for source in sources(1) for _ in range(6)]


def rest_fts(stop, outcome):
    """F3: negated full-text filters with a configuration, `count=exact`, 6 at once from one address."""
    def make():
        op = random.choice(["not.wfts(simple)", "fts(english)", "plfts", "not.phfts(simple)"])
        return "GET", f"/rest/v1/quotes?select=id&author={op}.zz{random.randint(0, 999)}q", None, \
            anon({"Prefer": "count=exact"})
    return [(source, make) for source in sources(1) for _ in range(6)]


def login_trickle(stop, outcome):
    """F2: 16 logins from each of 9 addresses announcing a 64 KiB body and sending it at 4.4 KB/s; reopens what
    the server closes."""
    def holder(source):
        sockets = {}
        payload = b'{"email":"x@bench.local","password":"' + b"p" * 65000
        head = ("POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                "Content-Length: 65536\r\n\r\n").encode()
        while not stop.is_set():
            while len(sockets) < 16 and not stop.is_set():
                sock = open_from(source, outcome, head)
                if sock is None:
                    break
                sockets[sock] = 0
            for sock in list(sockets):
                try:
                    data = sock.recv(4096)
                    outcome[int(data[9:12]) if data.startswith(b"HTTP/1.1 ") else "cut"] += 1
                    sock.close()
                    del sockets[sock]
                    continue
                except BlockingIOError:
                    pass
                except OSError:
                    outcome["cut"] += 1
                    sock.close()
                    del sockets[sock]
                    continue
                sent = sockets[sock]
                chunk = payload[sent:sent + 1100]  # 4.4 KB/s at 4 sends a second
                try:
                    if chunk:
                        sock.send(chunk)
                        sockets[sock] = sent + len(chunk)
                except OSError:
                    outcome["cut"] += 1
                    sock.close()
                    del sockets[sock]
            stop.wait(0.25)
        for sock in sockets:
            sock.close()
    return holder, 9


def idle_connections(stop, outcome):
    """F4: 125 idle connections (under the 128 per address) from each of 34 addresses; reopens what is closed."""
    def holder(source):
        sockets = []
        while not stop.is_set():
            while len(sockets) < 125 and not stop.is_set():
                sock = open_from(source, outcome)
                if sock is None:
                    break
                sockets.append(sock)
            alive = []
            for sock in sockets:
                try:
                    if sock.recv(1) == b"":
                        outcome["closed"] += 1
                        sock.close()
                    else:
                        alive.append(sock)
                except BlockingIOError:
                    alive.append(sock)
                except OSError:
                    outcome["closed"] += 1
                    sock.close()
            sockets = alive
            stop.wait(0.5)
        for sock in sockets:
            sock.close()
    return holder, 34


ATTACKS = {
    "rest-or": rest_or,
    "rest-or-spread": lambda stop, outcome: rest_or(stop, outcome, spread=True),
    "rest-offset": rest_offset,
    "rest-embed": rest_embed,
    "rest-fts": rest_fts,
    "login-trickle": login_trickle,
    "idle-connections": idle_connections,
    "rest-ilike": rest_ilike,
    "search": search_one_letter,
    "stall-anon": lambda stop, outcome: stalled_uploads(stop, outcome, False),
    "stall-user": lambda stop, outcome: stalled_uploads(stop, outcome, True),
    "sync-batches": sync_batches,
    "rest-bulk": rest_bulk,
    "reset-mail": reset_mail,
}


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def phase(name, seconds, token):
    stop, attack_stop = threading.Event(), threading.Event()
    outcome, samples, failures = Counter(), [], Counter()
    threads = []
    if name != "alone":
        plan = ATTACKS[name](attack_stop, outcome)
        if isinstance(plan, tuple):
            holder, addresses = plan
            threads = [threading.Thread(target=holder, args=(source,)) for source in sources(addresses)]
        elif callable(plan):
            threads = [threading.Thread(target=plan, args=(source,)) for source in sources(4)]
        else:
            threads = [threading.Thread(target=looping, args=(attack_stop, outcome, source, make))
                       for source, make in plan]
        for thread in threads:
            thread.start()
        time.sleep(2)  # the attack reaches its full force before the measurement
    workers = [threading.Thread(target=legit_worker, args=(stop, samples, failures, token, QUOTE_IDS, seed))
               for seed in range(4)]
    workers.append(threading.Thread(target=legit_signups, args=(stop, samples, failures, 2)))
    for worker in workers:
        worker.start()
    time.sleep(seconds)
    stop.set()
    for worker in workers:
        worker.join(timeout=20)
    attack_stop.set()
    for thread in threads:
        thread.join(timeout=20)
    latencies = [elapsed for _, elapsed, _ in samples]
    reads = [elapsed for kind, elapsed, _ in samples if kind in ("page", "category", "quote")]
    searches = [status for kind, _, status in samples if kind == "search"]
    searched = sum(1 for status in searches if 200 <= status < 300) / max(1, len(searches))
    slowest_vital = max((elapsed for kind, elapsed, _ in samples if kind in ("login", "signup", "write")), default=0)
    vital = sum(count for (kind, _), count in failures.items() if kind in ("login", "signup", "write"))
    answered = {str(key): count for key, count in sorted(outcome.items(), key=lambda item: str(item[0]))}
    return statistics.median(latencies) * 1000, percentile(latencies, 0.99) * 1000, len(samples), vital, \
        dict(failures), answered, (statistics.median(reads) * 1000, percentile(reads, 0.99) * 1000), searched, \
        slowest_vital


def main():
    global PORT, ANON, QUOTE_IDS
    PORT, ANON, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    names = sys.argv[4:] or list(ATTACKS)
    conn = connection()
    status, body = call(conn, "GET", "/v1/quotes?page_size=50")
    QUOTE_IDS = [quote["id"] for quote in json.loads(body)["items"]]
    for seed in range(4):
        session(f"legit{seed}@bench.local")
    token = session("legit-writer@bench.local")
    print(f"addresses per attack: x{SCALE}")
    print("| phase | legit requests | p50 ms | p99 ms | reads only: p50, p99 ms | searches 2xx | slowest login, "
          "sign-up or write s | 5xx (login, sign-up, write) | goal | attack answered |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    alone = None
    for name in ["alone"] + names:
        p50, p99, count, vital, failures, answered, reads, searched, slowest = phase(name, seconds, token)
        if alone is None:
            alone = (p50, p99)
        met = p50 <= max(10 * alone[0], 50) and p99 <= max(5 * alone[1], 500) and vital == 0 and slowest <= 5 \
            and searched >= 0.8
        print(f"| {name} | {count} | {p50:.1f} | {p99:.1f} | {reads[0]:.1f}, {reads[1]:.1f} | {searched:.0%} | "
              f"{slowest:.2f} | {vital} {failures or ''} | {'met' if met else 'MISSED'} | {answered} |", flush=True)


if __name__ == "__main__":
    main()
