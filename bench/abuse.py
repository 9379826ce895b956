#!/usr/bin/env python3
"""The attacks of issue 16, from 127.0.0.2 against a server on 127.0.0.1, for bench/abuse.sh.

Usage: abuse.py ATTACK PORT SECONDS [TOKEN]
Every loop is bounded: by SECONDS of wall time and by a fixed number of sockets or workers. Loopback only.
Prints one line: what the attack sent and how the server answered.
"""
import json
import os
import random
import socket
import string
import sys
import threading
import time
from collections import Counter

SOURCE = "127.0.0.2"
HOST = "127.0.0.1"


def connect(port, timeout=5.0):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.bind((SOURCE, 0))
    sock.connect((HOST, port))
    return sock


def status_of(sock):
    """Reads a response's status (and drains what arrived); 0 when closed without one."""
    try:
        data = sock.recv(65536)
    except OSError:
        return 0
    if not data.startswith(b"HTTP/1.1 "):
        return 0
    return int(data[9:12])


def request(port, method, path, body=None, headers=None):
    """One request on a new connection; its status, or 0 when refused or cut off."""
    try:
        sock = connect(port)
    except OSError:
        return 0
    try:
        payload = body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else b"")
        head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {len(payload)}\r\n"
        if body is not None:
            head += "Content-Type: application/json\r\n"
        for name, value in (headers or {}).items():
            head += f"{name}: {value}\r\n"
        sock.sendall(head.encode() + b"\r\n" + payload)
        return status_of(sock)
    except OSError:
        return 0
    finally:
        sock.close()


def slowloris(port, seconds, count=1500):
    """Holds up to `count` connections, each sending one header byte every 2 s; reopens what the server closes."""
    deadline = time.monotonic() + seconds
    line = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: "
    sockets, opened, refused, closed = [], 0, 0, 0
    while time.monotonic() < deadline:
        while len(sockets) < count and time.monotonic() < deadline:
            try:
                sock = connect(port, timeout=1.0)
                sock.sendall(line[:10])
                sockets.append(sock)
                opened += 1
            except OSError:
                refused += 1
                break
        alive = []
        for sock in sockets:
            try:
                sock.sendall(b"a")
                alive.append(sock)
            except OSError:
                closed += 1
                sock.close()
        sockets = alive
        time.sleep(min(2.0, max(0.0, deadline - time.monotonic())))
    for sock in sockets:
        sock.close()
    return f"opened {opened}, refused {refused}, closed by the server {closed}, held at the end {len(sockets)}"


def stalled_uploads(port, seconds, token, count=300):
    """`count` avatar uploads announcing 2 MiB (the route's limit) that send 64 KiB and stall: half anonymous, half
    with a valid token (those are admitted and count against the body budget)."""
    deadline = time.monotonic() + seconds
    statuses, sockets, opened = Counter(), [], 0
    chunk = b"\x89PNG\r\n\x1a\n" + os.urandom(64 * 1024 - 8)
    while time.monotonic() < deadline:
        while len(sockets) < count and time.monotonic() < deadline:
            try:
                sock = connect(port, timeout=1.0)
            except OSError:
                statuses["refused"] += 1
                break
            auth = f"Authorization: Bearer {token}\r\n" if opened % 2 else ""
            head = f"PUT /v1/me/avatar HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: image/png\r\nContent-Length: {2 * 1024 * 1024}\r\n\r\n"
            try:
                sock.sendall(head.encode())
                sock.setblocking(False)
                try:
                    sock.send(chunk)
                except BlockingIOError:
                    pass
                sockets.append(sock)
                opened += 1
            except OSError:
                statuses["cut"] += 1
                sock.close()
        alive = []
        for sock in sockets:
            try:
                data = sock.recv(4096)
                if data.startswith(b"HTTP/1.1 "):
                    statuses[int(data[9:12])] += 1
                sock.close()
            except BlockingIOError:
                alive.append(sock)
            except OSError:
                statuses["cut"] += 1
                sock.close()
        sockets = alive
        time.sleep(0.5)
    for sock in sockets:
        sock.close()
    return f"uploads started {opened}; answers {dict(statuses)}"


def flood(port, seconds, make, workers=70):
    """`workers` threads sending `make()` requests back to back until the time is up."""
    deadline = time.monotonic() + seconds
    statuses, lock = Counter(), threading.Lock()

    def work():
        while time.monotonic() < deadline:
            status = request(port, *make())
            with lock:
                statuses[status] += 1

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return f"{sum(statuses.values())} requests; statuses {dict(sorted(statuses.items(), key=lambda item: str(item[0])))}"


def random_text(length):
    return "".join(random.choice(string.ascii_lowercase) for _ in range(length))


def main():
    attack, port, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    token = sys.argv[4] if len(sys.argv) > 4 else ""
    if attack == "slowloris":
        print(slowloris(port, seconds))
    elif attack == "stalled-uploads":
        print(stalled_uploads(port, seconds, token))
    elif attack == "reset-flood":
        token_text = lambda: "".join(random.choice(string.ascii_letters + string.digits) for _ in range(43))
        print(flood(port, seconds, lambda: ("POST", "/v1/auth/password-reset/confirm", {"token": token_text(), "password": "new password!"})))
    elif attack == "signup-flood":
        print(flood(port, seconds, lambda: ("POST", "/v1/auth/signup", {"email": f"{random_text(12)}@flood.local", "password": "password!"})))
    elif attack == "search-patterns":
        # The longest /v1 search query allowed (200 characters), 8 clients looping.
        print(flood(port, seconds, lambda: ("GET", "/v1/quotes/search?q=" + random_text(200)), workers=8))
    elif attack == "rest-ilike":
        # A long PostgREST ilike pattern full of wildcards (bounded by the Supabase surface's own pattern limits).
        print(flood(port, seconds, lambda: (
            "GET", "/rest/v1/quotes?select=id&text=ilike.*" + "%25_".join(random_text(3) for _ in range(2000)) + "*", None,
            {"apikey": os.environ.get("ANON_KEY", "")}), workers=8))
    elif attack == "amplification":
        # Bodies at the 1 MiB limit of JSON routes (deep nesting, long strings) and 30 KB of headers.
        deep = b"[" * 300_000 + b"]" * 300_000
        long_string = json.dumps({"email": "a@b.c", "password": "x" * 1_000_000}).encode()[: 1 << 20]
        print(flood(port, seconds, lambda: random.choice([
            ("POST", "/v1/auth/login", deep),
            ("POST", "/v1/auth/login", long_string),
            ("GET", "/v1/quotes?page_size=100", None, {"X-Pad": "p" * 30_000}),
        ]), workers=16))
    else:
        raise SystemExit(f"unknown attack {attack}")
    used = os.times()
    print(f"    attacker CPU {used.user + used.system:.1f} s in {seconds:.0f} s")


if __name__ == "__main__":
    main()
