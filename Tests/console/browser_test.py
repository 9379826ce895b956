#!/usr/bin/env python3
"""The owners' console in a real browser (headless Chromium driven by Selenium), against the real server.

Starts the built quote-server on a throwaway embedded database (seeded, rate limits off, a free loopback port),
adds an owner with `quote-server owner add`, and checks what issue 28 asks of the console: sign-in; a quote added,
edited and deleted, each seen through /v1/quotes/{id}; a CSV import with one bad row (previewed, nothing saved
until confirmed); tomorrow's quote pinned and served by /v1/qotd; an app user's sessions revoked; a POST without
the CSRF token refused; the CSP header; every page usable at 390 px and 1280 px wide, with a screenshot of each.
Issue 45 adds: sorting by a column and by favorites, the favorites count, the CSV and JSON export, two owners
saving one quote (the second save refused, showing the first's version), banning and re-enabling an app user (their
tokens refused on /v1, /rest/v1, /auth/v1, /storage/v1 and the live feed, their sessions and open feed ended,
sign-in refused then restored), and a password-reset mail sent from the console (read
from an SMTP sink this script runs), a deletion undone from the audit log, and the TOTP secret's QR code
decoded (rendered by rsvg-convert, read by zbarimg).

Usage: Tests/console/browser_test.py [--server PATH] [--screenshots DIR]
Exits 1 (listing every failed check) when any check fails.
"""
import argparse
import datetime
import html
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import (NoSuchElementException, StaleElementReferenceException, TimeoutException,
                                        WebDriverException)
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

WIDTHS = {390: 844, 1280: 800}
failures = []


def check(condition, message):
    print(("ok   " if condition else "FAIL ") + message, flush=True)
    if not condition:
        failures.append(message)
    return condition


class SMTPSink:
    """A minimal SMTP server on loopback keeping every message (enough protocol for libcurl), as the Swift tests'
    SMTPSink: the reset mail is read from it as a user would from their inbox."""

    def __init__(self):
        self.messages = []
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.session, args=(connection,), daemon=True).start()

    def session(self, connection):
        with connection, connection.makefile("rb") as lines:
            connection.sendall(b"220 sink\r\n")
            data = None
            for raw in lines:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if data is not None:
                    if line == ".":
                        self.messages.append("\n".join(data))
                        data = None
                        connection.sendall(b"250 kept\r\n")
                    else:
                        data.append(line[1:] if line.startswith("..") else line)
                    continue
                verb = line.split(" ")[0].upper()
                if verb in ("EHLO", "HELO"):
                    connection.sendall(b"250 sink\r\n")
                elif verb == "DATA":
                    data = []
                    connection.sendall(b"354 go on\r\n")
                elif verb == "QUIT":
                    connection.sendall(b"221 bye\r\n")
                    return
                else:
                    connection.sendall(b"250 ok\r\n")

    def wait_for(self, count, seconds=30):
        deadline = time.monotonic() + seconds
        while len(self.messages) < count and time.monotonic() < deadline:
            time.sleep(0.2)
        return self.messages

    def stop(self):
        self.listener.close()


class Server:
    """quote-server on a throwaway embedded database, on a free loopback port."""

    def __init__(self, binary, smtp_port=None):
        self.binary = binary
        self.work = tempfile.mkdtemp(prefix="console-browser-")
        os.chmod(self.work, 0o755)  # the embedded PostgreSQL runs unprivileged when this runs as root
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.env = dict(os.environ, QUOTEVAULT_DATA=os.path.join(self.work, "data"), RATE_LIMITS="off",
                        LOG_LEVEL="warning", BACKUP_REPO="off", PORT=str(self.port), HOST="127.0.0.1")
        if smtp_port:
            self.env["SMTP_URL"] = f"smtp://127.0.0.1:{smtp_port}"
        self.base = f"http://127.0.0.1:{self.port}"
        self.process = None
        self.log = open(os.path.join(self.work, "server.log"), "wb")

    def run(self, *arguments):
        return subprocess.run([self.binary, *arguments], env=self.env, check=True, capture_output=True,
                              text=True, timeout=300).stdout

    def start(self):
        self.run("seed")
        self.anon_key = self.run("anon-key").strip()
        self.process = subprocess.Popen([self.binary, "serve"], env=self.env, stdout=self.log, stderr=self.log)
        for _ in range(300):
            try:
                if self.request("GET", "/ready")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("the server did not become ready")

    def request(self, method, path, body=None, headers=None):
        """One request without following redirects: (status, headers, body text)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.headers, response.read().decode("utf-8", "replace")
        finally:
            connection.close()

    def json(self, method, path, payload=None, token=None):
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        status, _, text = self.request(method, path, json.dumps(payload) if payload is not None else None, headers)
        return status, (json.loads(text) if text.strip().startswith(("{", "[")) else None)

    def stop(self):
        if self.process:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.close()


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--hide-scrollbars", "--window-size=1280,800"]:
        options.add_argument(argument)
    service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(30)
    return driver


def set_width(driver, width):
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": WIDTHS[width], "deviceScaleFactor": 1, "mobile": width < 600})


def wait_for(driver, condition, what, seconds=30):
    try:
        # A page replaced while it is read (the click's navigation) is read again at the next poll.
        WebDriverWait(driver, seconds, poll_frequency=0.25,
                      ignored_exceptions=[StaleElementReferenceException, NoSuchElementException]).until(condition)
        return True
    except Exception as error:  # noqa: BLE001 - a timeout or a driver error is a failed check, reported as such
        reason = f"waited {seconds} s" if isinstance(error, TimeoutException) else type(error).__name__
        shown = " ".join(driver.find_element(By.TAG_NAME, "body").text.split())[:300]
        return check(False, f"{what} ({reason}; at {page_path(driver)}, showing: {shown})")


def page_path(driver):
    """The page's path without its query (a sign-in link's token stays out of the output)."""
    return urllib.parse.urlparse(driver.current_url).path


def submit(driver, form_action_suffix, button_text=None):
    """Clicks the submit button of the form whose action ends with `form_action_suffix`."""
    forms = [f for f in driver.find_elements(By.TAG_NAME, "form")
             if (f.get_attribute("action") or "").endswith(form_action_suffix)]
    for form in forms:
        for button in form.find_elements(By.CSS_SELECTOR, "button[type=submit]"):
            if button_text is None or button_text in button.text:
                button.click()
                return True
    raise AssertionError(f"no form posting to …{form_action_suffix} with a '{button_text}' button "
                         f"on {page_path(driver)}")


def main_text(driver):
    """The page's main text; empty while a navigation replaces the page."""
    try:
        return driver.find_element(By.TAG_NAME, "main").text
    except WebDriverException:  # stale, not there yet, or the page went away mid-read: read again at the next poll
        return ""


def sign_in(driver, server, token):
    driver.get(f"{server.base}/console/sign-in?token={urllib.parse.quote(token)}")
    submit(driver, "/console/sign-in", "Sign in")
    wait_for(driver, lambda d: d.current_url.rstrip("/").endswith("/console"), "signing in lands on the overview")
    check("Overview" in driver.title, "signed in: the overview is shown")


def quotes(driver, server):
    """Adds, edits and deletes a quote, seeing each through /v1/quotes/{id}, and undoes the deletion after its
    confirmation page. Returns that deletion's undo confirmation URL (deleted again: it can be undone)."""
    driver.get(f"{server.base}/console/quotes/new")
    driver.find_element(By.NAME, "text").send_keys("A browser wrote this quote")
    driver.find_element(By.NAME, "author").send_keys("Selenium Test")
    Select(driver.find_element(By.NAME, "category")).select_by_value("wisdom")
    submit(driver, "/console/quotes", "Save")
    wait_for(driver, lambda d: "/edit" in d.current_url, "adding a quote opens its edit page")
    match = re.search(r"/console/quotes/([0-9a-f-]{36})/edit", driver.current_url)
    if not check(match is not None, "the new quote's id is in the URL"):
        return
    quote_id = match.group(1)
    status, quote = server.json("GET", f"/v1/quotes/{quote_id}")
    check(status == 200 and quote["text"] == "A browser wrote this quote" and quote["category"] == "wisdom",
          "the added quote is served by /v1/quotes/{id}")

    text = driver.find_element(By.NAME, "text")
    text.clear()
    text.send_keys("A browser edited this quote")
    submit(driver, f"/console/quotes/{quote_id}", "Save")
    wait_for(driver, lambda d: "Saved" in main_text(d), "the edit is confirmed on the page")
    status, quote = server.json("GET", f"/v1/quotes/{quote_id}")
    check(status == 200 and quote["text"] == "A browser edited this quote", "the edit is served by /v1/quotes/{id}")

    driver.get(f"{server.base}/console/quotes/{quote_id}/delete")
    submit(driver, f"/console/quotes/{quote_id}/delete", "Delete")
    wait_for(driver, lambda d: "/delete" not in d.current_url, "deleting leaves the confirmation page")
    check(server.json("GET", f"/v1/quotes/{quote_id}")[0] == 404, "the deleted quote is gone from /v1/quotes/{id}")

    # Undone from the audit log's before-values: back under its id; then deleted again, as the rest expects.
    driver.get(f"{server.base}/console/audit?action=quote.delete")
    driver.find_element(By.LINK_TEXT, "Undo").click()
    wait_for(driver, lambda d: "The deleted quote comes back" in main_text(d)
             and "A browser edited this quote" in main_text(d),
             "the Undo button leads to a page showing the deleted quote coming back")
    check(server.json("GET", f"/v1/quotes/{quote_id}")[0] == 404, "the undo's confirmation page changes nothing")
    submit(driver, "/undo", "Undo")
    wait_for(driver, lambda d: "The change was undone" in main_text(d), "undoing the deletion is confirmed")
    status, quote = server.json("GET", f"/v1/quotes/{quote_id}")
    check(status == 200 and quote["text"] == "A browser edited this quote",
          "the undone deletion brings the quote back under its id")
    driver.get(f"{server.base}/console/quotes/{quote_id}/delete")
    submit(driver, f"/console/quotes/{quote_id}/delete", "Delete")
    wait_for(driver, lambda d: "/delete" not in d.current_url, "deleting it again leaves the confirmation page")
    driver.get(f"{server.base}/console/audit?action=quote.delete")
    return urllib.parse.urlparse(driver.find_element(By.LINK_TEXT, "Undo").get_attribute("href")).path


def search_count(server, word):
    status, page = server.json("GET", f"/v1/quotes/search?q={word}")
    return page["total"] if status == 200 else -1


def csv_import(driver, server, work):
    """Imports a CSV with one bad row: preview first, nothing saved until confirmed. Returns the preview URL."""
    path = os.path.join(work, "quotes.csv")
    with open(path, "w", encoding="utf-8") as file:
        file.write("text,author,category\n"
                   "Zebracorn one is good,Importer,wisdom\n"
                   "Zebracorn two is good,Importer,love\n"
                   "Zebracorn three is bad,Importer,no-such-category\n"
                   "Zebracorn four is good,Importer,humor\n")
    driver.get(f"{server.base}/console/quotes/import")
    driver.find_element(By.NAME, "file").send_keys(path)
    submit(driver, "/console/quotes/import", "Preview")
    wait_for(driver, lambda d: "Preview of" in d.title, "the upload shows a preview")
    preview = driver.current_url
    text = main_text(driver)
    check("3 good" in text and "1 refused" in text, "the preview counts 3 good rows and 1 refused")
    bad = driver.find_elements(By.CSS_SELECTOR, "tr.row-bad")
    check(len(bad) == 1 and "Zebracorn three" in bad[0].text, "the preview marks the bad row with its error")
    check(search_count(server, "Zebracorn") == 0, "nothing is saved before the import is confirmed")
    submit(driver, "/confirm", "Import")
    # The page refreshes itself while the import runs; it is also reloaded here, so a refresh the loaded machine
    # lost does not stall the check. Bounded: 60 s.
    deadline = time.monotonic() + 60
    while "Import finished" not in main_text(driver) and time.monotonic() < deadline:
        time.sleep(2)
        driver.get(preview)
    check("Import finished" in main_text(driver), "the import finishes")
    check(search_count(server, "Zebracorn") == 3, "the 3 good rows are saved after confirming, the bad one is not")
    return preview


def pin_tomorrow(driver, server):
    """Pins the first coming day (tomorrow where the earliest time zone is) and reads it from /v1/qotd."""
    day = ((datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=14)).date()
           + datetime.timedelta(days=1)).isoformat()
    driver.get(f"{server.base}/console/qotd/{day}?q=Zebracorn+four")
    submit(driver, f"/console/qotd/{day}/pin", "Pin this")
    wait_for(driver, lambda d: "Pinned quote" in main_text(d), "the day shows its pinned quote")
    status, answer = server.json("GET", f"/v1/qotd?date={day}")
    check(status == 200 and answer["quote"]["text"] == "Zebracorn four is good",
          f"/v1/qotd?date={day} serves the pinned quote")
    driver.get(f"{server.base}/console/qotd?month={day[:7]}")
    check("Zebracorn four is good" in main_text(driver), "the calendar shows the pinned quote")
    yesterday = (datetime.datetime.now(datetime.timezone.utc).date() - datetime.timedelta(days=1)).isoformat()
    driver.get(f"{server.base}/console/qotd/{yesterday}")
    check("frozen" in main_text(driver) and not driver.find_elements(By.CSS_SELECTOR, "form[action$='/pin']"),
          "a past day says it is frozen and offers no pin")
    return day


def revoke(driver, server):
    """Signs up an app user over /v1, revokes their sessions in the console, sees their next request refused."""
    email = "browser-user@example.com"
    status, session = server.json("POST", "/v1/auth/signup", {"email": email, "password": "browser password 1"})
    check(status == 201, "an app user signs up over /v1")
    token, refresh = session["access_token"], session["refresh_token"]
    check(server.json("GET", "/v1/me", token=token)[0] == 200, "their access token works before the revocation")
    driver.get(f"{server.base}/console/accounts?q=browser-user")
    driver.find_element(By.LINK_TEXT, email).click()
    wait_for(driver, lambda d: email in d.title, "the account's page opens")
    page = driver.page_source
    check("$scrypt" not in page and token not in page and refresh not in page, "no hash or token on the page")
    submit(driver, "/revoke", "Revoke")
    wait_for(driver, lambda d: "Revoked 1 session" in main_text(d), "the revocation is confirmed")
    check(server.json("GET", "/v1/me", token=token)[0] == 401, "their next request is refused (401)")
    check(server.json("POST", "/v1/auth/refresh", {"refresh_token": refresh})[0] == 401,
          "their refresh token is refused (401)")
    return driver.current_url, email, "browser password 1"


def console_cookie(driver):
    return f"qv_console={driver.get_cookie('qv_console')['value']}"


def sorting_and_export(driver, server, user_token):
    """An app user's favorite is counted; the list sorts by favorites and by a column; the sorted list exports as
    CSV and JSON in the same order."""
    favorite_id = server.json("GET", "/v1/quotes?page_size=3")[1]["items"][2]["id"]
    status, _, _ = server.request("PUT", f"/v1/favorites/{favorite_id}",
                                  headers={"Authorization": f"Bearer {user_token}"})
    check(status // 100 == 2, "an app user favorites a quote over /v1")
    driver.get(f"{server.base}/console/quotes")
    driver.find_element(By.LINK_TEXT, "Favorites").click()
    wait_for(driver, lambda d: "sort=favorites" in d.current_url, "the Favorites header sorts the list")
    rows = driver.find_elements(By.CSS_SELECTOR, "main tbody tr")
    check(bool(rows) and favorite_id in rows[0].get_attribute("innerHTML")
          and rows[0].find_element(By.CSS_SELECTOR, "td[data-label=Favorites]").text == "1",
          "sorted by favorites, the favorited quote comes first with its count, 1")
    header = driver.find_element(By.CSS_SELECTOR, "th[aria-sort=descending]")
    check("Favorites" in header.text, "the sorted column says so (aria-sort)")

    csv_link = driver.find_element(By.LINK_TEXT, "CSV").get_attribute("href")
    check("sort=favorites" in csv_link, "the export link keeps the list's order")
    status, headers, text = server.request("GET", urllib.parse.urlparse(csv_link).path + "?"
                                           + urllib.parse.urlparse(csv_link).query,
                                           headers={"Cookie": console_cookie(driver)})
    lines = text.split("\r\n")
    check(status == 200 and headers.get("Content-Type", "").startswith("text/csv")
          and lines[0] == '"id","text","author","category","created_at","favorites"'
          and lines[1].startswith(f'"{favorite_id}"') and lines[1].endswith(',"1"'),
          "the CSV export holds the sorted list, the favorited quote first")
    total = server.json("GET", "/v1/quotes?page_size=1")[1]["total"]
    check(len([line for line in lines if line]) == total + 1, f"the CSV export holds every quote ({total})")
    json_link = driver.find_element(By.LINK_TEXT, "JSON").get_attribute("href")
    status, _, text = server.request("GET", urllib.parse.urlparse(json_link).path + "?"
                                     + urllib.parse.urlparse(json_link).query,
                                     headers={"Cookie": console_cookie(driver)})
    rows = json.loads(text) if status == 200 else []
    check(len(rows) == total and rows[0]["id"] == favorite_id and rows[0]["favorites"] == 1,
          "the JSON export holds the same list in the same order")

    driver.find_element(By.PARTIAL_LINK_TEXT, "Text").click()
    wait_for(driver, lambda d: "sort=text" in d.current_url, "the Text header sorts the list")
    first = driver.find_elements(By.CSS_SELECTOR, "main tbody tr td")[1].text
    status, _, text = server.request("GET", "/console/quotes/export.json?sort=text&dir=asc",
                                     headers={"Cookie": console_cookie(driver)})
    check(status == 200 and json.loads(text)[0]["text"] == first, "sorted by text, A first (as the export says)")


def concurrent_edit(driver, server):
    """Two owners edit one quote: the browser's later save is refused and shows the other owner's version."""
    quote = server.json("GET", "/v1/quotes?page_size=1")[1]["items"][0]
    quote_id = quote["id"]
    driver.get(f"{server.base}/console/quotes/{quote_id}/edit")
    link = server.run("owner", "add", "second-owner@example.com").strip().splitlines()[-1]
    token = urllib.parse.parse_qs(urllib.parse.urlparse(link).query)["token"][0]
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    status, headers, _ = server.request("POST", "/console/sign-in", urllib.parse.urlencode({"token": token}), form)
    other = {"Cookie": headers.get("Set-Cookie", "").split(";")[0], **form}
    _, _, page = server.request("GET", f"/console/quotes/{quote_id}/edit", headers=other)
    fields = {name: (re.search(f'name="{name}" value="([^"]*)"', page) or [None, ""])[1]
              for name in ("csrf_token", "version")}
    status, _, _ = server.request("POST", f"/console/quotes/{quote_id}", urllib.parse.urlencode(
        {**fields, "text": "The second owner's wording.", "author": quote["author"],
         "category": quote["category"]}), other)
    check(status == 303, "another owner, in their own session, saves the quote first")
    text = driver.find_element(By.NAME, "text")
    text.clear()
    text.send_keys("The first owner's late wording.")
    submit(driver, f"/console/quotes/{quote_id}", "Save")
    wait_for(driver, lambda d: "another owner changed this quote" in main_text(d), "the later save is refused")
    check("The second owner's wording." in main_text(driver), "the refusal shows the other owner's version")
    check(server.json("GET", f"/v1/quotes/{quote_id}")[1]["text"] == "The second owner's wording.",
          "the other owner's save is kept")


def doors(server, token, user_id):
    """For each door, whether it refuses `token` as a credential in its own words: /v1 and /rest/v1 401,
    /auth/v1/user 403, /storage/v1 400 "Invalid JWT" (as Supabase Storage answers), the live feed 401."""
    bearer = {"apikey": server.anon_key, "Authorization": f"Bearer {token}"}
    storage_status, _, storage_text = server.request("GET", f"/storage/v1/object/avatars/{user_id}/a.png",
                                                     headers=bearer)
    feed, response = open_feed(server, token)
    feed_status = response.status
    feed.close()
    return {
        "/v1/me": server.request("GET", "/v1/me", headers=bearer)[0] == 401,
        "/rest/v1": server.request("GET", "/rest/v1/collections?select=id", headers=bearer)[0] == 401,
        "/auth/v1/user": server.request("GET", "/auth/v1/user", headers=bearer)[0] == 403,
        "/storage/v1": storage_status == 400 and "Invalid JWT" in storage_text,
        "/v1/sync/events": feed_status == 401,
    }


def open_feed(server, token):
    """GET /v1/sync/events with `token`: the connection and its response, whose body (a live stream) is unread."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.request("GET", "/v1/sync/events", headers={"Authorization": f"Bearer {token}",
                                                          "Accept": "text/event-stream"})
    return connection, connection.getresponse()


def feed_ends(response, seconds=60):
    """Reads a live stream until the server ends it (True), or `seconds` pass (False)."""
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            if not response.read1(4096):
                return True
    except OSError:
        return False
    return False


def ban_and_enable(driver, server, account_url, email, password):
    """Bans an app user from their page: their tokens (of /v1 and of /auth/v1) are refused on every door, their
    sessions end (refresh refused, an open live feed cut), sign-in too; re-enabling restores sign-in."""
    status, session = server.json("POST", "/v1/auth/login", {"email": email, "password": password})
    check(status == 200, "the app user signs in")
    token = session["access_token"]
    user_id = session["user"]["id"]
    status, _, text = server.request("POST", "/auth/v1/token?grant_type=password",
                                     json.dumps({"email": email, "password": password}),
                                     {"apikey": server.anon_key, "Content-Type": "application/json"})
    check(status == 200, "the app user signs in through /auth/v1 too")
    go_true = json.loads(text)["access_token"] if status == 200 else token
    for name, credential in [("/v1", token), ("/auth/v1", go_true)]:
        live = doors(server, credential, user_id)
        check(not any(live.values()), f"before the ban, the {name} token opens every door ({live})")
    feed, stream = open_feed(server, token)
    check(stream.status == 200, "the user's live feed is open before the ban")
    driver.get(account_url)
    submit(driver, "/ban", "Disable")
    wait_for(driver, lambda d: "The account is disabled" in main_text(d), "the ban is confirmed")
    check(re.search(r"Active sessions\s+0", main_text(driver)) is not None, "the banned user's sessions ended")
    check(feed_ends(stream), "the banned user's open live feed is ended")
    feed.close()
    for name, credential in [("/v1", token), ("/auth/v1", go_true)]:
        refused = doors(server, credential, user_id)
        check(all(refused.values()), f"the banned user's {name} token is refused on every door ({refused})")
    check(server.json("POST", "/v1/auth/refresh", {"refresh_token": session["refresh_token"]})[0] == 401,
          "the banned user's refresh token is refused (401)")
    status, body = server.json("POST", "/v1/auth/login", {"email": email, "password": password})
    check(status == 403 and body["code"] == "user_banned", "the banned user's sign-in is refused (403 user_banned)")
    submit(driver, "/enable", "Re-enable")
    wait_for(driver, lambda d: "enabled again" in main_text(d), "re-enabling is confirmed")
    check(server.json("POST", "/v1/auth/login", {"email": email, "password": password})[0] == 200,
          "re-enabled, the user signs in again")
    check(all(doors(server, token, user_id).values()), "re-enabled, the ended session's token stays refused")


def reset_mail(driver, server, sink, account_url, email):
    """Sends a password-reset mail from the account's page; it arrives in the SMTP sink and its link works."""
    driver.get(account_url)
    submit(driver, "/reset", "Send a password-reset mail")
    wait_for(driver, lambda d: "reset mail is on its way" in main_text(d), "the reset mail is confirmed")
    mails = sink.wait_for(1)
    match = re.search(r"token=([A-Za-z0-9_-]+)", mails[-1]) if mails else None
    check(match is not None and email in mails[-1], "the reset mail reaches the user's inbox with its link")
    if match:
        status, _ = server.json("POST", "/v1/auth/password-reset/confirm",
                                {"token": match.group(1), "password": "a new browser password"})
        check(status == 200, "the mail's link sets a new password")


def totp_qr_code(driver, server):
    """The security page's QR code, rendered to PNG by rsvg-convert and read by zbarimg, is the otpauth URI the page
    shows as text (what an authenticator app scans)."""
    status, _, page = server.request("GET", "/console/security", headers={"Cookie": console_cookie(driver)})
    svg = re.search(r"<svg .*?</svg>", page, re.S)
    uri = re.search(r'<p class="secret">(otpauth://[^<]+)</p>', page)
    if not check(status == 200 and svg is not None and uri is not None, "the security page has a QR code and URI"):
        return
    image = os.path.join(server.work, "totp.svg")
    with open(image, "w", encoding="utf-8") as file:
        file.write(svg.group(0))
    png = os.path.join(server.work, "totp.png")
    subprocess.run(["rsvg-convert", "--zoom", "4", "--output", png, image], check=True, timeout=60)
    read = subprocess.run(["zbarimg", "--quiet", "--raw", png], capture_output=True, text=True, timeout=60)
    check(read.stdout.strip() == html.unescape(uri.group(1)), "the QR code reads back as the otpauth URI")


def csrf_and_headers(driver, server, day):
    cookie = driver.get_cookie("qv_console")
    check(cookie is not None and cookie.get("httpOnly") and cookie.get("sameSite") == "Strict",
          "the session cookie is HttpOnly and SameSite=Strict")
    status, _, _ = server.request("POST", f"/console/qotd/{day}/unpin", body="",
                                  headers={"Cookie": f"qv_console={cookie['value']}",
                                           "Content-Type": "application/x-www-form-urlencoded"})
    check(status == 403, "a POST without the CSRF token is refused (403)")
    check(server.json("GET", f"/v1/qotd?date={day}")[1]["quote"]["text"] == "Zebracorn four is good",
          "the refused POST changed nothing")
    for path in ["/console/sign-in", "/console"]:
        _, headers, _ = server.request("GET", path)
        policy = headers.get("Content-Security-Policy") or ""
        check("default-src 'none'" in policy and "frame-ancestors 'none'" in policy and "script-src" not in policy,
              f"{path} carries a strict Content-Security-Policy")


def layouts(driver, server, pages, screenshots):
    """Every page at both widths: no horizontal scrolling, its controls inside the viewport; a screenshot each."""
    for width in WIDTHS:
        set_width(driver, width)
        for name, path in pages:
            driver.get(server.base + path)
            fits = driver.execute_script(
                "return document.documentElement.scrollWidth <= window.innerWidth")
            check(fits, f"{name} at {width} px: no horizontal scrolling")
            outside = driver.execute_script("""
                const out = [];
                for (const el of document.querySelectorAll('main h1, main button, main input, main select,'
                        + ' main textarea, main a.button, header nav a')) {
                    if (el.type === 'hidden') continue;
                    const r = el.getBoundingClientRect();
                    if (r.width === 0 || r.height === 0 || r.left < 0 || r.right > window.innerWidth + 1)
                        out.push(el.tagName + ' ' + (el.name || el.textContent.trim()).slice(0, 30));
                }
                return out;""")
            check(not outside, f"{name} at {width} px: every control visible and inside the width {outside or ''}")
            driver.save_screenshot(os.path.join(screenshots, f"{name}-{width}.png"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", help="the quote-server binary (default: swift build's)")
    parser.add_argument("--screenshots", default=".build/console-screenshots")
    arguments = parser.parse_args()
    binary = arguments.server or os.path.join(
        subprocess.run(["swift", "build", "--show-bin-path"], check=True, capture_output=True, text=True)
        .stdout.strip(), "quote-server")
    os.makedirs(arguments.screenshots, exist_ok=True)
    sink = SMTPSink()
    server = Server(binary, smtp_port=sink.port)
    driver = None
    try:
        server.start()
        link = server.run("owner", "add", "owner@example.com").strip().splitlines()[-1]
        token = urllib.parse.parse_qs(urllib.parse.urlparse(link).query)["token"][0]
        driver = browser()
        set_width(driver, 1280)
        sign_in(driver, server, token)
        undo_path = quotes(driver, server)
        preview = csv_import(driver, server, server.work)
        day = pin_tomorrow(driver, server)
        account, email, password = revoke(driver, server)
        status, session = server.json("POST", "/v1/auth/login", {"email": email, "password": password})
        sorting_and_export(driver, server, session["access_token"])
        concurrent_edit(driver, server)
        ban_and_enable(driver, server, account, email, password)
        reset_mail(driver, server, sink, account, email)
        csrf_and_headers(driver, server, day)
        totp_qr_code(driver, server)
        account_path = urllib.parse.urlparse(account).path
        quote_id = server.json("GET", "/v1/quotes?page_size=1")[1]["items"][0]["id"]
        layouts(driver, server, [
            ("overview", "/console"), ("quotes", "/console/quotes"), ("quote-new", "/console/quotes/new"),
            ("quote-edit", f"/console/quotes/{quote_id}/edit"), ("quote-delete", f"/console/quotes/{quote_id}/delete"),
            ("import", "/console/quotes/import"), ("import-preview", urllib.parse.urlparse(preview).path),
            ("qotd", f"/console/qotd?month={day[:7]}"), ("qotd-day", f"/console/qotd/{day}"),
            ("accounts", "/console/accounts"), ("account", account_path),
            ("account-delete", f"{account_path}/delete"), ("audit", "/console/audit?q=quote."),
            ("audit-undo", undo_path),
            ("security", "/console/security"),
        ], arguments.screenshots)
        driver.delete_all_cookies()
        layouts(driver, server, [("sign-in", "/console/sign-in")], arguments.screenshots)
    except Exception as error:  # noqa: BLE001 - any error is a failed run, shown with the server's log
        check(False, f"the run stopped: {type(error).__name__}: {error}")
    finally:
        if driver:
            driver.quit()
        server.stop()
        sink.stop()
    if failures:
        print(f"\nconsole browser test: {len(failures)} check(s) FAILED:", file=sys.stderr)
        for failure in failures:
            print(f"  - {failure}", file=sys.stderr)
        with open(os.path.join(server.work, "server.log"), encoding="utf-8", errors="replace") as log:
            print("server log (last 40 lines):\n" + "".join(log.readlines()[-40:]), file=sys.stderr)
        shutil.rmtree(server.work, ignore_errors=True)
        sys.exit(1)
    shutil.rmtree(server.work, ignore_errors=True)
    print(f"console browser test: every check passed; screenshots in {arguments.screenshots}")


if __name__ == "__main__":
    main()
