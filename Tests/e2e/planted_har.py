#!/usr/bin/env python3
"""A seeded generator of a realistic HAR 1.2 file with secrets and personal data planted in every
location `harrec redact` must handle (issue 12), plus look-alikes it must leave alone.

    python3 Tests/e2e/planted_har.py SEED OUT.har [MANIFEST.json]

`build(seed)` returns `(har, manifest)`. Standard library only; everything comes from
`random.Random(seed)`, so a seed always gives the same bytes and another seed other values.

Manifest
--------
`plants`: one record per planted value and location:

    {"id": "p0042", "cls": "github-token", "loc": "json-nested",
     "where": "entries[1].response.content.text: JSON body, nested object",
     "name": "note",                          # the name it was planted under (where it has one)
     "value": "ghp_...",                      # the secret or personal value
     "fragments": [["value", "ghp_..."]],     # byte strings that must all be gone after redact
                                              # ("alt: ..." ones are other spellings, e.g. digits only)
     "local": ["-----BEGIN EC PRIVATE KEY-----"],  # gone from this location (short or shared)
     "entry": 1, "path": ["response", "content", "text"],   # the HAR string holding it
     "inner": [["json", ["data", "account", "note"]]],       # how to reach it inside that string
     "contexts": [[["request", "url"], "otp=123456"]]}       # exact planted text, per location

`inner` steps, applied to the string at `path`: `["json", keys]` parses the current string as
JSON and walks the keys; `["ndjson", i]` takes the i-th line that starts with `{`; `["sse", i]`
the payload of the i-th `data:` line; `["b64"]` base64-decodes. (Counting JSON lines rather
than lines keeps later lines addressable when a redactor splits one line into several.) Plants without `inner` are somewhere inside the string
(in some decoded view: percent-decoded, base64-decoded, JSON-unescaped...).

`lookalikes`: values that resemble secrets or personal data but are not (version numbers,
hashes, SRI values, UUIDs, git remotes, public hosts, descriptive names): same fields, `value`
may be a number; with `inner` the leaf must stay equal, otherwise every context must stay.

Classes
-------
named-*          opaque values recognisable only by a secret word in their name
                 (token, secret, password, passwd, pwd, pass, key, auth, credential, signature,
                 sig, session, otp, csrf, xsrf), under names in every case style
format classes   AWS, GitHub (classic + fine-grained), Slack token and webhook, Stripe, Google,
                 OpenAI, Anthropic, SendGrid, Twilio, Mailgun, npm, PyPI, GitLab, Shopify,
                 Square, Heroku, Azure storage key and AD client secret, JWT, PEM private key,
                 Bearer, Basic, URL userinfo; S3 presigned and GCS signed URLs
personal data    email, E.164 phone, national phone (under phone/mobile/tel keys), Luhn-valid
                 card numbers (plain and grouped), CVC, IBAN (plain and grouped), person names,
                 private IPs, internal hostnames
two-pass / encoded  a secret used bare (path segment, innocent JSON keys, headers, WebSocket)
                 before or after the one place where its name marks it; percent-encoded,
                 base64 and base64url forms of secrets marked elsewhere
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import json
import random
import re
import string
import sys
import time
import uuid
from dataclasses import dataclass, field
from urllib.parse import quote, quote_plus, urlencode

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + DIGITS
B64URL = ALNUM + "-_"
B64 = ALNUM + "+/"
PASSWORD_CHARS = ALNUM + "!*-._~^+"
URL_SAFE = re.compile(r"[A-Za-z0-9._~-]+")

API = "api.acme-shop.com"
WWW = "www.acme-shop.com"
START_EPOCH = 1773480413  # 2026-03-14T09:26:53Z

# Words that hold nothing secret, used as names for values that must be found by their shape.
INNOCENT_NAMES = ["note", "ref", "hint", "memo", "label", "detail", "extra", "context", "info",
                  "remark", "comment", "descr", "payload", "value", "misc", "aux", "data",
                  "item", "field", "attr", "blob", "text", "entry", "raw", "opaque", "summary"]


# ---------------------------------------------------------------- the generator state

@dataclass
class Item:
    """One value to plant: `carrier` is the text written into the location (the value itself,
    or e.g. "Bearer <value>", a connection string, a URL); `value` is what must disappear."""
    cls: str
    kind: str            # named | format | pem | pii | pii-keyed | net | cloud
    name: str            # the key / parameter / header name it goes under
    carrier: str
    value: str
    fragments: list = field(default_factory=list)   # [label, text] pairs; default [value]
    local: list = field(default_factory=list)       # texts checked only at the location

    def __post_init__(self):
        if not self.fragments:
            self.fragments = [["value", self.value]]

    @property
    def short(self) -> bool:
        return len(self.value.encode()) < 8

    @property
    def multiline(self) -> bool:
        return "\n" in self.carrier


class Gen:
    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)
        self.entries: list = []
        self.plants: list = []
        self.lookalikes: list = []
        self.used: set = set()
        self.clock = START_EPOCH * 1000 + self.rng.randint(0, 999)

    # random helpers
    def run(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def pick(self, seq):
        return self.rng.choice(seq)

    def unique(self, make) -> str:
        """A value not produced before in this HAR (so every plant is independent)."""
        for _ in range(100):
            v = make()
            if v not in self.used:
                self.used.add(v)
                return v
        raise RuntimeError("cannot make a unique value")

    # entries
    def reserve(self) -> int:
        self.entries.append(None)
        return len(self.entries) - 1

    def plant(self, item: Item, loc: str, where: str, entry: int, path: list, inner=None,
              contexts=()):
        pid = f"p{len(self.plants):04d}"
        self.plants.append({
            "id": pid, "cls": item.cls, "loc": loc, "where": f"entries[{entry}].{fmt_path(path)}: {where}",
            "name": item.name, "value": item.value, "fragments": [list(f) for f in item.fragments],
            "local": list(item.local), "entry": entry, "path": list(path),
            "inner": inner, "contexts": [[list(p), c] for p, c in contexts]})
        return pid

    def lookalike(self, cls: str, value, loc: str, where: str, entry: int, path: list,
                  inner=None, contexts=()):
        lid = f"l{len(self.lookalikes):04d}"
        self.lookalikes.append({
            "id": lid, "cls": cls, "loc": loc, "where": f"entries[{entry}].{fmt_path(path)}: {where}",
            "value": value, "entry": entry, "path": list(path), "inner": inner,
            "contexts": [[list(p), c] for p, c in contexts]})
        return lid

    def started(self) -> str:
        self.clock += self.rng.randint(150, 2500)
        secs, ms = divmod(self.clock, 1000)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{ms:03d}Z"


def fmt_path(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (("." if out else "") + p)
    return out


# ---------------------------------------------------------------- value generators: secrets

def v_token(g): return g.run(ALNUM, g.rng.randint(32, 48))
def v_secret(g): return g.run(B64URL, 40)
def v_password(g): return g.run(ALNUM, 4) + g.run(PASSWORD_CHARS, g.rng.randint(10, 16))
def v_key(g): return g.pick([lambda: g.run(ALNUM, 32), lambda: g.run(HEX, 32)])()
def v_auth(g): return g.run(B64URL, 32)
def v_credential(g): return g.run(ALNUM, 40)
def v_signature(g): return g.run(HEX, 64)
def v_sig(g): return g.run(B64URL, 43)
def v_session(g): return g.pick([lambda: g.run(ALNUM, 32), lambda: g.run(HEX, 40)])()
def v_otp(g): return str(g.rng.randint(100000, 999999))
def v_csrf(g): return g.run(B64URL, 43)


# secret word -> (names in several case styles, value generator)
NAMED = {
    "name-token": (["access_token", "refreshToken", "id_token", "pushToken", "sso-token", "resetToken"], v_token),
    "name-secret": (["client_secret", "clientSecret", "webhook_secret", "secret", "app-secret",
                     "aws_secret_access_key"], v_secret),
    "name-password": (["password", "newPassword", "db_password", "user-password", "adminPassword"], v_password),
    "name-passwd": (["passwd", "smtp_passwd", "rootPasswd"], v_password),
    "name-pwd": (["pwd", "db_pwd", "userPwd"], v_password),
    "name-pass": (["pass", "wifi_pass", "dbPass", "mqtt-pass"], v_password),
    "name-key": (["api_key", "apiKey", "x-api-key", "subscription-key", "Ocp-Apim-Subscription-Key",
                  "license_key", "accessKey"], v_key),
    "name-auth": (["auth", "x-auth", "basicAuth", "auth_code"], v_auth),
    "name-credential": (["credential", "credentials", "gcpCredential", "db-credential"], v_credential),
    "name-signature": (["signature", "x-signature", "webhookSignature", "request_signature"], v_signature),
    "name-sig": (["sig", "urlSig", "img_sig"], v_sig),
    "name-session": (["session", "session_id", "sessionKey", "x-session-id", "user_session"], v_session),
    "name-otp": (["otp", "otp_code", "otpValue", "x-otp"], v_otp),
    "name-csrf": (["csrf", "_csrf", "csrf_token", "x-csrf-token", "csrfToken"], v_csrf),
    "name-xsrf": (["xsrf", "_xsrf", "XSRF-TOKEN", "x-xsrf-token", "xsrfToken"], v_csrf),
}


def f_aws(g):
    v = g.pick(["AKIA", "ASIA"]) + g.run(UPPER + "234567", 16)
    return v, v


def f_github(g):
    v = g.pick(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]) + g.run(ALNUM, 36)
    return v, v


def f_github_pat(g):
    v = "github_pat_" + g.run(ALNUM, 22) + "_" + g.run(ALNUM, 59)
    return v, v


def f_slack_token(g):
    v = (g.pick(["xoxb-", "xoxp-"]) + g.run(DIGITS, 12) + "-" + g.run(DIGITS, 13) + "-"
         + g.run(LOWER + DIGITS, 24))
    return v, v


def f_slack_webhook(g):
    tail = g.run(ALNUM, 24)
    url = f"https://hooks.slack.com/services/T{g.run(UPPER + DIGITS, 8)}/B{g.run(UPPER + DIGITS, 10)}/{tail}"
    return url, tail


def f_stripe(g):
    v = g.pick(["sk_live_", "rk_live_"]) + g.run(ALNUM, g.pick([24, 99]))
    return v, v


def f_google(g):
    v = "AIza" + g.run(B64URL, 35)
    return v, v


def f_openai(g):
    v = "sk-proj-" + g.run(B64URL, 54) + g.run(ALNUM, 20) + "T3BlbkFJ" + g.run(ALNUM, 20) + g.run(B64URL, 54)
    return v, v


def f_anthropic(g):
    v = "sk-ant-api03-" + g.run(B64URL, 93) + "AA"
    return v, v


def f_sendgrid(g):
    v = "SG." + g.run(B64URL, 22) + "." + g.run(B64URL, 43)
    return v, v


def f_twilio(g):
    v = "SK" + g.run(HEX, 32)
    return v, v


def f_mailgun(g):
    v = "key-" + g.run(HEX, 32)
    return v, v


def f_npm(g):
    v = "npm_" + g.run(ALNUM, 36)
    return v, v


def f_pypi(g):
    v = "pypi-AgEIcHlwaS5vcmc" + g.run(B64URL, g.rng.randint(70, 100))
    return v, v


def f_gitlab(g):
    v = "glpat-" + g.run(B64URL, 20)
    return v, v


def f_shopify(g):
    v = g.pick(["shpat_", "shpss_", "shpca_", "shppa_"]) + g.run(HEX, 32)
    return v, v


def f_square(g):
    v = g.pick([lambda: "sq0csp-" + g.run(B64URL, 43), lambda: "EAAA" + g.run(B64URL, 60)])()
    return v, v


def f_heroku(g):
    v = "HRKU-AA" + g.run(B64URL, 58)
    return v, v


def f_azure_storage(g):
    key = base64.b64encode(bytes(g.rng.randrange(256) for _ in range(64))).decode()
    conn = (f"DefaultEndpointsProtocol=https;AccountName=acme{g.run(LOWER, 6)};AccountKey={key};"
            "EndpointSuffix=core.windows.net")
    return conn, key


def f_azure_ad(g):
    v = g.run(ALNUM + "_~.", 3) + g.run(DIGITS, 1) + "Q~" + g.run(ALNUM + "_~.-", 34)
    return v, v


def f_jwt(g):
    alg, fn = g.pick([("HS256", hashlib.sha256), ("HS384", hashlib.sha384), ("HS512", hashlib.sha512)])
    header = {"alg": alg, "typ": "JWT"}
    if g.rng.random() < 0.5:
        header["kid"] = g.run(HEX, 16)
    iat = START_EPOCH - g.rng.randint(0, 3600)
    payload = {"sub": str(uuid.UUID(int=g.rng.getrandbits(128))), "iat": iat, "exp": iat + 3600,
               "scope": g.pick(["read write", "orders:read", "profile"]), "jti": g.run(HEX, 24)}
    enc = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
    signing = enc(json.dumps(header, separators=(",", ":")).encode()) + "." + \
        enc(json.dumps(payload, separators=(",", ":")).encode())
    sig = enc(hmac.new(g.run(ALNUM, 32).encode(), signing.encode(), fn).digest())
    v = signing + "." + sig
    return v, v


PEM_TYPES = ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"]


def f_pem(g):
    kind = g.pick(PEM_TYPES)
    body = base64.b64encode(bytes(g.rng.randrange(256) for _ in range(48 * g.rng.randint(4, 6)))).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    block = f"-----BEGIN {kind}-----\n" + "\n".join(lines) + f"\n-----END {kind}-----"
    return block, block


def f_bearer(g):
    v = g.run(B64URL, 40)
    return "Bearer " + v, v


def f_basic(g):
    user = g.run(LOWER, g.rng.randint(5, 9))
    pw = g.run(ALNUM, 6) + g.run(PASSWORD_CHARS, 10)
    return "Basic " + base64.b64encode(f"{user}:{pw}".encode()).decode(), pw


def f_userinfo(g):
    pw = g.run(ALNUM, 8) + g.run(ALNUM + "-._~", 10)
    user = g.pick(["deploy", "ci", "svc-backup", "git"])
    host = g.pick(["git.acme-shop.com", "db.acme-shop.com", "registry.acme-shop.com"])
    return f"https://{user}:{pw}@{host}/{g.run(LOWER, 6)}/{g.run(LOWER, 5)}.git", pw


FORMATS = {
    "aws-access-key": f_aws, "github-token": f_github, "github-pat": f_github_pat,
    "slack-token": f_slack_token, "slack-webhook": f_slack_webhook, "stripe-key": f_stripe,
    "google-api-key": f_google, "openai-key": f_openai, "anthropic-key": f_anthropic,
    "sendgrid-key": f_sendgrid, "twilio-key": f_twilio, "mailgun-key": f_mailgun, "npm-token": f_npm,
    "pypi-token": f_pypi, "gitlab-token": f_gitlab, "shopify-token": f_shopify, "square-token": f_square,
    "heroku-key": f_heroku, "azure-storage-key": f_azure_storage, "azure-ad-secret": f_azure_ad,
    "jwt": f_jwt, "bearer": f_bearer, "basic-auth": f_basic, "url-userinfo": f_userinfo,
}


# ---------------------------------------------------------------- value generators: personal data

SYLLABLES = ["ka", "vo", "rel", "li", "the", "ssa", "mi", "ne", "bar", "to", "lo", "mew", "ori", "dor",
             "wyn", "el", "is", "qua", "zen", "fab", "ric", "ul", "mar", "gol", "yth", "ban", "sev"]


def person_word(g, min_len=8) -> str:
    while True:
        w = "".join(g.pick(SYLLABLES) for _ in range(g.rng.randint(3, 5)))
        if len(w) >= min_len:
            return w.capitalize()


def p_email(g):
    v = (f"{person_word(g).lower()}.{person_word(g).lower()}{g.rng.randint(10, 9999)}@"
         f"{g.pick(['northwind-mail.com', 'fabrikam.io', 'contoso-post.net', 'tailspin.org', 'wingtip.dev'])}")
    return v, v


def nanp(g) -> tuple:
    while True:
        a, b = g.rng.randint(201, 989), g.rng.randint(201, 989)
        if b != 555 and a % 100 != 11 and b % 100 != 11:
            return str(a), str(b), f"{g.rng.randint(0, 9999):04d}"


def p_phone_e164(g):
    a, b, c = nanp(g)
    v = g.pick([f"+1{a}{b}{c}", f"+447{g.run(DIGITS, 9)}", f"+49151{g.run(DIGITS, 8)}"])
    return v, v


def p_phone_national(g):
    a, b, c = nanp(g)
    v = g.pick([f"({a}) {b}-{c}", f"{a}-{b}-{c}", f"{a}.{b}.{c}", f"07{g.run(DIGITS, 3)} {g.run(DIGITS, 6)}"])
    return v, v


def luhn_check_digit(payload: str) -> str:
    total = 0
    for i, d in enumerate(reversed(payload)):
        n = int(d)
        if i % 2 == 0:
            n = n * 2 - 9 if n * 2 > 9 else n * 2
        total += n
    return str((10 - total % 10) % 10)


def luhn_valid(number: str) -> bool:
    return luhn_check_digit(number[:-1]) == number[-1]


def card_number(g) -> str:
    while True:
        prefix, length = g.pick([("4", 16), ("5" + str(g.rng.randint(1, 5)), 16),
                                 ("2" + str(g.rng.randint(221, 720)), 16), ("3" + g.pick("47"), 15),
                                 ("6011", 16)])
        payload = prefix + g.run(DIGITS, length - len(prefix) - 1)
        if not payload.startswith("400000"):
            return payload + luhn_check_digit(payload)


def grouped(number: str) -> str:
    if len(number) == 15:
        return f"{number[:4]} {number[4:10]} {number[10:]}"
    return " ".join(number[i:i + 4] for i in range(0, len(number), 4))


def p_card(g):
    v = card_number(g)
    return v, v


def p_card_spaced(g):
    n = card_number(g)
    return grouped(n), grouped(n)


def p_cvc(g):
    v = str(g.rng.randint(101, 998))
    return v, v


def iban_number(g) -> str:
    country, bban = g.pick([
        ("DE", lambda: g.run(DIGITS, 18)),
        ("GB", lambda: g.run(UPPER, 4) + g.run(DIGITS, 14)),
        ("FR", lambda: g.run(DIGITS, 10) + g.run(UPPER + DIGITS, 11) + g.run(DIGITS, 2)),
        ("NL", lambda: g.run(UPPER, 4) + g.run(DIGITS, 10)),
    ])
    bban = bban()
    num = int("".join(str(int(c, 36)) for c in bban + country + "00"))
    return f"{country}{98 - num % 97:02d}{bban}"


def iban_valid(iban: str) -> bool:
    s = iban.replace(" ", "")
    return int("".join(str(int(c, 36)) for c in s[4:] + s[:4])) % 97 == 1


def p_iban(g):
    v = iban_number(g)
    return v, v


def p_iban_spaced(g):
    n = iban_number(g)
    v = " ".join(n[i:i + 4] for i in range(0, len(n), 4))
    return v, v


PERSON_KEYS = ["firstName", "lastName", "fullName", "givenName", "familyName", "displayName",
               "first_name", "last_name", "full_name", "given_name", "family_name", "display_name"]


def p_person(g, name: str):
    if any(w in name.lower() for w in ("full", "display")):
        v = f"{person_word(g)} {person_word(g)}"
    else:
        v = person_word(g)
    return v, v


def p_person_short(g, name: str):
    v = g.pick(SYLLABLES).capitalize() + g.pick(["a", "o", "i"])
    return v, v


def n_private_ip(g):
    r = g.rng.randint
    v = g.pick([lambda: f"10.{r(10, 254)}.{r(10, 254)}.{r(10, 254)}",
                lambda: f"172.{r(16, 31)}.{r(10, 254)}.{r(10, 254)}",
                lambda: f"192.168.{r(10, 254)}.{r(10, 254)}",
                lambda: f"fd{g.run(HEX, 2)}:{g.run(HEX, 4)}:{g.run(HEX, 4)}:{r(1, 9)}::{g.run(HEX, 2)}"])()
    return v, v


def n_internal_host(g):
    v = (f"{g.pick(['billing', 'ledger', 'auth-proxy', 'db', 'grafana', 'vault'])}-"
         f"{g.run(LOWER + DIGITS, 4)}.{g.pick(['internal', 'corp', 'lan', 'intranet', 'local'])}")
    return v, v


# class -> (kind, names, generator); generators of person names take the chosen name.
PII = {
    "email": ("pii", ["email", "contactEmail", "billing_email", "owner", "user"], p_email),
    "phone-e164": ("pii", ["phone", "phoneNumber", "mobile", "msisdn", "tel"], p_phone_e164),
    "card": ("pii", ["cardNumber", "card_number", "pan", "ccNumber"], p_card),
    "card-grouped": ("pii", ["cardNumber", "card_number"], p_card_spaced),
    "iban": ("pii", ["iban", "payoutIban", "bank_iban", "accountIban"], p_iban),
    "iban-grouped": ("pii", ["iban", "payoutIban"], p_iban_spaced),
    "phone-national": ("pii-keyed", ["phone", "phoneNumber", "mobile", "mobile_phone", "tel", "homeTel",
                                     "contact-phone"], p_phone_national),
    "cvc": ("pii-keyed", ["cvc", "cvv", "cvv2", "card_cvc", "cvcCode"], p_cvc),
    "person-name": ("pii-keyed", PERSON_KEYS, None),
    "private-ip": ("net", ["clientIp", "upstream", "origin_ip", "lanAddress"], n_private_ip),
    "internal-host": ("net", ["backend", "upstreamHost", "db_host", "callbackHost"], n_internal_host),
}

# Grouped card numbers and IBANs go only under their keys in structured locations (one-syllable
# person names too: see short_name_item); the plain forms go everywhere.
ONLY = {
    "card-grouped": {"json-nested", "graphql", "ws-send-json", "b64-json", "form", "query"},
    "iban-grouped": {"json-nested", "graphql", "ws-receive-json", "b64-json", "form"},
}


def make_item(g: Gen, cls: str) -> Item:
    """A fresh (unique) value of class `cls` with a name to plant it under."""
    if cls in NAMED:
        names, gen = NAMED[cls]
        v = g.unique(lambda: gen(g))
        return Item(cls, "named", g.pick(names), v, v)
    if cls in FORMATS:
        holder = {}

        def make():
            holder["c"], v = FORMATS[cls](g)
            return v
        v = g.unique(make)
        frags = []
        if cls == "jwt":   # the placeholder keeps the header (alg/typ) on purpose, not the rest
            _, payload, sig = v.split(".")
            frags = [["value", v], ["claims (payload part)", payload], ["signature part", sig]]
        return Item(cls, "format", g.pick(INNOCENT_NAMES), holder["c"], v, fragments=frags)
    if cls == "pem":
        v = g.unique(lambda: f_pem(g)[1])
        lines = v.split("\n")
        frags = [[f"body line {i}", ln] for i, ln in enumerate(lines[1:-1], 1)]
        return Item(cls, "pem", g.pick(INNOCENT_NAMES), v, v, fragments=frags, local=[lines[0], lines[-1]])
    kind, names, gen = PII[cls]
    name = g.pick(names)
    if cls == "person-name":
        v = g.unique(lambda: p_person(g, name)[1])
    else:
        v = g.unique(lambda: gen(g)[1])
    frags = [["value", v]]
    if cls == "phone-national":
        frags.append(["alt: digits only", re.sub(r"\D", "", v)])
    if cls in ("card-grouped", "iban-grouped"):
        frags.append(["alt: without spaces", v.replace(" ", "")])
    return Item(cls, kind, name, v, v, fragments=frags)


def short_name_item(g: Gen) -> Item:
    name = g.pick(["givenName", "firstName", "first_name"])
    v = g.unique(lambda: p_person_short(g, name)[1])
    return Item("person-name", "pii-keyed", name, v, v)


ALL_CLASSES = list(NAMED) + list(FORMATS) + ["pem"] + list(PII)


# ---------------------------------------------------------------- locations

@dataclass
class Loc:
    kinds: set
    multiline: bool = False   # PEM blocks fit
    no_space: bool = False    # carriers with spaces do not fit
    urlsafe: bool = False     # format carriers must be URL-path safe (emails allowed)


K_ALL = {"named", "format", "pem", "pii", "pii-keyed", "net"}
K_FREE = {"format", "pem", "pii", "net"}
LOCATIONS = {
    "query": Loc({"named", "format", "pii", "pii-keyed", "net"}),
    "url-path": Loc({"format", "pii", "net"}, no_space=True, urlsafe=True),
    "req-headers": Loc({"named", "format", "pii", "net"}),
    "resp-headers": Loc({"named", "format"}),
    "cookies": Loc({"named", "format"}, no_space=True, urlsafe=True),
    "json-nested": Loc(K_ALL, multiline=True),
    "json-in-string": Loc(K_ALL, multiline=True),
    "json-free-text": Loc(K_FREE, multiline=True),
    "ndjson": Loc(K_ALL, multiline=True),
    "sse-json": Loc(K_ALL, multiline=True),
    "sse-text": Loc({"format", "pii", "net"}),
    "form": Loc(K_ALL, multiline=True),
    "multipart": Loc(K_ALL, multiline=True),
    "xml-element": Loc(K_ALL, multiline=True),
    "xml-attribute": Loc({"named", "format", "pii", "pii-keyed", "net"}),
    "html-hidden": Loc({"named", "format", "pii", "pii-keyed", "net"}),
    "html-meta": Loc({"named"}),
    "html-script-json": Loc(K_ALL, multiline=True),
    "html-text": Loc(K_FREE, multiline=True),
    "graphql": Loc(K_ALL, multiline=True),
    "b64-json": Loc(K_ALL, multiline=True),
    "b64-text": Loc({"named", "format", "pem", "pii", "net"}, multiline=True),
    "ws-send-json": Loc(K_ALL, multiline=True),
    "ws-receive-json": Loc(K_ALL, multiline=True),
    "ws-text": Loc(K_FREE, multiline=True),
    "env": Loc(K_ALL, multiline=True),
    "ini": Loc({"named", "format", "pii", "pii-keyed", "net"}),
    "yaml": Loc(K_ALL, multiline=True),
    "log-text": Loc({"named", "format", "pem", "pii", "net"}, multiline=True),
    "binary-proto": Loc({"format", "pii"}, no_space=True),
    "binary-grpc": Loc({"format", "pii"}, no_space=True),
}


def eligible(item: Item, loc: str) -> bool:
    spec = LOCATIONS[loc]
    if item.kind not in spec.kinds:
        return False
    if item.cls in ONLY and loc not in ONLY[item.cls]:
        return False
    if item.multiline and not spec.multiline:
        return False
    if spec.no_space and " " in item.carrier:
        return False
    if spec.urlsafe and item.kind != "named" and item.cls != "email" and not URL_SAFE.fullmatch(item.carrier):
        return False
    return True


def items_for(g: Gen, loc: str) -> list:
    """One fresh item of every class that fits the location."""
    out = []
    for cls in ALL_CLASSES:
        for _ in range(20):  # a class may need a value that fits (e.g. a URL-safe carrier)
            it = make_item(g, cls)
            if eligible(it, loc):
                out.append(it)
                break
            if not eligible_class(cls, loc):
                break
    if loc in ("json-nested", "graphql", "form"):
        out.append(short_name_item(g))
    return uniquify_names(g, out)


def names_of(cls: str) -> list:
    if cls in NAMED:
        return NAMED[cls][0]
    if cls in PII:
        return PII[cls][1]
    return INNOCENT_NAMES


def uniquify_names(g: Gen, items: list) -> list:
    """No two items of one location share a name (a JSON object or a form would lose one)."""
    seen = set()
    for it in items:
        if it.name.lower() in seen:
            free = [n for n in names_of(it.cls) if n.lower() not in seen]
            it.name = g.pick(free) if free else next(f"{it.name}{n}" for n in range(2, 99)
                                                      if f"{it.name}{n}".lower() not in seen)
        seen.add(it.name.lower())
    return items


def eligible_class(cls: str, loc: str) -> bool:
    """Whether some value of `cls` could fit (so items_for does not retry hopeless classes)."""
    spec = LOCATIONS[loc]
    kind = "named" if cls in NAMED else "pem" if cls == "pem" else "format" if cls in FORMATS else PII[cls][0]
    if kind not in spec.kinds or (cls in ONLY and loc not in ONLY[cls]):
        return False
    if kind == "pem" and not spec.multiline:
        return False
    if cls in ("bearer", "basic-auth") and spec.no_space:
        return False
    if spec.urlsafe and cls in ("slack-webhook", "azure-storage-key", "url-userinfo"):
        return False
    if spec.urlsafe and kind in ("pii", "pii-keyed") and cls != "email":
        return False
    return True


# ---------------------------------------------------------------- name styles

def words(name: str) -> list:
    return re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", name)


def header_name(name: str) -> str:
    w = words(name)
    if not w or w[0].lower() != "x":
        w = ["x"] + w
    return "-".join(p.capitalize() if p.lower() != "xsrf" and p.lower() != "csrf" else p.upper() for p in w)


def env_name(name: str) -> str:
    return "_".join(p.upper() for p in words(name))


def free_sentence(g: Gen, carrier: str) -> str:
    before = g.pick(["fyi", "copied from the dashboard:", "old one was", "please use", "see",
                     "rotated", "check", "reach out via", "noted:"])
    after = g.pick(["yesterday", "for the sandbox", "thanks", "(prod)", "until friday", "asap", "-- ops"])
    return f"{before} {carrier} {after}"


# ---------------------------------------------------------------- HAR building blocks

def hdr(name, value):
    return {"name": name, "value": value}


def query_pairs(url: str) -> list:
    from urllib.parse import parse_qsl, urlsplit
    return [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)]


def cookies_from_header(value: str) -> list:
    out = []
    for piece in value.split(";"):
        piece = piece.strip()
        if piece:
            k, _, v = piece.partition("=")
            out.append({"name": k, "value": v})
    return out


def set_cookie_obj(value: str) -> dict:
    first, *attrs = [a.strip() for a in value.split(";")]
    k, _, v = first.partition("=")
    c = {"name": k, "value": v}
    for a in attrs:
        an, _, av = a.partition("=")
        if an.lower() == "path":
            c["path"] = av
        elif an.lower() == "domain":
            c["domain"] = av
        elif an.lower() == "httponly":
            c["httpOnly"] = True
        elif an.lower() == "secure":
            c["secure"] = True
    return c


def make_entry(g: Gen, idx: int, method: str, url: str, req_headers: list, *, req_body=None,
               req_mime=None, req_params=None, req_b64=False, status=200, status_text="OK",
               resp_headers=(), resp_body="", resp_mime="application/json", resp_b64=False,
               redirect="", server_ip=None, extra=None) -> dict:
    """Builds entry `idx`. Bodies are str, or bytes when *_b64 (stored base64). Host and
    Content-Length headers are added; cookies and queryString follow the headers and URL."""
    host = url.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
    headers = [hdr("Host", host)] + list(req_headers)
    request = {"method": method, "url": url, "httpVersion": "HTTP/1.1", "cookies": [], "headers": headers,
               "queryString": query_pairs(url), "headersSize": -1, "bodySize": 0}
    for h in headers:
        if h["name"].lower() == "cookie":
            request["cookies"] += cookies_from_header(h["value"])
    if req_body is not None:
        raw = req_body if isinstance(req_body, bytes) else req_body.encode()
        post = {"mimeType": req_mime}
        if req_params is not None:
            post["params"] = req_params
        if req_b64:
            post["text"] = base64.b64encode(raw).decode()
            post["encoding"] = "base64"
        else:
            post["text"] = req_body
        request["postData"] = post
        request["bodySize"] = len(raw)
        headers.append(hdr("Content-Type", req_mime))
        headers.append(hdr("Content-Length", str(len(raw))))
    raw_resp = resp_body if isinstance(resp_body, bytes) else resp_body.encode()
    rheaders = list(resp_headers)
    if status != 101:
        rheaders = [hdr("Content-Type", resp_mime), hdr("Content-Length", str(len(raw_resp)))] + rheaders
    content = {"size": len(raw_resp), "mimeType": resp_mime if status != 101 else "x-unknown"}
    if raw_resp:
        if resp_b64:
            content["text"] = base64.b64encode(raw_resp).decode()
            content["encoding"] = "base64"
        else:
            content["text"] = resp_body
    response = {"status": status, "statusText": status_text, "httpVersion": "HTTP/1.1",
                "cookies": [set_cookie_obj(h["value"]) for h in rheaders if h["name"].lower() == "set-cookie"],
                "headers": rheaders, "content": content, "redirectURL": redirect, "headersSize": -1,
                "bodySize": len(raw_resp)}
    send, wait, receive = g.rng.randint(0, 3), g.rng.randint(8, 240), g.rng.randint(0, 30)
    entry = {"startedDateTime": g.started(), "time": send + wait + receive, "request": request,
             "response": response, "cache": {}, "timings": {"send": send, "wait": wait, "receive": receive},
             "serverIPAddress": server_ip or g.pick(["151.101.65.140", "104.18.32.7", "93.184.215.14"]),
             "connection": str(g.rng.randint(1000, 99999))}
    if extra:
        entry.update(extra)
    g.entries[idx] = entry
    return entry


def std_headers(g: Gen, accept="application/json") -> list:
    return [hdr("User-Agent", "AcmeShop/5.12.0 (iPhone; iOS 18.3; Scale/3.00)"), hdr("Accept", accept),
            hdr("Accept-Language", "en-US;q=1.0, de-DE;q=0.9")]


# ---------------------------------------------------------------- look-alikes

def lookalike_values(g: Gen) -> dict:
    png = b"\x89PNG\r\n\x1a\n" + bytes(g.rng.randrange(256) for _ in range(90))
    while True:
        tracking = g.run(DIGITS, 16)
        if not luhn_valid(tracking):
            break
    return {
        "firmwareVersion": ("version-dotted-quad", "10.4.1.7"),
        "repository": ("git-remote", f"git@github.com:{g.pick(['acme', 'shopco'])}/{g.pick(['ios-app', 'web'])}.git"),
        "sha256": ("content-hash", g.run(HEX, 64)),
        "integrity": ("sri", "sha384-" + base64.b64encode(bytes(g.rng.randrange(256) for _ in range(48))).decode()),
        "orderId": ("uuid", str(uuid.UUID(int=g.rng.getrandbits(128), version=4))),
        "avatar": ("data-image", "data:image/png;base64," + base64.b64encode(png).decode()),
        "createdAt": ("iso-date", "2026-03-14T09:26:53Z"),
        "homepage": ("public-host", "https://developer.mozilla.org/en-US/docs/Web/HTTP"),
        "cdnHost": ("public-host", "cdn.jsdelivr.net"),
        "token_type": ("descriptive-name", "Bearer"),
        "expires_in": ("descriptive-name", 3600),
        "passwordPolicy": ("descriptive-name", "min-12-chars-upper-lower-digit"),
        "keyboardLayout": ("keyboard-monkey", "de-DE-qwertz-nodeadkeys"),
        "monkeyTestSeed": ("keyboard-monkey", f"chaos-monkey-run-{g.rng.randint(1000, 9999)}"),
        "tokenizer": ("descriptive-name", "cl100k_base"),
        "sessionCount": ("descriptive-name", 42),
        "tokenExpiresIn": ("descriptive-name", 900),
        "trackingNumber": ("luhn-invalid-number", tracking),
        "commit": ("git-sha", g.run(HEX, 40)),
        "timestamp": ("epoch-millis", 1773480413123),
    }


# Look-alike subsets that fit text formats (strings only, one line, no data image).
TEXT_LOOKALIKES = ["firmwareVersion", "repository", "sha256", "orderId", "createdAt", "homepage",
                   "token_type", "expires_in", "passwordPolicy", "keyboardLayout", "monkeyTestSeed",
                   "tokenizer", "trackingNumber", "commit"]


# ---------------------------------------------------------------- JSON documents with plants

def place_json(doc: dict, slots: list, name: str, value):
    """Puts name: value into the first slot (a path of keys inside doc) that does not have the
    name yet; returns the full key path."""
    for slot in slots:
        obj = doc
        for k in slot:
            obj = obj[k]
        if isinstance(obj, list):
            obj.append({name: value})
            return list(slot) + [len(obj) - 1, name]
        if name not in obj:
            obj[name] = value
            return list(slot) + [name]
    raise AssertionError("no free slot")


def json_doc_with(g: Gen, items: list, loc: str, where: str, entry: int, path: list, prefix_steps=(),
                  la: dict | None = None, wrap=None, number_short=False) -> str:
    """A nested JSON document holding every item under its name (and the look-alikes); each
    plant is registered with its inner key path. `wrap(doc)` may embed the document elsewhere
    (its return value is (outer, key path of doc inside outer))."""
    doc = {"data": {"account": {"id": g.rng.randint(1000, 99999), "profile": {}},
                    "devices": [], "settings": {"nested": {"deep": {}}}},
           "meta": {"requestId": str(uuid.UUID(int=g.rng.getrandbits(128))), "tags": []}}
    slots = [("data", "account", "profile"), ("data", "settings", "nested", "deep"), ("data", "account"),
             ("data", "devices")]
    placed = []
    for i, it in enumerate(items):
        rot = slots[i % 3:] + slots[:i % 3]
        value = it.carrier
        if number_short and it.cls == "cvc":
            value = int(it.value)
        placed.append((it, place_json(doc, rot, it.name, value)))
    la_placed = []
    for name, (cls, v) in (la or {}).items():
        la_placed.append((name, cls, v, place_json(doc, [("data", "account"), ("data", "settings"), ("meta",)], name, v)))
    outer, doc_path = (doc, []) if wrap is None else wrap(doc)
    for it, keys in placed:
        g.plant(it, loc, where, entry, path, inner=list(prefix_steps) + [["json", doc_path + keys]])
    for name, cls, v, keys in la_placed:
        g.lookalike(cls, v, loc, where + f" (look-alike {name})", entry, path,
                    inner=list(prefix_steps) + [["json", doc_path + keys]])
    return outer


# ---------------------------------------------------------------- entries: each builds one location group

def e_html_page(g: Gen, la: dict):
    """HTML: meta tags, hidden inputs, inline script JSON (two kinds), free text, a presigned
    download link with &amp;, an SRI link, a data: image."""
    idx = g.reserve()
    P = ["response", "content", "text"]
    parts = ["<!doctype html>", "<html lang=\"en\"><head>", "<meta charset=\"utf-8\">",
             "<title>Your account - Acme Shop</title>"]
    for it in items_for(g, "html-meta"):
        name = g.pick(["csrf-token", "csrf-param-token", "xsrf-token"]) if it.cls in ("name-csrf", "name-xsrf") else header_name(it.name).lower()[2:]
        it.name = name
        tag = f'<meta name="{html.escape(name)}" content="{html.escape(it.carrier)}">'
        parts.append(tag)
        g.plant(it, "html-meta", "HTML <meta name content>", idx, P, contexts=[(P, tag)] if it.short else ())
    sri = la["integrity"][1]
    link = (f'<link rel="stylesheet" href="https://{la["cdnHost"][1]}/npm/bootstrap@5.3.3/dist/css/bootstrap.min.css" '
            f'integrity="{sri}" crossorigin="anonymous">')
    parts.append(link)
    g.lookalike("sri", sri, "html", "HTML <link integrity>", idx, P, contexts=[(P, link)])
    g.lookalike("public-host", la["cdnHost"][1], "html", "HTML <link href> host", idx, P,
                contexts=[(P, f'href="https://{la["cdnHost"][1]}/npm/')])
    # inline script JSON, two styles
    script_items = items_for(g, "html-script-json")
    half = len(script_items) // 2
    for n, (chunk, style) in enumerate(((script_items[:half], "assign"), (script_items[half:], "next-data"))):
        state = {"user": {}, "config": {"env": "production"}}
        for it in chunk:
            (state["user"] if n == 0 else state["config"])[it.name] = it.carrier
        text = json.dumps(state)
        if style == "assign":
            parts.append(f"<script>window.__APP_STATE__ = {text};</script>")
        else:
            parts.append(f'<script type="application/json" id="__NEXT_DATA__">{text}</script>')
        for it in chunk:
            ctx = json.dumps({it.name: it.carrier})[1:-1]
            g.plant(it, "html-script-json", f"HTML inline <script> JSON ({style})", idx, P,
                    contexts=[(P, ctx)] if it.short else ())
    parts.append("</head><body>")
    parts.append('<form method="post" action="/account/update">')
    for it in items_for(g, "html-hidden"):
        tag = f'<input type="hidden" name="{html.escape(it.name)}" value="{html.escape(it.carrier)}">'
        parts.append(tag)
        g.plant(it, "html-hidden", "HTML hidden <input>", idx, P, contexts=[(P, tag)] if it.short else ())
    fw = la["firmwareVersion"][1]
    tag = f'<input type="hidden" name="firmwareVersion" value="{fw}">'
    parts.append(tag)
    g.lookalike("version-dotted-quad", fw, "html", "HTML hidden input firmwareVersion", idx, P, contexts=[(P, tag)])
    parts.append('<button type="submit">Save</button></form>')
    img = f'<img src="{la["avatar"][1]}" alt="avatar" width="48">'
    parts.append(img)
    g.lookalike("data-image", la["avatar"][1], "html", "HTML <img src=data:>", idx, P, contexts=[(P, img)])
    s3_url, s3_items = s3_presigned(g)
    gcs_url, gcs_items = gcs_signed(g)
    for url, its in ((s3_url, s3_items), (gcs_url, gcs_items)):
        parts.append(f'<a href="{html.escape(url)}">Download invoice</a>')
        for it in its:
            g.plant(it, "html-href", "HTML <a href> with &amp; (signed URL)", idx, P)
    for it in items_for(g, "html-text"):
        if it.multiline:
            parts.append(f"<pre>{it.carrier}</pre>")
        else:
            parts.append(f"<p>{html.escape(free_sentence(g, it.carrier))}</p>")
        g.plant(it, "html-text", "HTML free text", idx, P)
    repo = la["repository"][1]
    parts.append(f"<p>Source: <code>{repo}</code></p>")
    g.lookalike("git-remote", repo, "html", "HTML text git remote", idx, P, contexts=[(P, f"<code>{repo}</code>")])
    parts.append("</body></html>")
    body = "\n".join(parts)
    make_entry(g, idx, "GET", f"https://{WWW}/account", std_headers(g, "text/html"),
               resp_body=body, resp_mime="text/html; charset=utf-8")


def s3_presigned(g: Gen):
    """An S3 presigned URL: X-Amz-Security-Token, X-Amz-Credential (with its key id) and
    X-Amz-Signature are planted."""
    token = g.unique(lambda: "IQoJb3JpZ2luX2Vj" + g.run(B64, 280) + "==")
    key_id = g.unique(lambda: "ASIA" + g.run(UPPER + "234567", 16))
    cred = f"{key_id}/20260314/eu-west-1/s3/aws4_request"
    sig = g.unique(lambda: g.run(HEX, 64))
    q = urlencode([("X-Amz-Algorithm", "AWS4-HMAC-SHA256"), ("X-Amz-Credential", cred),
                   ("X-Amz-Date", "20260314T092653Z"), ("X-Amz-Expires", "900"),
                   ("X-Amz-Security-Token", token), ("X-Amz-SignedHeaders", "host"), ("X-Amz-Signature", sig)])
    url = f"https://acme-invoices.s3.eu-west-1.amazonaws.com/invoices/{g.rng.randint(10000, 99999)}.pdf?{q}"
    items = [Item("amz-security-token", "cloud", "X-Amz-Security-Token", url, token),
             Item("amz-credential", "cloud", "X-Amz-Credential", url, cred,
                  fragments=[["whole value", cred], ["key id", key_id]]),
             Item("amz-signature", "cloud", "X-Amz-Signature", url, sig)]
    return url, items


def gcs_signed(g: Gen):
    sa = g.unique(lambda: f"uploader-{g.run(LOWER + DIGITS, 6)}@acme-prod-{g.run(DIGITS, 6)}.iam.gserviceaccount.com")
    cred = f"{sa}/20260314/auto/storage/goog4_request"
    sig = g.unique(lambda: g.run(HEX, 512))
    q = urlencode([("X-Goog-Algorithm", "GOOG4-RSA-SHA256"), ("X-Goog-Credential", cred),
                   ("X-Goog-Date", "20260314T092653Z"), ("X-Goog-Expires", "600"),
                   ("X-Goog-SignedHeaders", "host"), ("X-Goog-Signature", sig)])
    url = f"https://storage.googleapis.com/acme-exports/{g.run(LOWER, 8)}.csv?{q}"
    items = [Item("goog-credential", "cloud", "X-Goog-Credential", url, cred,
                  fragments=[["whole value", cred], ["service account", sa]]),
             Item("goog-signature", "cloud", "X-Goog-Signature", url, sig)]
    return url, items


def named_url(g: Gen, items: list) -> str:
    """A partner callback URL whose query holds the named items."""
    q = urlencode([(it.name, it.carrier) for it in items])
    return f"https://partner.example-pay.com/callback/{g.run(LOWER, 5)}?{q}"


def e_query_headers_cookies(g: Gen, la: dict, fwd: str, enc_a: str, rev: str):
    """Entry 1: FWD bare in the path; query, request headers, cookies; response JSON nested
    (REV marked by its name here); ENC_A marked by name in X-Api-Key."""
    idx = g.reserve()
    url_items = items_for(g, "query")
    pairs = [(it.name, it.carrier) for it in url_items]
    la_q = [(k, la[k][1]) for k in ("firmwareVersion", "token_type", "expires_in", "passwordPolicy",
                                    "keyboardLayout", "orderId", "createdAt")]
    pairs += [(k, str(v)) for k, v in la_q]
    query = urlencode(pairs, quote_via=quote)
    url = f"https://{API}/v1/exports/{fwd}/download?{query}"
    g.plant(Item("two-pass-forward", "named", "path", fwd, fwd), "two-pass",
            "FWD bare as a path segment, the first place it appears (named only in entry 5)", idx, ["request", "url"])
    for i, it in enumerate(url_items):
        ctx = f"{quote(it.name, safe='')}={quote(it.carrier, safe='')}"
        g.plant(it, "query", "URL query parameter", idx, ["request", "queryString", i, "value"],
                contexts=[(["request", "url"], ctx)] if it.short else ())
    for j, (k, v) in enumerate(la_q):
        g.lookalike(la[k][0], str(v), "query", f"query look-alike {k}", idx,
                    ["request", "queryString", len(url_items) + j, "value"])
    headers = std_headers(g)
    hdr_items = items_for(g, "req-headers")
    base = 1  # Host comes first
    for it in hdr_items:
        if it.kind == "named":
            name = header_name(it.name) if not it.name[0].isupper() else it.name
        elif it.kind == "pii":
            name = {"email": "X-User-Email", "phone-e164": "X-Customer-Phone", "card": "X-Card-Number",
                    "iban": "X-Payout-Iban"}.get(it.cls, "X-Customer-Ref")
        elif it.cls == "private-ip":
            name = "X-Forwarded-For"
        elif it.cls == "internal-host":
            name = "X-Backend-Host"
        else:
            name = "X-" + it.name.capitalize() + "-Hint"
        headers.append(hdr(name, it.carrier))
        g.plant(it, "req-headers", f"request header {name}", idx, ["request", "headers", base + len(headers) - 1, "value"])
    enc_item = Item("two-pass-encoded", "named", "X-Api-Key", enc_a, enc_a)
    headers.append(hdr("X-Api-Key", enc_a))
    g.plant(enc_item, "req-headers", "ENC_A marked by its name (X-Api-Key)", idx,
            ["request", "headers", base + len(headers) - 1, "value"])
    headers.append(hdr("X-Firmware-Version", la["firmwareVersion"][1]))
    g.lookalike("version-dotted-quad", la["firmwareVersion"][1], "req-headers", "X-Firmware-Version header", idx,
                ["request", "headers", base + len(headers) - 1, "value"])
    tp = f"00-{g.run(HEX, 32)}-{g.run(HEX, 16)}-01"
    headers.append(hdr("traceparent", tp))
    g.lookalike("trace-id", tp, "req-headers", "traceparent header", idx, ["request", "headers", base + len(headers) - 1, "value"])
    # cookies: half in the request Cookie header, half as Set-Cookie
    ck_items = items_for(g, "cookies")
    req_ck, resp_ck = ck_items[::2], ck_items[1::2]
    cookie_value = "; ".join([f"{it.name}={it.carrier}" for it in req_ck] + ["theme=dark", "lang=en-US"])
    headers.append(hdr("Cookie", cookie_value))
    cookie_hdr_path = ["request", "headers", base + len(headers) - 1, "value"]
    for i, it in enumerate(req_ck):
        g.plant(it, "cookies", f"request cookie {it.name}", idx, ["request", "cookies", i, "value"],
                contexts=[(cookie_hdr_path, f"{it.name}={it.carrier}")] if it.short else ())
    rheaders = [hdr("Cache-Control", "no-store"), hdr("ETag", f'"{la["sha256"][1]}"')]
    g.lookalike("content-hash", f'"{la["sha256"][1]}"', "resp-headers", "ETag header (sha256)", idx,
                ["response", "headers", 2 + 1, "value"])
    for i, it in enumerate(resp_ck):
        rheaders.append(hdr("Set-Cookie", f"{it.name}={it.carrier}; Path=/; Domain=.acme-shop.com; Secure; HttpOnly"))
        g.plant(it, "cookies", f"Set-Cookie {it.name}", idx, ["response", "cookies", i, "value"],
                contexts=[(["response", "headers", 2 + len(rheaders) - 1, "value"], f"{it.name}={it.carrier};")]
                if it.short else ())
    P = ["response", "content", "text"]
    items = items_for(g, "json-nested")
    rev_item = Item("two-pass-reverse", "named", "refresh_token", rev, rev)
    doc = json_doc_with(g, items + [rev_item], "json-nested", "JSON body, nested objects", idx, P,
                        la=la, number_short=True)
    g.plants[-1]["loc"] = "two-pass"  # rev_item was registered last
    g.plants[-1]["where"] += " (REV marked by its name; used bare in entries 2, 5 and the WebSocket)"
    make_entry(g, idx, "GET", url, headers, resp_headers=rheaders, resp_body=json.dumps(doc, indent=2))
    return idx


def e_events_json_in_string(g: Gen, la: dict, fwd: str, rev: str, enc_b: str):
    """Entry 2: JSON inside JSON strings (twice nested); ENC_B percent-encoded in the query under
    an innocent name; response: FWD and REV under innocent keys, base64 of ENC_B."""
    idx = g.reserve()
    items = items_for(g, "json-in-string")
    s3_url, s3_items = s3_presigned(g)
    half = len(items) // 2
    inner1 = {"screen": "checkout", "fields": {it.name: it.carrier for it in items[:half]}}
    inner2 = {"device": {it.name: it.carrier for it in items[half:]}, "download": s3_url}
    for k in ("firmwareVersion", "expires_in", "passwordPolicy", "keyboardLayout"):
        inner2[k] = la[k][1]
    outer = {"event": "checkout_submitted", "payload": json.dumps(inner1),
             "context": json.dumps({"trace": json.dumps(inner2), "v": 3})}
    P = ["request", "postData", "text"]
    for it in items[:half]:
        g.plant(it, "json-in-string", "JSON in a JSON string", idx, P,
                inner=[["json", ["payload"]], ["json", ["fields", it.name]]])
    for it in items[half:]:
        g.plant(it, "json-in-string", "JSON in a JSON string in a JSON string", idx, P,
                inner=[["json", ["context"]], ["json", ["trace"]], ["json", ["device", it.name]]])
    for it in s3_items:
        g.plant(it, "json-in-string", "signed URL in JSON in JSON strings", idx, P,
                inner=[["json", ["context"]], ["json", ["trace"]], ["json", ["download"]]])
    for k in ("firmwareVersion", "expires_in", "passwordPolicy", "keyboardLayout"):
        g.lookalike(la[k][0], la[k][1], "json-in-string", f"look-alike {k} in nested JSON string", idx, P,
                    inner=[["json", ["context"]], ["json", ["trace"]], ["json", [k]]])
    url = f"https://{API}/v1/events?state={quote(enc_b, safe='')}&v=3"
    g.plant(Item("two-pass-encoded", "named", "state", enc_b, enc_b), "encoded-percent",
            "ENC_B percent-encoded in the URL query (innocent name), marked later in entry 5", idx, ["request", "url"])
    resp = {"ok": True, "exportRef": fwd, "previous": rev,
            "blob": base64.b64encode(enc_b.encode()).decode(), "count": 3}
    RP = ["response", "content", "text"]
    g.plant(Item("two-pass-forward", "named", "exportRef", fwd, fwd), "two-pass",
            "FWD under an innocent key (marked by name only in entry 5)", idx, RP, inner=[["json", ["exportRef"]]])
    g.plant(Item("two-pass-reverse", "named", "previous", rev, rev), "two-pass",
            "REV under an innocent key (marked by name in entry 1)", idx, RP, inner=[["json", ["previous"]]])
    g.plant(Item("two-pass-encoded", "named", "blob", enc_b, enc_b), "encoded-base64",
            "base64 of ENC_B under an innocent key (marked later in entry 5)", idx, RP, inner=[["json", ["blob"]]])
    make_entry(g, idx, "POST", url, std_headers(g), req_body=json.dumps(outer), req_mime="application/json",
               resp_body=json.dumps(resp))


def e_form_ndjson(g: Gen, la: dict, fwd: str, enc_a: str):
    """Entry 3: urlencoded form; response NDJSON and response headers (secret names); FWD in an
    innocent request header; base64url of ENC_A in the query."""
    idx = g.reserve()
    items = items_for(g, "form")
    pairs = [(it.name, it.carrier) for it in items]
    la_f = [(k, str(la[k][1])) for k in ("token_type", "passwordPolicy", "firmwareVersion", "keyboardLayout")]
    pairs += la_f
    text = urlencode(pairs)
    params = [{"name": k, "value": v} for k, v in pairs]
    P = ["request", "postData"]
    for i, it in enumerate(items):
        g.plant(it, "form", "urlencoded form field", idx, P + ["params", i, "value"],
                contexts=[(P + ["text"], f"{quote_plus(it.name)}={quote_plus(it.carrier)}")] if it.short else ())
    for j, (k, v) in enumerate(la_f):
        g.lookalike(la[k][0], v, "form", f"form look-alike {k}", idx, P + ["params", len(items) + j, "value"],
                    contexts=[(P + ["text"], f"{quote_plus(k)}={quote_plus(v)}")])
    b64u = base64.urlsafe_b64encode(enc_a.encode()).rstrip(b"=").decode()
    url = f"https://{API}/oauth/token?continue={b64u}"
    g.plant(Item("two-pass-encoded", "named", "continue", enc_a, enc_a), "encoded-base64url",
            "base64url of ENC_A in the query (marked in entry 1)", idx, ["request", "url"])
    headers = std_headers(g) + [hdr("X-Export-Ref", fwd)]
    g.plant(Item("two-pass-forward", "named", "X-Export-Ref", fwd, fwd), "two-pass",
            "FWD in an innocent request header (marked later in entry 5)", idx, ["request", "headers", len(headers), "value"])
    # response headers with secret names
    rheaders = []
    for it in items_for(g, "resp-headers"):
        name = header_name(it.name) if it.kind == "named" else "X-Debug-" + it.name.capitalize()
        rheaders.append(hdr(name, it.carrier))
        g.plant(it, "resp-headers", f"response header {name}", idx, ["response", "headers", 2 + len(rheaders) - 1, "value"])
    # NDJSON
    lines = []
    RP = ["response", "content", "text"]
    for it in items_for(g, "ndjson"):
        rec = {"ts": "2026-03-14T09:26:53.%03dZ" % g.rng.randint(0, 999), "level": "info",
               "event": "config.loaded", "fields": {it.name: it.carrier}}
        g.plant(it, "ndjson", "NDJSON line", idx, RP, inner=[["ndjson", len(lines)], ["json", ["fields", it.name]]])
        lines.append(json.dumps(rec))
    for k in ("firmwareVersion", "repository", "sha256", "token_type", "expires_in"):
        g.lookalike(la[k][0], la[k][1], "ndjson", f"NDJSON look-alike {k}", idx, RP,
                    inner=[["ndjson", len(lines)], ["json", ["fields", k]]])
        lines.append(json.dumps({"level": "debug", "fields": {k: la[k][1]}}))
    make_entry(g, idx, "POST", url, headers, req_body=text, req_mime="application/x-www-form-urlencoded",
               req_params=params, resp_headers=rheaders, resp_body="\n".join(lines) + "\n",
               resp_mime="application/x-ndjson")


def e_multipart_sse(g: Gen, la: dict, enc_b: str):
    """Entry 4: multipart form; response text/event-stream; base64url of ENC_B in the path."""
    idx = g.reserve()
    boundary = "----AcmeBoundary" + g.run(ALNUM, 16)
    parts = []
    P = ["request", "postData", "text"]
    for it in items_for(g, "multipart"):
        if it.multiline:
            head = (f'Content-Disposition: form-data; name="{it.name}"; filename="deploy.pem"\r\n'
                    "Content-Type: application/x-pem-file")
        else:
            head = f'Content-Disposition: form-data; name="{it.name}"'
        part = f"--{boundary}\r\n{head}\r\n\r\n{it.carrier}\r\n"
        parts.append(part)
        g.plant(it, "multipart", "multipart/form-data field", idx, P,
                contexts=[(P, f'name="{it.name}"\r\n\r\n{it.carrier}\r\n')] if it.short else ())
    for k in ("passwordPolicy", "firmwareVersion", "keyboardLayout"):
        v = la[k][1]
        ctx = f'name="{k}"\r\n\r\n{v}\r\n'
        parts.append(f"--{boundary}\r\nContent-Disposition: form-data; {ctx}")
        g.lookalike(la[k][0], v, "multipart", f"multipart look-alike {k}", idx, P, contexts=[(P, ctx)])
    body = "".join(parts) + f"--{boundary}--\r\n"
    b64u = base64.urlsafe_b64encode(enc_b.encode()).rstrip(b"=").decode()
    url = f"https://{API}/v1/uploads/{b64u}/parts"
    g.plant(Item("two-pass-encoded", "named", "path", enc_b, enc_b), "encoded-base64url",
            "base64url of ENC_B as a path segment (marked later in entry 5)", idx, ["request", "url"])
    # SSE
    events = []
    n_data = 0
    RP = ["response", "content", "text"]
    for it in items_for(g, "sse-json"):
        events.append(f"event: config\nid: {n_data}\ndata: {json.dumps({'type': 'cfg', 'data': {it.name: it.carrier}})}\n\n")
        g.plant(it, "sse-json", "text/event-stream data: JSON", idx, RP, inner=[["sse", n_data], ["json", ["data", it.name]]])
        n_data += 1
    for it in items_for(g, "sse-text"):
        events.append(f"event: note\ndata: {free_sentence(g, it.carrier)}\n\n")
        g.plant(it, "sse-text", "text/event-stream data: text", idx, RP, inner=[["sse", n_data]])
        n_data += 1
    for k in ("firmwareVersion", "token_type", "expires_in", "orderId"):
        events.append(f"data: {json.dumps({k: la[k][1]})}\n\n")
        g.lookalike(la[k][0], la[k][1], "sse-json", f"SSE look-alike {k}", idx, RP, inner=[["sse", n_data], ["json", [k]]])
        n_data += 1
    make_entry(g, idx, "POST", url, std_headers(g, "text/event-stream"), req_body=body,
               req_mime=f"multipart/form-data; boundary={boundary}", resp_body="".join(events),
               resp_mime="text/event-stream")


def e_confirm_marks(g: Gen, la: dict, fwd: str, rev: str, enc_b: str):
    """Entry 5: FWD and ENC_B marked by their names in a JSON request; REV bare in the path."""
    idx = g.reserve()
    body = {"download_token": fwd, "client_secret": enc_b, "confirm": True}
    P = ["request", "postData", "text"]
    g.plant(Item("two-pass-forward", "named", "download_token", fwd, fwd), "two-pass",
            "FWD marked by its name (used bare in entries 1-3 before)", idx, P, inner=[["json", ["download_token"]]])
    g.plant(Item("two-pass-encoded", "named", "client_secret", enc_b, enc_b), "two-pass",
            "ENC_B marked by its name (encoded forms in entries 2 and 4 before)", idx, P, inner=[["json", ["client_secret"]]])
    url = f"https://{API}/v1/sessions/{rev}/heartbeat"
    g.plant(Item("two-pass-reverse", "named", "path", rev, rev), "two-pass",
            "REV bare as a path segment (marked in entry 1)", idx, ["request", "url"])
    make_entry(g, idx, "POST", url, std_headers(g), req_body=json.dumps(body), req_mime="application/json",
               resp_body=json.dumps({"status": "confirmed", "orderId": la["orderId"][1]}))
    g.lookalike("uuid", la["orderId"][1], "json-nested", "orderId in a response", idx,
                ["response", "content", "text"], inner=[["json", ["orderId"]]])


def e_graphql(g: Gen, la: dict, rev: str, enc_a: str):
    """Entry 6: GraphQL variables; response with REV under an innocent key and ENC_A
    percent-encoded in a URL."""
    idx = g.reserve()
    P = ["request", "postData", "text"]

    def wrap(doc):
        return ({"operationName": "UpdateProfile",
                 "query": "mutation UpdateProfile($input: ProfileInput!) { updateProfile(input: $input) { id } }",
                 "variables": {"input": doc}}, ["variables", "input"])
    items = items_for(g, "graphql")
    lasub = {k: la[k] for k in ("firmwareVersion", "token_type", "expires_in", "passwordPolicy", "tokenizer",
                                "sessionCount", "tokenExpiresIn", "keyboardLayout", "monkeyTestSeed")}
    body = json_doc_with(g, items, "graphql", "GraphQL variables", idx, P, la=lasub, wrap=wrap)
    resp = {"data": {"updateProfile": {"id": "42", "echo": rev,
                                       "next": f"https://{WWW}/continue?state={quote(enc_a, safe='')}"}}}
    RP = ["response", "content", "text"]
    g.plant(Item("two-pass-reverse", "named", "echo", rev, rev), "two-pass",
            "REV under an innocent key in a later response", idx, RP, inner=[["json", ["data", "updateProfile", "echo"]]])
    g.plant(Item("two-pass-encoded", "named", "next", enc_a, enc_a), "encoded-percent",
            "ENC_A percent-encoded inside a URL in a JSON body (marked in entry 1)", idx, RP,
            inner=[["json", ["data", "updateProfile", "next"]]])
    make_entry(g, idx, "POST", f"https://{API}/graphql", std_headers(g), req_body=json.dumps(body),
               req_mime="application/json", resp_body=json.dumps(resp))


def e_soap(g: Gen, la: dict):
    """SOAP/XML: elements (a WS-Security Password too) and attributes with secret names."""
    idx = g.reserve()
    P = ["request", "postData", "text"]
    el_items = items_for(g, "xml-element")
    at_items = items_for(g, "xml-attribute")
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" '
             'xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd">',
             "<soap:Header><wsse:Security><wsse:UsernameToken><wsse:Username>svc-billing</wsse:Username>"]
    ws_pw = next(it for it in el_items if it.cls == "name-password")
    ws_pw.name = "wsse:Password"
    tag = f"<wsse:Password>{ws_pw.carrier}</wsse:Password>"
    lines.append(tag + "</wsse:UsernameToken></wsse:Security></soap:Header>")
    g.plant(ws_pw, "xml-element", "SOAP WS-Security <wsse:Password>", idx, P)
    lines.append("<soap:Body><UpdateAccount>")
    for it in el_items:
        if it is ws_pw:
            continue
        name = it.name if re.match(r"[A-Za-z_]", it.name) else "_" + it.name
        text = it.carrier.replace("&", "&amp;").replace("<", "&lt;")
        tag = f"<{name}>{text}</{name}>"
        lines.append(tag)
        g.plant(it, "xml-element", f"XML element <{name}>", idx, P, contexts=[(P, tag)] if it.short else ())
    s3_url, s3_items = s3_presigned(g)
    lines.append(f"<DownloadUrl>{s3_url.replace('&', '&amp;')}</DownloadUrl>")
    for it in s3_items:
        g.plant(it, "xml-element", "signed URL in an XML element (&amp;)", idx, P)
    for it in at_items:
        tag = f'<Credential {it.name}="{html.escape(it.carrier)}" scope="billing"/>'
        lines.append(tag)
        g.plant(it, "xml-attribute", f"XML attribute {it.name}=", idx, P,
                contexts=[(P, f'{it.name}="{it.carrier}"')] if it.short else ())
    fw = la["firmwareVersion"][1]
    for k, tag in (("firmwareVersion", f"<firmwareVersion>{fw}</firmwareVersion>"),
                   ("firmwareVersion", f'<Device firmwareVersion="{fw}" model="T2"/>'),
                   ("passwordPolicy", f"<passwordPolicy>{la['passwordPolicy'][1]}</passwordPolicy>"),
                   ("token_type", f"<token_type>{la['token_type'][1]}</token_type>"),
                   ("sha256", f"<sha256>{la['sha256'][1]}</sha256>")):
        lines.append(tag)
        g.lookalike(la[k][0], la[k][1], "xml", f"XML look-alike {tag}", idx, P, contexts=[(P, tag)])
    lines.append("</UpdateAccount></soap:Body></soap:Envelope>")
    body = "\n".join(lines)
    resp = ('<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">'
            "<soap:Body><UpdateAccountResponse><ok>true</ok></UpdateAccountResponse></soap:Body></soap:Envelope>")
    make_entry(g, idx, "POST", f"https://{API}/soap/AccountService",
               std_headers(g, "text/xml") + [hdr("SOAPAction", '"urn:UpdateAccount"')],
               req_body=body, req_mime="text/xml; charset=utf-8", resp_body=resp, resp_mime="text/xml; charset=utf-8")


def env_value(v: str) -> str:
    if "\n" in v:
        return '"' + v.replace("\n", "\\n") + '"'
    if re.search(r"[\s#\"'$]", v):
        return json.dumps(v)
    return v


def e_env_yaml(g: Gen, la: dict):
    """A .env upload (PEM with escaped newlines) and a YAML config response."""
    idx = g.reserve()
    P = ["request", "postData", "text"]
    lines = ["# generated by deploy tooling", "APP_ENV=production"]
    for it in items_for(g, "env"):
        name = env_name(it.name) if it.kind != "format" and it.kind != "pem" else f"APP_{env_name(it.name)}_{len(lines)}"
        line = f"{name}={env_value(it.carrier)}"
        lines.append(line)
        g.plant(it, "env", f".env assignment {name}", idx, P, contexts=[(P, line)] if it.short else ())
    for k in TEXT_LOOKALIKES:
        line = f"{env_name(k)}={env_value(str(la[k][1]))}"
        lines.append(line)
        g.lookalike(la[k][0], la[k][1], "env", f".env look-alike {env_name(k)}", idx, P, contexts=[(P, line)])
    body = "\n".join(lines) + "\n"
    # YAML
    RP = ["response", "content", "text"]
    ylines = ["app:", "  name: acme-shop", "  settings:"]
    for it in items_for(g, "yaml"):
        if it.multiline:
            ylines.append(f"    {it.name}_pem: |")
            ylines += ["      " + ln for ln in it.carrier.split("\n")]
        else:
            line = f"    {it.name}: {json.dumps(it.carrier)}"
            ylines.append(line)
            if it.short:
                g.plant(it, "yaml", f"YAML mapping {it.name}", idx, RP, contexts=[(RP, line.strip())])
                continue
        g.plant(it, "yaml", f"YAML mapping {it.name}", idx, RP)
    ylines.append("  meta:")
    for k in TEXT_LOOKALIKES:
        line = f"    {k}: {json.dumps(la[k][1])}"
        ylines.append(line)
        g.lookalike(la[k][0], la[k][1], "yaml", f"YAML look-alike {k}", idx, RP, contexts=[(RP, line.strip())])
    make_entry(g, idx, "PUT", f"https://{API}/v1/config/.env", std_headers(g, "application/yaml"),
               req_body=body, req_mime="text/plain; charset=utf-8", resp_body="\n".join(ylines) + "\n",
               resp_mime="application/yaml")


def e_ini_log(g: Gen, la: dict):
    """An .ini upload; response: a text/plain log with assignments, free text, a PEM dump and a
    signed URL."""
    idx = g.reserve()
    P = ["request", "postData", "text"]
    lines = ["; app settings", "[database]", "host = db.acme-shop.com", "port = 5432", "[api]"]
    for it in items_for(g, "ini"):
        line = f"{it.name} = {it.carrier}"
        lines.append(line)
        g.plant(it, "ini", f".ini key {it.name}", idx, P, contexts=[(P, line)] if it.short else ())
    lines.append("[device]")
    for k in TEXT_LOOKALIKES:
        line = f"{k} = {la[k][1]}"
        lines.append(line)
        g.lookalike(la[k][0], la[k][1], "ini", f".ini look-alike {k}", idx, P, contexts=[(P, line)])
    body = "\n".join(lines) + "\n"
    RP = ["response", "content", "text"]
    log = []
    ts = lambda: "2026-03-14T09:%02d:%02d.%03dZ" % (g.rng.randint(0, 59), g.rng.randint(0, 59), g.rng.randint(0, 999))
    for it in items_for(g, "log-text"):
        if it.kind == "named":
            sep = g.pick(["=", ": "])
            frag = f"{it.name}{sep}{it.carrier}"
            log.append(f"{ts()} INFO  config reload user=svc {frag} ok")
            g.plant(it, "log-text", f"log line assignment {it.name}{sep.strip()}", idx, RP,
                    contexts=[(RP, frag)] if it.short else ())
        elif it.multiline:
            log.append(f"{ts()} DEBUG dumping material:\n{it.carrier}")
            g.plant(it, "log-text", "PEM block in a log", idx, RP)
        else:
            log.append(f"{ts()} WARN  {free_sentence(g, it.carrier)}")
            g.plant(it, "log-text", "log free text", idx, RP)
    s3_url, s3_items = s3_presigned(g)
    log.append(f"{ts()} INFO  GET {s3_url} 200")
    for it in s3_items:
        g.plant(it, "log-text", "signed URL in a log line", idx, RP)
    for k in ("sha256", "orderId", "createdAt", "repository", "homepage", "commit"):
        frag = f"{k}={la[k][1]}"
        log.append(f"{ts()} INFO  build {frag}")
        g.lookalike(la[k][0], la[k][1], "log-text", f"log look-alike {k}", idx, RP, contexts=[(RP, frag)])
    make_entry(g, idx, "PUT", f"https://{API}/v1/config/app.ini", std_headers(g, "text/plain"),
               req_body=body, req_mime="text/plain; charset=utf-8", resp_body="\n".join(log) + "\n",
               resp_mime="text/plain; charset=utf-8")


def e_b64_json(g: Gen, la: dict):
    """A JSON response stored base64 (a text body); the entry's serverIPAddress is private."""
    idx = g.reserve()
    P = ["response", "content", "text"]
    doc = json_doc_with(g, items_for(g, "b64-json"), "b64-json", "base64-stored JSON body", idx, P,
                        prefix_steps=[["b64"]], la={k: la[k] for k in ("firmwareVersion", "token_type", "expires_in",
                                                                           "passwordPolicy", "orderId", "avatar")})
    ip_item = make_item(g, "private-ip")
    while ":" in ip_item.value:
        ip_item = make_item(g, "private-ip")
    g.plant(ip_item, "server-ip", "serverIPAddress", idx, ["serverIPAddress"])
    make_entry(g, idx, "GET", f"https://{API}/v1/settings", std_headers(g), resp_body=json.dumps(doc).encode(),
               resp_b64=True, server_ip=ip_item.value)


def e_b64_text(g: Gen, la: dict):
    """A text/plain response stored base64: assignments and free text."""
    idx = g.reserve()
    P = ["response", "content", "text"]
    lines = []
    for it in items_for(g, "b64-text"):
        if it.kind == "named":
            line = f"{env_name(it.name)}={it.carrier}"
            g.plant(it, "b64-text", f"assignment {env_name(it.name)} in a base64 text body", idx, P,
                    contexts=[(P, line)] if it.short else ())
        else:
            line = it.carrier if it.multiline else free_sentence(g, it.carrier)
            g.plant(it, "b64-text", "free text in a base64 text body", idx, P)
        lines.append(line)
    for k in ("firmwareVersion", "sha256", "repository"):
        line = f"{env_name(k)}={la[k][1]}"
        lines.append(line)
        g.lookalike(la[k][0], la[k][1], "b64-text", f"look-alike {k} in a base64 text body", idx, P, contexts=[(P, line)])
    make_entry(g, idx, "GET", f"https://{API}/v1/notes/handover.txt", std_headers(g, "text/plain"),
               resp_body=("\n".join(lines) + "\n").encode(), resp_b64=True, resp_mime="text/plain; charset=utf-8")


def varint(n: int) -> bytes:
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def proto_field(no: int, data: bytes) -> bytes:
    return varint(no << 3 | 2) + varint(len(data)) + data


def proto_noise(g: Gen) -> bytes:
    """A varint field and a bytes field of random non-text bytes."""
    junk = bytes(g.rng.choice([0, 1, 2, 0x7F, 0x80, 0x9C, 0xC3, 0xFE, 0xFF]) for _ in range(g.rng.randint(3, 12)))
    return varint(1 << 3 | 0) + varint(g.rng.randint(0, 1 << 40)) + proto_field(15, junk)


def e_binary(g: Gen, la: dict):
    """application/x-protobuf request and gRPC-web response, both stored base64, with JWTs,
    known-format keys and personal data inside; binary lengths must be kept."""
    idx = g.reserve()
    P = ["request", "postData", "text"]
    msg = b""
    for no, it in enumerate(items_for(g, "binary-proto"), start=2):
        msg += proto_noise(g) + proto_field(no, it.carrier.encode())
        g.plant(it, "binary-proto", "string field in a protobuf body (base64)", idx, P)
    msg += proto_noise(g)
    RP = ["response", "content", "text"]
    inner = b""
    for no, it in enumerate(items_for(g, "binary-grpc"), start=2):
        inner += proto_noise(g) + proto_field(no, it.carrier.encode())
        g.plant(it, "binary-grpc", "string field in a gRPC-web frame (base64)", idx, RP)
    trailer = b"grpc-status:0\r\ngrpc-message:\r\n"
    frame = b"\x00" + len(inner).to_bytes(4, "big") + inner + b"\x80" + len(trailer).to_bytes(4, "big") + trailer
    make_entry(g, idx, "POST", f"https://{API}/acme.sync.v1.SyncService/Push",
               std_headers(g, "application/grpc-web+proto") + [hdr("X-Grpc-Web", "1")],
               req_body=msg, req_mime="application/x-protobuf", req_b64=True,
               resp_body=frame, resp_b64=True, resp_mime="application/grpc-web+proto")


def e_websocket(g: Gen, la: dict, fwd: str, rev: str, enc_a: str):
    """A WebSocket with Chrome-style _webSocketMessages: JSON send/receive messages, text
    messages; FWD, REV and base64 of ENC_A bare in messages."""
    idx = g.reserve()
    key = base64.b64encode(bytes(g.rng.randrange(256) for _ in range(16))).decode()
    accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
    msgs = []
    t = START_EPOCH + 30.0

    def add(kind, data):
        nonlocal t
        t += g.rng.randint(1, 400) / 1000
        msgs.append({"type": kind, "time": round(t, 3), "opcode": 1, "data": data})
        return ["_webSocketMessages", len(msgs) - 1, "data"]

    for it in items_for(g, "ws-send-json"):
        p = add("send", json.dumps({"op": "auth", "args": {it.name: it.carrier}}))
        g.plant(it, "ws-send-json", "WebSocket send message (JSON)", idx, p, inner=[["json", ["args", it.name]]])
    s3_url, s3_items = s3_presigned(g)
    p = add("receive", json.dumps({"type": "export.ready", "url": s3_url}))
    for it in s3_items:
        g.plant(it, "ws-receive-json", "signed URL in a WebSocket message", idx, p, inner=[["json", ["url"]]])
    for it in items_for(g, "ws-receive-json"):
        p = add("receive", json.dumps({"type": "config", "data": {"nested": {it.name: it.carrier}}}))
        g.plant(it, "ws-receive-json", "WebSocket receive message (JSON)", idx, p,
                inner=[["json", ["data", "nested", it.name]]])
    for it in items_for(g, "ws-text"):
        p = add(g.pick(["send", "receive"]), it.carrier if it.multiline else free_sentence(g, it.carrier))
        g.plant(it, "ws-text", "WebSocket text message", idx, p)
    p = add("receive", json.dumps({"type": "export", "ref": fwd}))
    g.plant(Item("two-pass-forward", "named", "ref", fwd, fwd), "two-pass",
            "FWD in a WebSocket message under an innocent key (marked later in entry 5)", idx, p, inner=[["json", ["ref"]]])
    p = add("send", json.dumps({"op": "resume", "from": rev}))
    g.plant(Item("two-pass-reverse", "named", "from", rev, rev), "two-pass",
            "REV in a WebSocket message under an innocent key (marked in entry 1)", idx, p, inner=[["json", ["from"]]])
    p = add("send", json.dumps({"op": "hello", "blob": base64.b64encode(enc_a.encode()).decode()}))
    g.plant(Item("two-pass-encoded", "named", "blob", enc_a, enc_a), "encoded-base64",
            "base64 of ENC_A in a WebSocket message (marked in entry 1)", idx, p, inner=[["json", ["blob"]]])
    for k in ("firmwareVersion", "token_type", "expires_in", "orderId", "sha256"):
        p = add("receive", json.dumps({"type": "device", k: la[k][1]}))
        g.lookalike(la[k][0], la[k][1], "ws", f"WebSocket look-alike {k}", idx, p, inner=[["json", [k]]])
    headers = [hdr("Upgrade", "websocket"), hdr("Connection", "Upgrade"), hdr("Sec-WebSocket-Key", key),
               hdr("Sec-WebSocket-Version", "13"), hdr("Origin", f"https://{WWW}")]
    make_entry(g, idx, "GET", "wss://ws.acme-shop.com/v2/socket", headers, status=101, status_text="Switching Protocols",
               resp_headers=[hdr("Upgrade", "websocket"), hdr("Connection", "Upgrade"), hdr("Sec-WebSocket-Accept", accept)],
               extra={"_resourceType": "websocket", "_webSocketMessages": msgs})
    g.lookalike("websocket-accept", accept, "resp-headers", "Sec-WebSocket-Accept", idx, ["response", "headers", 2, "value"])


def e_redirects(g: Gen, la: dict):
    """302s whose Location is a signed URL (redirectURL too); Referer URLs with named query
    parameters and an email."""
    for signed in (s3_presigned, gcs_signed):
        idx = g.reserve()
        url, items = signed(g)
        named = [make_item(g, c) for c in NAMED if c != "name-otp"]
        ref_url = named_url(g, named).replace("partner.example-pay.com/callback", f"{WWW}/reset")
        email = make_item(g, "email")
        ref_url += "&email=" + quote(email.value, safe="")
        headers = std_headers(g) + [hdr("Referer", ref_url)]
        for it in named + [email]:
            g.plant(it, "referer", "URL in a Referer header (query)", idx, ["request", "headers", len(headers), "value"])
        make_entry(g, idx, "GET", f"https://{API}/v1/invoices/{g.rng.randint(100, 999)}/pdf", headers, status=302,
                   status_text="Found", resp_headers=[hdr("Location", url)], resp_body="", resp_mime="text/plain",
                   redirect=url)
        for it in items:
            g.plant(it, "location-header", "signed URL in a Location header (and redirectURL)", idx,
                    ["response", "headers", 2, "value"])


def e_signed_get(g: Gen, la: dict):
    """GETs of the signed URLs themselves (url + queryString); an innocent random PNG body."""
    for signed in (s3_presigned, gcs_signed):
        idx = g.reserve()
        url, items = signed(g)
        for it in items:
            g.plant(it, "request-url", "signed URL as the request URL", idx, ["request", "url"])
        png = b"\x89PNG\r\n\x1a\n" + bytes(g.rng.randrange(256) for _ in range(1500))
        make_entry(g, idx, "GET", url, std_headers(g, "image/png"), resp_body=png, resp_b64=True, resp_mime="image/png")
        g.lookalike("binary-body", base64.b64encode(png).decode(), "binary", "innocent random PNG body", idx,
                    ["response", "content", "text"], contexts=[(["response", "content", "text"], base64.b64encode(png).decode())])


def e_ticket(g: Gen, la: dict):
    """A support ticket: free text in JSON strings; response: URLs nested in JSON (named query
    parameters, signed URLs, userinfo, internal hosts, a percent-encoded URL inside a query)."""
    idx = g.reserve()
    P = ["request", "postData", "text"]
    msgs = []
    for it in items_for(g, "json-free-text"):
        msgs.append({"author": "customer", "text": it.carrier if it.multiline else free_sentence(g, it.carrier)})
        g.plant(it, "json-free-text", "free text in a JSON string", idx, P, inner=[["json", ["messages", len(msgs) - 1, "text"]]])
    body = {"subject": "Order problem", "messages": msgs, "homepage": la["homepage"][1], "repository": la["repository"][1]}
    g.lookalike("public-host", la["homepage"][1], "json", "public URL in JSON", idx, P, inner=[["json", ["homepage"]]])
    g.lookalike("git-remote", la["repository"][1], "json", "git remote in JSON", idx, P, inner=[["json", ["repository"]]])
    RP = ["response", "content", "text"]
    links = {}
    named = [make_item(g, c) for c in NAMED]
    links["callback"] = named_url(g, named)
    for it in named:
        g.plant(it, "nested-url-json", "URL in a JSON body (query parameter)", idx, RP, inner=[["json", ["links", "callback"]]],
                contexts=[(RP, f"{quote_plus(it.name)}={quote_plus(it.carrier)}")] if it.short else ())
    s3_url, s3_items = s3_presigned(g)
    gcs_url, gcs_items = gcs_signed(g)
    links["invoice"], links["export"] = s3_url, gcs_url
    for it in s3_items:
        g.plant(it, "nested-url-json", "signed URL in a JSON body", idx, RP, inner=[["json", ["links", "invoice"]]])
    for it in gcs_items:
        g.plant(it, "nested-url-json", "signed URL in a JSON body", idx, RP, inner=[["json", ["links", "export"]]])
    ui = make_item(g, "url-userinfo")
    links["mirror"] = ui.carrier
    g.plant(ui, "nested-url-json", "URL with userinfo in a JSON body", idx, RP, inner=[["json", ["links", "mirror"]]])
    ih = make_item(g, "internal-host")
    links["status"] = f"http://{ih.value}:8080/healthz"
    g.plant(ih, "nested-url-json", "internal host in a URL in a JSON body", idx, RP, inner=[["json", ["links", "status"]]])
    named2 = [make_item(g, c) for c in ("name-token", "name-key", "name-session", "name-sig")]
    s3b_url, s3b_items = s3_presigned(g)
    links["login"] = (f"https://{WWW}/login?next={quote(named_url(g, named2), safe='')}"
                      f"&continue={quote(s3b_url, safe='')}")
    for it in named2 + s3b_items:
        g.plant(it, "url-in-query", "percent-encoded URL inside a query parameter of a URL in JSON", idx, RP,
                inner=[["json", ["links", "login"]]])
    links["docs"] = la["homepage"][1]
    g.lookalike("public-host", la["homepage"][1], "nested-url-json", "public URL in JSON", idx, RP,
                inner=[["json", ["links", "docs"]]])
    make_entry(g, idx, "POST", f"https://{API}/v1/support/tickets", std_headers(g), req_body=json.dumps(body),
               req_mime="application/json", resp_body=json.dumps({"ticket": g.rng.randint(1000, 9999), "links": links}))


def e_authorization(g: Gen, la: dict):
    """Authorization (Bearer, Basic, `token ghp_...`) and Proxy-Authorization headers; a request
    URL with userinfo."""
    for scheme in ("bearer", "basic-auth", "github-token"):
        idx = g.reserve()
        it = make_item(g, scheme)
        value = it.carrier if scheme != "github-token" else "token " + it.carrier
        headers = std_headers(g) + [hdr("Authorization", value)]
        g.plant(it, "authorization", f"Authorization header ({scheme})", idx, ["request", "headers", len(headers), "value"])
        if scheme == "basic-auth":
            px = make_item(g, "basic-auth")
            headers.append(hdr("Proxy-Authorization", px.carrier))
            g.plant(px, "authorization", "Proxy-Authorization header (Basic)", idx, ["request", "headers", len(headers), "value"])
        make_entry(g, idx, "GET", f"https://{API}/v1/me", headers, resp_body=json.dumps({"id": g.rng.randint(1, 999)}))
    idx = g.reserve()
    ui = make_item(g, "url-userinfo")
    g.plant(ui, "request-url", "userinfo in the request URL", idx, ["request", "url"])
    make_entry(g, idx, "GET", ui.carrier + "/info/refs?service=git-upload-pack", std_headers(g, "*/*"),
               resp_body="001e# service=git-upload-pack\n", resp_mime="application/x-git-upload-pack-advertisement")


def e_url_paths(g: Gen, la: dict):
    """One GET per URL-safe value as a path segment (plus an email percent-encoded); the order
    id UUID as a path segment is a look-alike."""
    for it in items_for(g, "url-path"):
        idx = g.reserve()
        g.plant(it, "url-path", "bare URL path segment", idx, ["request", "url"])
        make_entry(g, idx, "GET", f"https://{API}/v1/lookup/{it.carrier}/details", std_headers(g),
                   resp_body=json.dumps({"found": False}))
    idx = g.reserve()
    em = make_item(g, "email")
    g.plant(em, "url-path", "email percent-encoded (%40) in a path segment", idx, ["request", "url"])
    em2 = make_item(g, "email")
    g.plant(em2, "query", "email percent-encoded (%40) in the query", idx, ["request", "queryString", 0, "value"])
    make_entry(g, idx, "GET", f"https://{API}/v1/users/{quote(em.value, safe='')}/avatar?invite={quote(em2.value, safe='')}",
               std_headers(g), resp_body=json.dumps({"found": True}))
    idx = g.reserve()
    uid = la["orderId"][1]
    make_entry(g, idx, "GET", f"https://{API}/v1/orders/{uid}", std_headers(g),
               resp_body=json.dumps({"orderId": uid, "createdAt": la["createdAt"][1], "trackingNumber": la["trackingNumber"][1],
                                     "timestamp": la["timestamp"][1], "commit": la["commit"][1]}))
    g.lookalike("uuid", uid, "url-path", "UUID order id as a path segment", idx, ["request", "url"],
                contexts=[(["request", "url"], f"/v1/orders/{uid}")])
    for k in ("orderId", "createdAt", "trackingNumber", "timestamp", "commit"):
        g.lookalike(la[k][0], la[k][1], "json", f"look-alike {k}", idx, ["response", "content", "text"], inner=[["json", [k]]])


def e_encoded_email(g: Gen, la: dict):
    """An email found plainly in one body and base64 / base64url encoded in other places."""
    idx = g.reserve()
    em = make_item(g, "email")
    b64 = base64.b64encode(em.value.encode()).decode()
    b64u = base64.urlsafe_b64encode(em.value.encode()).rstrip(b"=").decode()
    body = {"profile": {"email": em.value}}
    g.plant(em, "json-nested", "email plainly in a JSON body", idx, ["request", "postData", "text"],
            inner=[["json", ["profile", "email"]]])
    g.plant(Item("encoded-email", "pii", "hint", em.value, em.value), "encoded-base64",
            "base64 of an email found elsewhere (innocent key)", idx, ["response", "content", "text"], inner=[["json", ["hint"]]])
    g.plant(Item("encoded-email", "pii", "state", em.value, em.value), "encoded-base64url",
            "base64url of an email found elsewhere (query)", idx, ["request", "url"])
    make_entry(g, idx, "POST", f"https://{API}/v1/invites?state={b64u}", std_headers(g), req_body=json.dumps(body),
               req_mime="application/json", resp_body=json.dumps({"hint": b64}))


# ---------------------------------------------------------------- the whole HAR

def build(seed: int):
    """(har, manifest) for `seed`."""
    g = Gen(seed)
    la = lookalike_values(g)
    fwd = g.unique(lambda: g.run(ALNUM, 28))          # bare first, named only in entry 5
    rev = g.unique(lambda: g.run(ALNUM, 30))          # named in entry 1, bare later
    enc_a = g.unique(lambda: g.run(ALNUM, 10) + "+/" + g.run(ALNUM, 10) + "/" + g.run(ALNUM, 6) + "==")
    enc_b = g.unique(lambda: g.run(ALNUM, 12) + "/" + g.run(ALNUM, 8) + "+" + g.run(ALNUM, 6) + "=")
    e_html_page(g, la)                          # entry 0
    e_query_headers_cookies(g, la, fwd, enc_a, rev)  # entry 1
    e_events_json_in_string(g, la, fwd, rev, enc_b)  # entry 2
    e_form_ndjson(g, la, fwd, enc_a)            # entry 3
    e_multipart_sse(g, la, enc_b)               # entry 4
    e_confirm_marks(g, la, fwd, rev, enc_b)     # entry 5
    e_graphql(g, la, rev, enc_a)                # entry 6
    e_soap(g, la)
    e_env_yaml(g, la)
    e_ini_log(g, la)
    e_b64_json(g, la)
    e_b64_text(g, la)
    e_binary(g, la)
    e_websocket(g, la, fwd, rev, enc_a)
    e_redirects(g, la)
    e_signed_get(g, la)
    e_ticket(g, la)
    e_authorization(g, la)
    e_encoded_email(g, la)
    e_url_paths(g, la)
    assert all(e is not None for e in g.entries)
    har = {"log": {"version": "1.2", "creator": {"name": "planted_har.py", "version": "1"}, "entries": g.entries}}
    manifest = {"seed": seed, "plants": g.plants, "lookalikes": g.lookalikes,
                "order_cases": {"FWD": fwd, "REV": rev, "ENC_A": enc_a, "ENC_B": enc_b}}
    return har, manifest


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1])
        return 2
    har, manifest = build(int(argv[1]))
    with open(argv[2], "w") as f:
        json.dump(har, f, indent=2)
    if len(argv) > 3:
        with open(argv[3], "w") as f:
            json.dump(manifest, f, indent=2)
    print(f"{len(har['log']['entries'])} entries, {len(manifest['plants'])} plants, "
          f"{len(manifest['lookalikes'])} look-alikes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
