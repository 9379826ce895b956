"""Fault scenarios against a running quote-server on 127.0.0.1, for bench/faults.sh. Every loop is bounded.

database: favorites are written at a steady pace while PostgreSQL is stopped and started again; during the
  outage the server must answer 503 problem+json (no other 5xx, nothing hanging past the pool's wait); after the
  restart service must come back by itself; every favorite acknowledged with a 2xx must be in the database.
mail: password resets are requested while the SMTP server is down; once it is up, every mail must arrive, once.
"""
import argparse
import http.client
import json
import socket
import subprocess
import threading
import time


def call(port, method, path, body=None, token=None, timeout=15):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    started = time.monotonic()
    try:
        connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = connection.getresponse()
        data = response.read()
        return response.status, response.getheader("Content-Type", ""), data, time.monotonic() - started
    except (OSError, http.client.HTTPException):
        return 0, "", b"", time.monotonic() - started
    finally:
        connection.close()


def signup(port, email):
    status, _, data, _ = call(port, "POST", "/v1/auth/signup", {"email": email, "password": "fault tolerant 1"})
    if status != 201:
        status, _, data, _ = call(port, "POST", "/v1/auth/login", {"email": email, "password": "fault tolerant 1"})
    return json.loads(data)["access_token"]


def database_scenario(args):
    token = signup(args.port, f"fault-{int(time.time())}@bench.local")
    quote_ids = [line.strip() for line in open(args.quote_ids) if line.strip()]
    acknowledged, lock = [], threading.Lock()
    log = []  # (time since start, status, content type, seconds taken)
    next_quote = iter(quote_ids)
    started = time.monotonic()
    deadline = started + args.before + args.down + args.after

    def writer():
        while time.monotonic() < deadline:
            with lock:
                quote = next(next_quote, None)
            if quote is None:
                return
            status, content_type, _, took = call(args.port, "PUT", f"/v1/favorites/{quote}", token=token)
            with lock:
                log.append((time.monotonic() - started, status, content_type, took))
                if 200 <= status < 300:
                    acknowledged.append(quote)
            time.sleep(0.02)

    threads = [threading.Thread(target=writer) for _ in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(args.before)
    stopped_at = time.monotonic() - started
    subprocess.run(args.stop_command, shell=True, executable="/bin/bash", check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(args.down)
    restarted_at = time.monotonic() - started
    subprocess.run(args.start_command, shell=True, executable="/bin/bash", check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for thread in threads:
        thread.join()

    during = [entry for entry in log if stopped_at <= entry[0] - entry[3] and entry[0] <= restarted_at]
    after = [entry for entry in log if entry[0] > restarted_at]
    statuses = {}
    for _, status, _, _ in during:
        statuses[status] = statuses.get(status, 0) + 1
    bad = [entry for entry in log if entry[1] >= 500 and (entry[1] != 503 or "problem+json" not in entry[2])]
    recovered = next((entry[0] - restarted_at for entry in after if 200 <= entry[1] < 300), None)
    slowest = max((entry[3] for entry in during), default=0)

    status, _, data, _ = call(args.port, "GET", "/v1/favorites/ids", token=token)
    stored = set(json.loads(data)["ids"]) if status == 200 else set()
    lost = [quote for quote in acknowledged if quote not in stored]

    print(f"database: {len(log)} writes; PostgreSQL down {args.down:.0f} s")
    summary = ", ".join(f"{code or 'no answer'}: {count}" for code, count in sorted(statuses.items()))
    print(f"  during the outage: {summary}; slowest answer {slowest:.2f} s")
    print(f"  other 5xx or 503 without problem+json: {len(bad)}")
    print(f"  first success {recovered:.2f} s after the restart" if recovered is not None else "  no success after the restart")
    print(f"  acknowledged: {len(acknowledged)}, in the database afterwards: {len(acknowledged) - len(lost)}, lost: {len(lost)}")
    return not bad and recovered is not None and not lost and status == 200


class SMTPSink:
    """A minimal SMTP server that records the recipient of every accepted message."""

    def __init__(self, port):
        self.port, self.received, self.lock = port, [], threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", port))
        self.listener.settimeout(0.2)
        self.running = True
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while self.running:
            try:
                client, _ = self.listener.accept()
            except socket.timeout:
                continue
            threading.Thread(target=self.session, args=(client,), daemon=True).start()

    def session(self, client):
        client.settimeout(10)
        reader = client.makefile("rb")
        client.sendall(b"220 sink ESMTP\r\n")
        recipients, in_data = [], False
        try:
            for raw in reader:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if in_data:
                    if line == ".":
                        in_data = False
                        with self.lock:
                            self.received.extend(recipients)
                        recipients = []
                        client.sendall(b"250 queued\r\n")
                    continue
                command = line[:4].upper()
                if command in ("EHLO", "HELO"):
                    client.sendall(b"250 sink\r\n")
                elif command == "RCPT":
                    recipients.append(line.split(":", 1)[1].strip().strip("<>").lower())
                    client.sendall(b"250 ok\r\n")
                elif command == "DATA":
                    in_data = True
                    client.sendall(b"354 go on\r\n")
                elif command == "QUIT":
                    client.sendall(b"221 bye\r\n")
                    break
                else:
                    client.sendall(b"250 ok\r\n")
        except OSError:
            pass
        finally:
            client.close()

    def stop(self):
        self.running = False
        self.listener.close()


def mail_scenario(args):
    emails = [f"reset-{index}-{int(time.time())}@bench.local" for index in range(args.mails)]
    for email in emails:
        signup(args.port, email)
    accepted = sum(1 for email in emails if call(args.port, "POST", "/v1/auth/password-reset", {"email": email})[0] == 202)
    time.sleep(args.down)
    sink = SMTPSink(args.smtp_port)
    up_at = time.monotonic()
    deadline = up_at + args.wait
    while time.monotonic() < deadline:
        with sink.lock:
            if set(emails) <= set(sink.received):
                break
        time.sleep(0.5)
    all_in = time.monotonic() - up_at
    time.sleep(args.settle)  # anything sent twice would show up now
    sink.stop()
    counts = {email: sink.received.count(email) for email in emails}
    missing = [email for email, count in counts.items() if count == 0]
    twice = [email for email, count in counts.items() if count > 1]
    print(f"mail: {len(emails)} resets requested ({accepted} answered 202) with the SMTP server down for {args.down:.0f} s")
    print(f"  delivered: {len(emails) - len(missing)} ({all_in:.1f} s after the SMTP server came up), missing: {len(missing)}, sent twice: {len(twice)}")
    return accepted == len(emails) and not missing and not twice


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", choices=["database", "mail"])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--quote-ids")
    parser.add_argument("--stop-command")
    parser.add_argument("--start-command")
    parser.add_argument("--before", type=float, default=5)
    parser.add_argument("--down", type=float, default=8)
    parser.add_argument("--after", type=float, default=10)
    parser.add_argument("--smtp-port", type=int)
    parser.add_argument("--mails", type=int, default=20)
    parser.add_argument("--wait", type=float, default=120)
    parser.add_argument("--settle", type=float, default=5)
    args = parser.parse_args()
    ok = database_scenario(args) if args.scenario == "database" else mail_scenario(args)
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
