"""QuoteVault compatibility test with the official supabase-py client (supabase==2.34.1), run by
Tests/SupabaseAPITests/SupabaseClientTests.swift against the real server and database.

Part 1 is the verification script of the Supabase protocol notes, operation for operation; the one change is
the avatar bytes: the server stores avatars only when they really are PNG or JPEG (the same rule as
/v1/me/avatar), so a complete 1x1 PNG is uploaded instead of the truncated b"\x89PNG...".
Part 2 checks the failures the clients must see.
"""
import base64
import time

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

# --- Part 1: every operation of the verification script ---
import os, uuid
from supabase import create_client
from supabase_auth.errors import AuthApiError
from postgrest.exceptions import APIError

URL = os.environ.get("SB_URL", "http://127.0.0.1:54321")
ANON = os.environ.get("SB_ANON_KEY", "anon-key-placeholder")
SECRET = os.environ.get("SB_JWT_SECRET", "")
email, pw = f"qv-{uuid.uuid4().hex[:8]}@example.com", "s3cret-Passw0rd"
sb = create_client(URL, ANON)
# --- Auth ---
r = sb.auth.sign_up({"email": email, "password": pw, "options": {"data": {"display_name": "Alice"}}})
assert r.session is not None                       # server auto-confirms
r = sb.auth.sign_in_with_password({"email": email, "password": pw})
uid = r.user.id
try:
    sb.auth.sign_in_with_password({"email": email, "password": "wrong"}); raise SystemExit("expected 400")
except AuthApiError as e:
    assert (e.status, e.code) == (400, "invalid_credentials")
assert sb.auth.get_user().user.email == email
# --- Quotes ---
q = (sb.table("quotes").select("*", count="exact").eq("category", "love")
       .order("created_at", desc=True).range(0, 19).execute())
assert len(q.data) <= 20 and q.count is not None
sb.table("quotes").select("*").ilike("text", "*life*").limit(20).offset(20).execute()
sb.table("quotes").select("*").ilike("author", "*twain*").execute()
sb.table("quotes").select("*").or_("text.ilike.*love*,author.ilike.*love*").execute()
qid = q.data[0]["id"]
# --- Profile (own row) ---
sb.table("profiles").select("*").eq("id", uid).single().execute()
sb.table("profiles").update({"display_name": "Alice B", "preferences": {"theme": "dark"}}).eq("id", uid).execute()
# --- Favorites ---
sb.table("user_favorites").insert({"user_id": uid, "quote_id": qid}).execute()
try:
    sb.table("user_favorites").insert({"user_id": uid, "quote_id": qid}).execute(); raise SystemExit("expected 23505")
except APIError as e:
    assert e.code == "23505"
favs = sb.table("user_favorites").select("*, quotes(*)").eq("user_id", uid).execute().data
assert isinstance(favs[0]["quotes"], dict)          # many-to-one embed is an object
sb.table("user_favorites").delete().eq("user_id", uid).eq("quote_id", qid).execute()
# --- Collections ---
c = sb.table("collections").insert({"user_id": uid, "name": "Faves"}).execute().data[0]
sb.table("collections").update({"name": "Best"}).eq("id", c["id"]).execute()
sb.table("collection_quotes").insert({"collection_id": c["id"], "quote_id": qid}).execute()
cq = sb.table("collection_quotes").select("*, quotes(*)").eq("collection_id", c["id"]).execute().data
sb.table("collection_quotes").delete().eq("collection_id", c["id"]).eq("quote_id", qid).execute()
sb.table("collections").delete().eq("id", c["id"]).execute()
# --- Quote of the day ---
sb.table("quote_of_day").select("*, quotes(*)").eq("date", "2025-01-31").maybe_single().execute()
# --- Storage + profile avatar ---
up = sb.storage.from_("avatars").upload(f"{uid}/avatar.png", PNG,
                                        {"content-type": "image/png", "upsert": "true"})
assert sb.storage.from_("avatars").download(f"{uid}/avatar.png")
sb.auth.update_user({"data": {"display_name": "Alice B", "avatar_url": up.full_path}})
# --- Refresh, sign out, reset ---
sb.auth.refresh_session()
sb.auth.sign_out()
assert sb.auth.get_session() is None
sb.auth.reset_password_for_email(email, {"redirect_to": "quotevault://reset"})

# --- Part 2: the failures the clients must see ---
import jwt as pyjwt  # PyJWT, a dependency of supabase-auth: only to forge an expired token below

# Wrong password: AuthApiError 400 invalid_credentials (checked above, again from a fresh client).
fresh = create_client(URL, ANON)
try:
    fresh.auth.sign_in_with_password({"email": email, "password": "not-the-password"}); raise SystemExit("expected 400")
except AuthApiError as e:
    assert (e.status, e.code) == (400, "invalid_credentials"), (e.status, e.code)

# Unfiltered delete refused (21000; the client has no way to send one, so plainly over HTTP), nothing deleted.
import httpx
alice = create_client(URL, ANON)
alice.auth.sign_in_with_password({"email": email, "password": pw})
alice_id = alice.auth.get_user().user.id
alice.table("user_favorites").insert({"user_id": alice_id, "quote_id": qid}).execute()
r = httpx.delete(f"{URL}/rest/v1/user_favorites", headers={
    "apikey": ANON, "Authorization": f"Bearer {alice.auth.get_session().access_token}"})
assert r.status_code == 400 and r.json()["code"] == "21000", r.text
assert len(alice.table("user_favorites").select("*").eq("user_id", alice_id).execute().data) == 1

# Another user's rows are invisible, and cannot be written as theirs (42501).
bob_email = f"qv-{uuid.uuid4().hex[:8]}@example.com"
bob = create_client(URL, ANON)
bob.auth.sign_up({"email": bob_email, "password": pw})
assert bob.table("user_favorites").select("*").eq("user_id", alice_id).execute().data == []
assert bob.table("collections").select("*").execute().data == []
try:
    bob.table("user_favorites").insert({"user_id": alice_id, "quote_id": qid}).execute(); raise SystemExit("expected 42501")
except APIError as e:
    assert e.code == "42501", e
assert bob.table("user_favorites").delete().eq("user_id", alice_id).execute().data == []
assert len(alice.table("user_favorites").select("*").eq("user_id", alice_id).execute().data) == 1
anon = create_client(URL, ANON)
assert anon.table("user_favorites").select("*").execute().data == []
assert len(anon.table("quotes").select("id").limit(1).execute().data) == 1

# An expired token is refused (PGRST303), however well signed.
session = alice.auth.get_session()
claims = pyjwt.decode(session.access_token, options={"verify_signature": False})
claims["exp"] = int(time.time()) - 60
assert SECRET, "SB_JWT_SECRET is needed to sign an expired token"
expired = pyjwt.encode(claims, SECRET, algorithm="HS256")
if expired:
    r = httpx.get(f"{URL}/rest/v1/user_favorites", headers={"apikey": ANON, "Authorization": f"Bearer {expired}"})
    assert r.status_code == 401 and r.json()["code"] == "PGRST303", r.text
    r = httpx.get(f"{URL}/auth/v1/user", headers={"apikey": ANON, "Authorization": f"Bearer {expired}"})
    assert r.status_code == 403 and r.json()["code"] == "bad_jwt", r.text

# Refresh-token reuse: the rotated token fails, and the whole session is revoked.
carol = create_client(URL, ANON)
carol.auth.sign_up({"email": f"qv-{uuid.uuid4().hex[:8]}@example.com", "password": pw})
old_refresh = carol.auth.get_session().refresh_token
carol.auth.refresh_session()
new_refresh = carol.auth.get_session().refresh_token
assert new_refresh != old_refresh
try:
    carol.auth.refresh_session(old_refresh); raise SystemExit("expected reuse to fail")
except AuthApiError as e:
    assert e.code == "refresh_token_already_used", e.code
try:
    carol.auth.refresh_session(new_refresh); raise SystemExit("expected the session to be revoked")
except AuthApiError as e:
    assert e.code in ("refresh_token_not_found", "refresh_token_already_used"), e.code

# --- Part 3: what the app's own client (supabase-swift) needs, where supabase-py sends the same (issue 15) ---
prefs = {"colorScheme": "dark", "accentColor": "purple", "fontSize": "large", "notificationEnabled": True,
         "notificationTime": "08:30"}
row = alice.table("profiles").update({"preferences": prefs, "avatar_url": "https://cdn.example/a.png"}).eq("id", alice_id).execute().data[0]
assert row["preferences"] == prefs and row["avatar_url"] == "https://cdn.example/a.png", row
try:
    alice.table("profiles").update({"preferences": {"fontSize": "huge"}}).eq("id", alice_id).execute(); raise SystemExit("expected 400")
except APIError as e:
    assert e.code == "23514", e
assert alice.table("profiles").select("preferences").eq("id", alice_id).single().execute().data["preferences"] == prefs

# Full text on quotes (the seeded quotes are about "Love and life").
for options in ({"type": "web_search"}, {"type": "plain", "config": "english"}, {"type": "phrase"}, {}):
    found = alice.table("quotes").select("text").text_search("text", "love", options).limit(5).execute().data
    assert found and all("love" in q["text"].lower() for q in found), (options, found)

# Aggregates in embeds, upserts that merge answer the row, HEAD counts.
col = alice.table("collections").insert({"name": "Counted"}).execute().data[0]
alice.table("collection_quotes").insert({"collection_id": col["id"], "quote_id": qid}).execute()
listed = alice.table("collections").select("*, collection_quotes(count)").eq("id", col["id"]).execute().data
assert listed[0]["collection_quotes"] == [{"count": 1}], listed
again = alice.table("user_favorites").upsert({"user_id": alice_id, "quote_id": qid}, on_conflict="user_id,quote_id").execute().data
assert len(again) == 1 and again[0]["quote_id"] == qid, again
head = alice.table("quotes").select("*", count="exact", head=True).execute()
assert head.count == 25 and head.data == [], head

# The collection takeover: Bob upserting Alice's collection id is refused, and nothing changes.
try:
    bob.table("collections").upsert({"id": col["id"], "name": "Bob's now"}).execute(); raise SystemExit("expected 42501")
except APIError as e:
    assert e.code == "42501", e
assert alice.table("collections").select("name").eq("id", col["id"]).single().execute().data["name"] == "Counted"

# Storage cacheControl sets the served max-age.
alice.storage.from_("avatars").upload(f"{alice_id}/avatar.png", PNG, {"content-type": "image/png", "upsert": "true", "cache-control": "60"})
served = httpx.get(alice.storage.from_("avatars").get_public_url(f"{alice_id}/avatar.png"))
assert served.status_code == 200 and served.headers["cache-control"] == "max-age=60", served.headers

# The service role writes quotes; the anon key cannot.
SERVICE = os.environ.get("SB_SERVICE_ROLE_KEY", "")
assert SERVICE, "SB_SERVICE_ROLE_KEY is needed"
owner = create_client(URL, SERVICE)
added = owner.table("quotes").insert({"text": "Added by the owners", "author": "QuoteVault", "category": "wisdom"}).execute().data
assert added[0]["author"] == "QuoteVault", added
try:
    anon.table("quotes").insert({"text": "Anonymous quote", "author": "Nobody", "category": "wisdom"}).execute(); raise SystemExit("expected 42501")
except APIError as e:
    assert e.code == "42501", e

print("ALL OK")
