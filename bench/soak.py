"""Paced mixed traffic against a running quote-server on 127.0.0.1, for bench/soak.sh.

A fixed number of requests per second (well below saturation), spread over worker threads with keep-alive
connections: quote pages, keyword and author searches, favorite add/remove, quote of the day and logins.
Every request is checked (2xx expected); the server's resident memory is sampled along the way.
Bounded: stops after --seconds, whatever happens.
"""
import argparse
import http.client
import json
import random
import threading
import time

from server_process import rss_kib


class Client:
    def __init__(self, port, token):
        self.port, self.token = port, token
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)

    def request(self, method, path, body=None, auth=False):
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if auth:
            headers["Authorization"] = f"Bearer {self.token}"
        data = json.dumps(body) if body is not None else None
        try:
            self.connection.request(method, path, body=data, headers=headers)
            response = self.connection.getresponse()
            response.read()
            return response.status
        except (OSError, http.client.HTTPException):
            self.connection.close()
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--email", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--quote-ids", required=True, help="file with one quote id per line")
    parser.add_argument("--rate", type=float, default=200, help="requests per second, all kinds together")
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()

    quote_ids = [line.strip() for line in open(args.quote_ids) if line.strip()]
    words = ["life", "love", "courage", "time", "truth", "friend", "dream", "world", "heart", "success"]
    authors = ["twain", "wilde", "einstein", "confucius", "seneca", "austen"]
    categories = ["wisdom", "humor", "success", "love", "motivation"]
    # The mix, by weight: mostly reads, some writes, a few logins (real scrypt cost).
    kinds = [("page", 30), ("category", 15), ("keyword", 15), ("author", 5), ("favorite", 20), ("qotd", 14), ("login", 1)]
    population = [kind for kind, weight in kinds for _ in range(weight)]

    counts, failures, lock = {}, {}, threading.Lock()
    deadline = time.monotonic() + args.seconds
    interval = args.threads / args.rate

    def worker(index):
        client = Client(args.port, args.token)
        rng = random.Random(index)
        next_at = time.monotonic() + rng.random() * interval
        while True:
            now = time.monotonic()
            if now >= deadline:
                return
            if next_at > now:
                time.sleep(min(next_at - now, deadline - now))
                continue
            next_at += interval
            kind = rng.choice(population)
            if kind == "page":
                status = client.request("GET", f"/v1/quotes?page={rng.randint(1, 50)}&page_size=20")
            elif kind == "category":
                status = client.request("GET", f"/v1/quotes?category={rng.choice(categories)}&page_size=10")
            elif kind == "keyword":
                status = client.request("GET", f"/v1/quotes/search?q={rng.choice(words)}&page_size=10")
            elif kind == "author":
                status = client.request("GET", f"/v1/quotes/search?type=author&q={rng.choice(authors)}&page_size=10")
            elif kind == "favorite":
                quote = rng.choice(quote_ids)
                method = "PUT" if rng.random() < 0.6 else "DELETE"
                status = client.request(method, f"/v1/favorites/{quote}", auth=True)
            elif kind == "qotd":
                status = client.request("GET", "/v1/qotd?tz=Europe/Paris")
            else:
                status = client.request("POST", "/v1/auth/login", body={"email": args.email, "password": args.password})
            with lock:
                counts[kind] = counts.get(kind, 0) + 1
                if not 200 <= status < 300:
                    failures[(kind, status)] = failures.get((kind, status), 0) + 1

    threads = [threading.Thread(target=worker, args=(index,)) for index in range(args.threads)]
    started = time.monotonic()
    samples = [(0, rss_kib(args.pid))]
    for thread in threads:
        thread.start()
    while time.monotonic() < deadline:
        time.sleep(min(args.seconds / 10, max(0.0, deadline - time.monotonic())))
        samples.append((round(time.monotonic() - started), rss_kib(args.pid)))
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started

    total = sum(counts.values())
    errors = sum(failures.values())
    print(f"requests: {total} in {elapsed:.0f} s ({total / elapsed:.0f}/s); errors: {errors} ({100 * errors / max(total, 1):.3f}%)")
    print("by kind: " + ", ".join(f"{kind} {count}" for kind, count in sorted(counts.items())))
    if failures:
        print("failures: " + ", ".join(f"{kind} {status}: {count}" for (kind, status), count in sorted(failures.items())))
    print("RSS (MiB) over time: " + ", ".join(f"{second}s {kib / 1024:.1f}" for second, kib in samples))
    print(f"RSS start {samples[0][1] / 1024:.1f} MiB, end {samples[-1][1] / 1024:.1f} MiB")
    raise SystemExit(1 if errors else 0)


if __name__ == "__main__":
    main()
