"""Live changes (GET /v1/sync/events): what idle streams cost and how soon a committed write reaches its stream.

Opens STREAMS idle streams spread over USERS users and ADDRESSES loopback addresses (127.0.0.1, .2, ...), reads the
server's RSS before and after (RSS per stream), then WRITES favorite writes (PUT and DELETE in turn, each by a user
picked in turn) and times each from the write's request and from its answer to the `changed` event on one of the
user's streams. Prints the figures; every wait is bounded.

Usage: python3 bench/live-feed.py PORT SERVER_PID TOKENS_FILE QUOTE_ID  (tokens: one access token a line)
Environment: STREAMS (1000), ADDRESSES (10), WRITES (300).
"""

import http.client
import os
import selectors
import socket
import statistics
import sys
import time

from server_process import cpu_seconds, rss_kib

port, pid, tokens_file, quote = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
tokens = [line.strip() for line in open(tokens_file) if line.strip()]
streams_wanted = int(os.environ.get("STREAMS", "1000"))
addresses = int(os.environ.get("ADDRESSES", "10"))
writes = int(os.environ.get("WRITES", "300"))


def open_stream(token, source):
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    sock.sendall(
        f"GET /v1/sync/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        f"Authorization: Bearer {token}\r\n\r\n".encode())
    data = b""
    while b"changed" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise RuntimeError("stream closed at open: " + data.decode(errors="replace"))
        data += chunk
    if not data.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(data.decode(errors="replace"))
    sock.setblocking(False)
    return sock


def settle():
    time.sleep(2)
    return rss_kib(pid)


before = settle()
streams = []
by_user = {}
started = time.monotonic()
for index in range(streams_wanted):
    user = index % len(tokens)
    sock = open_stream(tokens[user], f"127.0.0.{index % addresses + 1}")
    streams.append(sock)
    by_user.setdefault(user, sock)
opened = time.monotonic() - started
after = settle()
idle_cpu = cpu_seconds(pid)
time.sleep(5)
idle_cpu = cpu_seconds(pid) - idle_cpu
print(f"streams open: {len(streams)} from {addresses} addresses, {len(tokens)} users, opened in {opened:.1f} s")
print(f"RSS: {before / 1024:.1f} MiB before, {after / 1024:.1f} MiB with the streams: "
      f"{(after - before) / len(streams):.1f} KiB per stream")
print(f"server CPU while the streams sit idle: {idle_cpu:.2f} s over 5 s")

selector = selectors.DefaultSelector()
for user, sock in by_user.items():
    selector.register(sock, selectors.EVENT_READ, user)


def drain(deadline):
    """Reads every stream's waiting bytes; returns users that got a `changed` event, with the time it came."""
    arrived = {}
    while time.monotonic() < deadline:
        events = selector.select(timeout=max(0, deadline - time.monotonic()))
        if not events:
            break
        now = time.monotonic()
        for key, _ in events:
            try:
                data = key.fileobj.recv(65536)
            except BlockingIOError:
                continue
            if b"event: changed" in data:
                arrived[key.data] = now
        if arrived:
            return arrived
    return arrived


drain(time.monotonic() + 1)
from_request, from_answer, missed = [], [], 0
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
for index in range(writes):
    user = index % len(by_user)
    method = "PUT" if (index // len(by_user)) % 2 == 0 else "DELETE"
    sent = time.monotonic()
    connection.request(method, f"/v1/favorites/{quote}", headers={"Authorization": f"Bearer {tokens[user]}"})
    response = connection.getresponse()
    response.read()
    answered = time.monotonic()
    arrived = drain(answered + 5)
    if user not in arrived:
        missed += 1
        continue
    from_request.append((arrived[user] - sent) * 1000)
    from_answer.append((arrived[user] - answered) * 1000)


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


print(f"writes: {writes}, events missed: {missed}")
for name, values in (("from the write's request", from_request), ("from the write's answer", from_answer)):
    print(f"event delay {name}: p50 {percentile(values, 0.5):.2f} ms, p99 {percentile(values, 0.99):.2f} ms, "
          f"mean {statistics.fmean(values) if values else float('nan'):.2f} ms")
print(f"RSS at the end: {rss_kib(pid) / 1024:.1f} MiB")
for sock in streams:
    sock.close()
