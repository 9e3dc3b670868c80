#!/usr/bin/env python3
"""An independent planted redaction corpus for `harrec redact` (the redaction audit).

    python3 Tests/e2e/redaction_audit/corpus.py SEED OUT.har MANIFEST.json

`build(seed) -> (har, manifest)`: a valid HAR 1.2 whose entries are realistic API shapes (LLM
chat, OAuth 2 + PKCE, push registration, advertising ids, payments, signed cloud-storage URLs,
SOAP and SAML, CSV exports, GraphQL, SSE, WebSocket, multipart, docs pages and JS bundles,
telemetry, magic links, KYC profiles, orders, SMS/OTP, vendor tokens under generic keys) with
secrets and personal data planted in them, and harmless look-alikes that must stay. Everything
comes from `random.Random(seed)`; values are made up here (vendor token shapes follow the
catalogue in vendor_formats.json, generated from each format's regular expression).

Manifest (JSON):

    {"seed": 1,
     "plants": [{"id": "pii.email#3", "kind": "pii.email", "class": "pii", "value": "...",
                 "entry": 7, "path": ["request", "postData", "text"],
                 "inner": [["json", ["customer", "email"]]],     # optional, see below
                 "context": ",Lena,",                            # optional, see below
                 "location": "entries[7].request.postData.text json:customer.email"}, ...],
     "lookalikes": [same fields, "exact": true when the JSON leaf must stay equal]}

`path` leads from the entry to the HAR string holding the value. `inner` steps are applied to
that string: ["json", keys] parses it as JSON and walks the keys; ["b64"] base64-decodes;
["form", name] takes a urlencoded parameter; ["query", name] a URL query parameter; ["sse", i]
the payload of the i-th `data:` line. `context` is the exact text that is checked at the
location instead of the bare value (for short values that would match elsewhere).
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import string
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit, parse_qsl

try:  # Python 3.11+
    import re._parser as sre_parse  # type: ignore
    import re._constants as sre_c  # type: ignore
except ImportError:  # pragma: no cover
    import sre_parse  # type: ignore
    import sre_constants as sre_c  # type: ignore

HERE = Path(__file__).resolve().parent
FORMATS_PATH = HERE / "vendor_formats.json"

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + DIGITS
B64URL = ALNUM + "-_"
B64 = ALNUM + "+/"
START_EPOCH = 1773480413  # 2026-03-14T09:26:53Z

APP = "kestrel-app.com"
API = f"api.{APP}"
UA = "Kestrel/7.4.1 (iPhone; iOS 18.3.1; Scale/3.00)"


# ---------------------------------------------------------------- markers

class M:
    """A value to place: a plant (secret / personal) or a look-alike (must stay)."""

    def __init__(self, kind: str, value, plant: bool, context: str | None = None):
        self.kind, self.value, self.plant, self.context = kind, value, plant, context

    def __str__(self):
        return str(self.value)


class JS:
    """A JSON document stored as a string inside JSON."""

    def __init__(self, doc):
        self.doc = doc


class T:
    """Text made of strings and markers (a string leaf inside JSON, or a whole body)."""

    def __init__(self, *parts):
        self.parts = parts


def kind_class(kind: str) -> str:
    return kind.split(".", 1)[0]


def fmt_path(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (("." if out else "") + str(p))
    return out


def fmt_inner(inner) -> str:
    if not inner:
        return ""
    parts = []
    for st in inner:
        if st[0] == "json":
            parts.append("json:" + ".".join(str(k) for k in st[1]))
        else:
            parts.append(":".join(str(x) for x in st))
    return " " + " -> ".join(parts)


# ---------------------------------------------------------------- regex-shaped values

def _in_chars(items) -> str:
    chars, neg = [], False
    for op, av in items:
        if op is sre_c.NEGATE:
            neg = True
        elif op is sre_c.LITERAL:
            chars.append(chr(av))
        elif op is sre_c.RANGE:
            chars.extend(chr(c) for c in range(av[0], av[1] + 1))
        elif op is sre_c.CATEGORY:
            if av is sre_c.CATEGORY_DIGIT:
                chars.extend(DIGITS)
            elif av is sre_c.CATEGORY_WORD:
                chars.extend(ALNUM + "_")
            else:
                chars.extend(" ")
    if neg:
        chars = [c for c in ALNUM if c not in chars]
    return "".join(sorted(set(chars)))


def gen_from_regex(rng: random.Random, pattern: str) -> str:
    """A random string matching `pattern` (the subset the vendor catalogue uses)."""

    def g(tree) -> str:
        out = []
        for op, av in tree:
            if op is sre_c.LITERAL:
                out.append(chr(av))
            elif op is sre_c.IN:
                out.append(rng.choice(_in_chars(av)))
            elif op is sre_c.ANY:
                out.append(rng.choice(ALNUM))
            elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT):
                lo, hi, sub = av
                if hi is sre_c.MAXREPEAT or hi > lo + 24:
                    hi = lo + (24 if lo < 40 else 12)
                lo = max(lo, 0)
                out.extend(g(sub) for _ in range(rng.randint(lo, hi)))
            elif op is sre_c.SUBPATTERN:
                out.append(g(av[-1]))
            elif op is sre_c.BRANCH:
                out.append(g(rng.choice(av[1])))
            elif op is sre_c.AT:
                pass
            elif op is sre_c.NOT_LITERAL:
                out.append(rng.choice([c for c in ALNUM if ord(c) != av]))
            else:
                raise ValueError(f"unsupported regex op {op} in {pattern}")
        return "".join(out)

    return g(sre_parse.parse(pattern))


ALPHABETS = {
    "alnum": ALNUM, "alnumDashUnderscore": ALNUM + "-_", "lowerHex": HEX, "hex": HEX + "ABCDEF",
    "uuid": None, "lowerAlnum": LOWER + DIGITS, "upperAlnum": UPPER + DIGITS, "digits": DIGITS,
    "alnumUnderscore": ALNUM + "_", "base64Pad": B64, "base64": B64, "letters": string.ascii_letters,
}


def load_formats() -> list:
    """Vendor token formats: the catalogue minus public/publishable keys."""
    fmts = json.loads(FORMATS_PATH.read_text(encoding="utf-8"))
    return [f for f in fmts if "pub" not in f["id"] and "public" not in f["id"]]


def vendor_value(rng: random.Random, fmt: dict) -> str:
    shape = fmt.get("shape")
    if shape:
        for _ in range(20):
            v = gen_from_regex(rng, shape)
            if re.fullmatch(shape.strip("^$"), v) or re.fullmatch(shape, v):
                return v
    alpha = ALPHABETS.get(fmt.get("alphabet")) or ALNUM
    n = rng.randint(fmt["min"], min(fmt["max"], fmt["min"] + 24))
    return fmt["prefix"] + "".join(rng.choice(alpha) for _ in range(n))


# ---------------------------------------------------------------- personal-data generators

FIRST = ["Amelie", "Bartholomew", "Cassandra", "Dimitri", "Evangeline", "Fernando", "Gwendolyn",
         "Hiroshi", "Isabella", "Jonathan", "Katarina", "Leopold", "Magdalena", "Nathaniel",
         "Octavia", "Priyanka", "Quentin", "Rosalind", "Sebastian", "Theodora", "Ulrich",
         "Valentina", "Wilhelmina", "Xavier", "Yolanda", "Zachariah", "Lena", "Omar", "Ines",
         "Tobias", "Aoife", "Malik", "Greta", "Rafael", "Soren", "Noor", "Emeka", "Ingrid",
         "Mateo", "Chiara", "Henrik", "Anouk", "Darius", "Fiona", "Kenji", "Lucia", "Marisol"]
LAST = ["Okonkwo", "Vasquez", "Lindqvist", "Nakamura", "Fitzgerald", "Brennan", "Kowalczyk",
        "Haddad", "Oyelaran", "Castellanos", "Abernathy", "Rasmussen", "Delacroix", "Achterberg",
        "Moreau", "Novak", "Ibrahim", "Schäfer", "Müller", "Østergaard", "Nguyen", "Kapoor",
        "Whitfield", "Marchetti", "Szymanski", "Fairbanks", "Halvorsen", "Quintero", "Van der Berg",
        "O'Sullivan", "Petrakis", "Bergström", "Ferreira", "Takahashi", "Holloway", "Lacroix"]
STREETS = ["Larchmont Avenue", "Willowbrook Lane", "Kastanienallee", "Prenzlauer Weg", "Rue des Martyrs",
           "Juniper Court", "Hollybush Road", "Canal Street", "Old Mill Drive", "Birchwood Crescent",
           "Via Garibaldi", "Schönhauser Straße", "Maple Ridge Road", "Harbour View Terrace"]
EMAIL_DOMAINS = ["gmail.com", "outlook.com", "posteo.de", "fastmail.com", "icloud.com", "yahoo.co.uk",
                 "web.de", "proton.me", "hotmail.fr", "gmx.net"]
WORDS = ("abandon ability absorb abstract access accident account achieve acoustic acquire across action "
         "actress adapt address adjust admit advance advice aerobic affair afford agent agree airport aisle "
         "alarm album alcohol alert alien alley almost alpha already amateur amazing among amount anchor "
         "ancient angle animal ankle announce annual antenna antique anxiety apology appear apple approve "
         "arctic arena argue armor army arrange arrest arrive arrow artefact artist artwork aspect assault "
         "asset assist assume asthma athlete attack attend attitude attract auction audit august author "
         "autumn average avocado avoid awake aware awesome awkward bacon badge balance bamboo banana "
         "banner barely bargain barrel basket battle beach beauty become before behave believe bench "
         "benefit betray beyond bicycle biology bitter blanket blossom blouse blush board bonus border "
         "bottom bounce bracket brave bread breeze brick bridge brisk broccoli bronze brush bubble buddy "
         "budget buffalo bullet bundle burden butter cabbage cabin cactus camera canal candy canvas canyon "
         "capital captain carbon carpet castle casual catalog cattle caution ceiling celery cement census "
         "cereal certain chalk champion chaos chapter charge cherry chimney chuckle cinnamon circle citizen").split()


def luhn_digit(payload: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(payload)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return str((10 - total % 10) % 10)


def iban_check(country: str, bban: str) -> str:
    s = bban + country + "00"
    num = "".join(str(int(c, 36)) for c in s)
    return f"{98 - int(num) % 97:02d}"


class Gen:
    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)
        self.used: set = set()
        self.entries: list = []
        self.plants: list = []
        self.lookalikes: list = []
        self.kind_n: dict = {}
        self.clock = START_EPOCH * 1000 + self.rng.randint(0, 999)
        self.formats = load_formats()
        self.vendor_pool = list(self.formats)
        self.rng.shuffle(self.vendor_pool)

    # ---- basics
    def run(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def pick(self, seq):
        return self.rng.choice(seq)

    def unique(self, make):
        for _ in range(200):
            v = make()
            if str(v) not in self.used:
                self.used.add(str(v))
                return v
        raise RuntimeError("cannot make a unique value")

    def uuid(self, upper=False) -> str:
        u = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        return u.upper() if upper else u

    def P(self, kind, value, context=None) -> M:
        return M(kind, value, True, context)

    def L(self, kind, value, context=None) -> M:
        return M(kind, value, False, context)

    # ---- personal data
    def first(self):
        return self.pick(FIRST)

    def last(self):
        return self.pick(LAST)

    def full_name(self):
        return self.unique(lambda: f"{self.first()} {self.last()}")

    def email(self, name=None):
        def make():
            f, l = (name.split(" ", 1) if name else (self.first(), self.last()))
            local = self.pick([f"{f}.{l}", f"{f[0]}{l}", f"{f}{self.rng.randint(2, 99)}", f"{l}.{f}{self.rng.randint(1, 9)}"])
            local = re.sub(r"[^a-z0-9.]", "", local.lower().replace("ä", "ae").replace("ü", "ue").replace("ø", "o").replace("ö", "oe"))
            return f"{local}@{self.pick(EMAIL_DOMAINS)}"
        return self.unique(make)

    def phone_e164(self):
        def make():
            c = self.pick(["us", "de", "uk", "fr"])
            if c == "us":
                return f"+1{self.rng.randint(2, 9)}{self.run(DIGITS, 2)}{self.rng.randint(2, 9)}{self.run(DIGITS, 2).replace('55', '56')}{self.run(DIGITS, 4)}"
            if c == "de":
                return f"+4915{self.pick('1279')}{self.run(DIGITS, 8)}"
            if c == "uk":
                return f"+447{self.pick('4589')}{self.run(DIGITS, 8)}"
            return f"+336{self.run(DIGITS, 8)}"
        return self.unique(make)

    def phone_national(self):
        def make():
            c = self.pick(["de", "us", "uk"])
            if c == "de":
                return f"030 {self.run(DIGITS, 4)} {self.run(DIGITS, 4)}"
            if c == "us":
                return f"({self.rng.randint(2, 9)}{self.run(DIGITS, 2)}) {self.rng.randint(2, 9)}{self.run(DIGITS, 2)}-{self.run(DIGITS, 4)}"
            return f"020 {self.rng.randint(3, 8)}{self.run(DIGITS, 3)} {self.run(DIGITS, 4)}"
        return self.unique(make)

    def card(self, brand=None):
        def make():
            b = brand or self.pick(["visa", "mc", "amex"])
            if b == "visa":
                payload = "4" + self.run(DIGITS, 14)
            elif b == "mc":
                payload = str(self.rng.randint(51, 55)) + self.run(DIGITS, 13)
            else:
                payload = self.pick(["34", "37"]) + self.run(DIGITS, 12)
            return payload + luhn_digit(payload)
        return self.unique(make)

    def iban(self):
        def make():
            c = self.pick(["DE", "GB", "FR", "NL"])
            if c == "DE":
                bban = self.run(DIGITS, 18)
            elif c == "GB":
                bban = self.pick(["NWBK", "BARC", "MIDL", "LOYD"]) + self.run(DIGITS, 14)
            elif c == "FR":
                bban = self.run(DIGITS, 10) + self.run(UPPER + DIGITS, 11) + self.run(DIGITS, 2)
            else:
                bban = self.pick(["ABNA", "INGB", "RABO"]) + self.run(DIGITS, 10)
            return c + iban_check(c, bban) + bban
        return self.unique(make)

    def ssn(self):
        def make():
            area = self.rng.randint(1, 899)
            if area == 666:
                area = 667
            return f"{area:03d}-{self.rng.randint(1, 99):02d}-{self.rng.randint(1, 9999):04d}"
        return self.unique(make)

    def ni_number(self, spaced=False):
        def make():
            a = self.pick("ABCEGHJKLMNOPRSTWXYZ")
            b = self.pick("ABCEGHJKLMNPRSTWXYZ")
            if a + b in ("BG", "GB", "NK", "KN", "TN", "NT", "ZZ"):
                b = "A"
            d = self.run(DIGITS, 6)
            s = self.pick("ABCD")
            return f"{a}{b} {d[:2]} {d[2:4]} {d[4:]} {s}" if spaced else f"{a}{b}{d}{s}"
        return self.unique(make)

    def passport(self, country):
        if country == "de":
            return self.unique(lambda: "C" + self.run("CFGHJKLMNPRTVWXYZ0123456789", 8))
        if country == "us":
            return self.unique(lambda: self.pick("5A") + self.run(DIGITS, 8))
        return self.unique(lambda: self.run(DIGITS, 9))

    def dob(self, style="iso"):
        y, m, d = self.rng.randint(1948, 2004), self.rng.randint(1, 12), self.rng.randint(1, 28)
        if style == "iso":
            return self.unique(lambda: f"{self.rng.randint(1948, 2004)}-{m:02d}-{d:02d}")
        if style == "eu":
            return self.unique(lambda: f"{d:02d}.{m:02d}.{self.rng.randint(1948, 2004)}")
        return self.unique(lambda: f"{m:02d}/{d:02d}/{self.rng.randint(1948, 2004)}")

    def street(self):
        return self.unique(lambda: self.pick([f"{self.rng.randint(12, 9800)} {self.pick(STREETS)}",
                                              f"{self.pick(STREETS)} {self.rng.randint(2, 180)}"]))

    def mac(self, sep=":"):
        def make():
            first = self.rng.randrange(256) & 0xFC  # unicast, globally administered
            octs = [first] + [self.rng.randrange(256) for _ in range(5)]
            return sep.join(f"{o:02x}" for o in octs)
        return self.unique(make)

    def ipv4(self):
        def make():
            a = self.pick([23, 31, 37, 46, 62, 77, 79, 81, 84, 87, 89, 91, 94, 109, 141, 151, 176, 178, 185, 188, 212, 217])
            return f"{a}.{self.rng.randint(1, 254)}.{self.rng.randint(0, 254)}.{self.rng.randint(2, 254)}"
        return self.unique(make)

    def ipv6(self):
        def make():
            head = self.pick(["2a02:8108", "2a01:c22", "2600:1700", "2003:e4", "2a00:23c5"])
            return head + ":" + ":".join(f"{self.rng.randrange(1, 65536):x}" for _ in range(6))
        return self.unique(make)

    def latlng(self):
        lat = round(self.rng.uniform(35.0, 60.0), 6)
        lng = round(self.rng.uniform(-10.0, 25.0), 6)
        return lat, lng

    def jwt(self, payload: dict) -> str:
        h = {"alg": "RS256", "kid": self.run(HEX, 16), "typ": "JWT"}
        enc = lambda d: base64.urlsafe_b64encode(json.dumps(d, separators=(",", ":")).encode()).decode().rstrip("=")
        return f"{enc(h)}.{enc(payload)}.{self.run(B64URL, 342)}"

    def vendor(self):
        """The next vendor token format from the shuffled pool: (kind, value)."""
        if not self.vendor_pool:
            self.vendor_pool = list(self.formats)
            self.rng.shuffle(self.vendor_pool)
        fmt = self.vendor_pool.pop()
        return f"vendor.{fmt['id']}", self.unique(lambda: vendor_value(self.rng, fmt))

    def V(self) -> M:
        k, v = self.vendor()
        return self.P(k, v)

    # ---- registering
    def reg(self, m: M, idx: int, path: list, inner=None, exact=False):
        n = self.kind_n.get((m.plant, m.kind), 0) + 1
        self.kind_n[(m.plant, m.kind)] = n
        rec = {"id": f"{m.kind}#{n}", "kind": m.kind, "class": kind_class(m.kind), "value": m.value,
               "entry": idx, "path": list(path), "location": f"entries[{idx}].{fmt_path(path)}{fmt_inner(inner)}"}
        if inner:
            rec["inner"] = [list(s) for s in inner]
        if m.context is not None:
            rec["context"] = m.context
        if not m.plant:
            rec["exact"] = bool(exact)
            self.lookalikes.append(rec)
        else:
            self.plants.append(rec)

    def text(self, parts, idx, path, inner=()) -> str:
        """Joins strings and markers; registers each marker as being inside this text."""
        out = []
        for p in parts:
            if isinstance(p, M):
                self.reg(p, idx, path, list(inner) or None)
                out.append(str(p.value))
            elif isinstance(p, T):
                out.append(self.text(p.parts, idx, path, inner))
            else:
                out.append(p)
        return "".join(out)

    def mat(self, obj, idx, path, steps=(), keys=()):
        """Materializes a JSON document with markers; registers them with their JSON route."""
        here = list(steps) + [["json", list(keys)]]
        if isinstance(obj, M):
            self.reg(obj, idx, path, here, exact=True)
            return obj.value
        if isinstance(obj, T):
            return self.text(obj.parts, idx, path, here)
        if isinstance(obj, JS):
            return json.dumps(self.mat(obj.doc, idx, path, here, ()), separators=(",", ":"), ensure_ascii=False)
        if isinstance(obj, dict):
            return {k: self.mat(v, idx, path, steps, list(keys) + [k]) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.mat(v, idx, path, steps, list(keys) + [i]) for i, v in enumerate(obj)]
        return obj

    def jbody(self, doc, idx, path, pretty=False) -> str:
        d = self.mat(doc, idx, path)
        return json.dumps(d, indent=2 if pretty else None, ensure_ascii=False)

    def form(self, pairs, idx, path, steps=()) -> str:
        out = []
        for k, v in pairs:
            if isinstance(v, (M, T)):
                val = self.text([v], idx, path, list(steps) + [["form", k]])
            else:
                val = str(v)
            out.append((k, val))
        return urlencode(out, quote_via=quote)

    def url(self, base, pairs, idx, path=("request", "url"), fragment=None) -> str:
        q = []
        for k, v in pairs:
            if isinstance(v, (M, T)):
                val = self.text([v], idx, list(path), [["query", k]])
            else:
                val = str(v)
            q.append((k, val))
        u = base + ("?" + urlencode(q, quote_via=quote, safe="/") if q else "")
        if fragment is not None:
            u += "#" + fragment
        return u

    # ---- entries
    def started(self) -> str:
        self.clock += self.rng.randint(150, 2500)
        secs, ms = divmod(self.clock, 1000)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{ms:03d}Z"

    def reserve(self) -> int:
        self.entries.append(None)
        return len(self.entries) - 1

    def headers(self, pairs, idx, side) -> list:
        out = []
        for i, (n, v) in enumerate(pairs):
            if isinstance(v, (M, T)):
                v = self.text([v], idx, [side, "headers", i, "value"])
            out.append({"name": n, "value": v})
        return out

    def entry(self, idx, method, url, req_headers=(), req_body=None, req_mime=None, status=200,
              status_text="OK", resp_headers=(), resp_body="", resp_mime="application/json",
              redirect="", extra=None, resp_b64=False):
        """Entry `idx`. Header lists may hold markers (indices follow the list given; Host is
        appended after them, Content-Type/-Length after the response headers)."""
        host = urlsplit(url).netloc.rsplit("@", 1)[-1]
        rh = self.headers(list(req_headers), idx, "request")
        rh.append({"name": "Host", "value": host})
        request = {"method": method, "url": url, "httpVersion": "HTTP/1.1", "cookies": [], "headers": rh,
                   "queryString": [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)],
                   "headersSize": -1, "bodySize": 0}
        for h in rh:
            if h["name"].lower() == "cookie":
                for part in h["value"].split(";"):
                    if "=" in part:
                        k, v = part.strip().split("=", 1)
                        request["cookies"].append({"name": k, "value": v})
        if req_body is not None:
            raw = req_body.encode()
            request["postData"] = {"mimeType": req_mime, "text": req_body}
            request["bodySize"] = len(raw)
            rh.append({"name": "Content-Type", "value": req_mime})
            rh.append({"name": "Content-Length", "value": str(len(raw))})
        raw_resp = resp_body if isinstance(resp_body, bytes) else resp_body.encode()
        resp_h = self.headers(list(resp_headers), idx, "response")
        rid = self.L("uuid.request-id", self.uuid())
        resp_h.append({"name": "X-Request-Id", "value": rid.value})
        self.reg(rid, idx, ["response", "headers", len(resp_h) - 1, "value"])
        if status != 101:
            resp_h.append({"name": "Content-Type", "value": resp_mime})
            resp_h.append({"name": "Content-Length", "value": str(len(raw_resp))})
        content = {"size": len(raw_resp), "mimeType": resp_mime if status != 101 else "x-unknown"}
        if raw_resp:
            if resp_b64:
                content["text"] = base64.b64encode(raw_resp).decode()
                content["encoding"] = "base64"
            else:
                content["text"] = raw_resp.decode()
        cookies = []
        for h in resp_h:
            if h["name"].lower() == "set-cookie":
                nv = h["value"].split(";", 1)[0]
                k, v = nv.split("=", 1)
                cookies.append({"name": k, "value": v})
        response = {"status": status, "statusText": status_text, "httpVersion": "HTTP/1.1", "cookies": cookies,
                    "headers": resp_h, "content": content, "redirectURL": redirect, "headersSize": -1,
                    "bodySize": len(raw_resp)}
        send, wait, receive = self.rng.randint(0, 3), self.rng.randint(8, 240), self.rng.randint(0, 30)
        e = {"startedDateTime": self.started(), "time": send + wait + receive, "request": request,
             "response": response, "cache": {}, "timings": {"send": send, "wait": wait, "receive": receive},
             "serverIPAddress": self.pick(["151.101.65.140", "104.18.32.7", "13.107.42.14"]),
             "connection": str(self.rng.randint(1000, 99999))}
        if extra:
            e.update(extra)
        self.entries[idx] = e
        return e


# ---------------------------------------------------------------- shapes

def std(g: Gen, accept="application/json"):
    return [("User-Agent", UA), ("Accept", accept), ("Accept-Language", "en-GB;q=1.0, de-DE;q=0.9")]


def e_llm_openai(g: Gen):
    idx = g.reserve()
    email, phone = g.email(), g.phone_e164()
    k, v = g.vendor()
    key = M(k, v, True)
    req = {"model": g.L("llm.model", "gpt-4o-mini-2024-07-18"),
           "messages": [{"role": "system", "content": "You are a support agent for Kestrel."},
                        {"role": "user", "content": T("Please update my contact: email ", g.P("pii.email", email),
                                                      ", phone ", g.P("pii.phone-e164", phone), ". Thanks!")}],
           "max_tokens": g.L("llm.max_tokens", 1024), "temperature": 0.2,
           "max_completion_tokens": g.L("llm.max_completion_tokens", 2048),
           "user": g.P("llm.end-user-email", g.email())}
    body = g.jbody(req, idx, ["request", "postData", "text"])
    pt, ct = g.rng.randint(40, 900), g.rng.randint(10, 600)
    resp = {"id": g.L("llm.completion-id", "chatcmpl-" + g.run(ALNUM, 29)), "object": "chat.completion",
            "created": START_EPOCH + 40, "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "Done. Is there anything else?"}}],
            "usage": {"prompt_tokens": g.L("llm.prompt_tokens", pt), "completion_tokens": g.L("llm.completion_tokens", ct),
                      "total_tokens": g.L("llm.total_tokens", pt + ct),
                      "prompt_tokens_details": {"cached_tokens": g.L("llm.cached_tokens", 0)}},
            "system_fingerprint": g.L("llm.system-fingerprint", "fp_" + g.run(HEX, 10))}
    rbody = g.jbody(resp, idx, ["response", "content", "text"])
    g.entry(idx, "POST", "https://api.openai.com/v1/chat/completions",
            [("Authorization", T("Bearer ", key)), ("Content-Type", "application/json"),
             ("OpenAI-Organization", "org-" + g.run(ALNUM, 24))],
            body, "application/json", resp_body=rbody,
            resp_headers=[("openai-processing-ms", g.L("llm.processing-ms", str(g.rng.randint(200, 4000)))),
                          ("x-ratelimit-remaining-tokens", g.L("llm.ratelimit-remaining-tokens", str(g.rng.randint(10000, 150000))))])


def e_llm_anthropic_sse(g: Gen):
    idx = g.reserve()
    k, v = g.vendor()
    name, dob = g.full_name(), g.dob()
    req = {"model": "claude-sonnet-4-20250514", "max_tokens": g.L("llm.max_tokens", 4096), "stream": True,
           "system": "Summarise the customer record.",
           "messages": [{"role": "user", "content": T("Customer ", g.P("pii.person-name", name), ", born ",
                                                      g.P("pii.dob", dob), ", account ", g.P("payment.iban", g.iban()))}],
           "metadata": {"user_id": g.P("llm.end-user-id", g.uuid())}}
    body = g.jbody(req, idx, ["request", "postData", "text"])
    path = ["response", "content", "text"]
    events = [("message_start", {"type": "message_start", "message": {"id": g.L("llm.message-id", "msg_" + g.run(ALNUM, 24)),
                                                                      "usage": {"input_tokens": g.L("llm.input_tokens", g.rng.randint(100, 900)), "output_tokens": 1}}}),
              ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                       "delta": {"type": "text_delta", "text": T("The customer ", g.P("pii.person-name", g.full_name()), " lives at ")}}),
              ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                       "delta": {"type": "text_delta", "text": T(g.P("pii.street-address", g.street()), ".")}}),
              ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                 "usage": {"output_tokens": g.L("llm.output_tokens", g.rng.randint(20, 400))}}),
              ("message_stop", {"type": "message_stop"})]
    lines = []
    for i, (ev, doc) in enumerate(events):
        d = g.mat(doc, idx, path, [["sse", i]])
        lines.append(f"event: {ev}\ndata: {json.dumps(d, separators=(',', ':'), ensure_ascii=False)}\n\n")
    g.entry(idx, "POST", "https://api.anthropic.com/v1/messages",
            [("x-api-key", M(k, v, True)), ("anthropic-version", g.L("llm.anthropic-version", "2023-06-01")),
             ("anthropic-beta", "prompt-caching-2024-07-31")],
            body, "application/json", resp_body="".join(lines), resp_mime="text/event-stream")


def e_llm_other(g: Gen):
    """An OpenAI-compatible provider with a vendor key and an embeddings call."""
    idx = g.reserve()
    k, v = g.vendor()
    req = {"model": "text-embedding-3-small", "input": [T("ticket from ", g.P("pii.email", g.email()), " about a refund")],
           "dimensions": g.L("llm.dimensions", 512), "encoding_format": "float"}
    body = g.jbody(req, idx, ["request", "postData", "text"])
    resp = {"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [round(g.rng.uniform(-1, 1), 6) for _ in range(6)]}],
            "usage": {"prompt_tokens": g.L("llm.prompt_tokens", g.rng.randint(5, 90)), "total_tokens": g.L("llm.total_tokens", g.rng.randint(5, 90))}}
    g.entry(idx, "POST", "https://api.together.xyz/v1/embeddings",
            [("Authorization", T("Bearer ", M(k, v, True)))], body, "application/json",
            resp_body=g.jbody(resp, idx, ["response", "content", "text"]))


def e_oauth(g: Gen):
    verifier = g.unique(lambda: g.run(ALNUM + "-._~", g.rng.randint(43, 96)))
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    client_id = "kestrel-ios-" + g.run(HEX, 8)
    code = g.unique(lambda: g.run(B64URL, g.rng.randint(30, 44)))
    state = g.run(B64URL, 22)
    redirect = "com.kestrel.app:/oauth2redirect"
    # 1) authorize
    idx = g.reserve()
    url = g.url("https://auth.kestrel-app.com/oauth2/authorize",
                [("response_type", "code"), ("client_id", client_id), ("redirect_uri", redirect),
                 ("scope", g.L("oauth.scope", "openid profile email offline_access")), ("state", state),
                 ("code_challenge", challenge), ("code_challenge_method", g.L("oauth.code_challenge_method", "S256")),
                 ("login_hint", g.P("pii.email", g.email()))], idx)
    loc = f"{redirect}?code={code}&state={state}"
    g.entry(idx, "GET", url, std(g, "text/html"), status=302, status_text="Found",
            resp_headers=[("Location", T(redirect, "?code=", g.P("oauth.authorization-code", code), "&state=", state)),
                          ("Cache-Control", "no-store")], resp_mime="text/html", redirect=loc)
    # 2) token exchange, form body
    idx = g.reserve()
    form = g.form([("grant_type", "authorization_code"), ("code", g.P("oauth.authorization-code", code)),
                   ("redirect_uri", redirect), ("client_id", client_id),
                   ("code_verifier", g.P("oauth.code-verifier", verifier))], idx, ["request", "postData", "text"])
    at, rt = g.unique(lambda: g.run(B64URL, 64)), g.unique(lambda: "rt_" + g.run(B64URL, 48))
    name = g.full_name()
    idt = g.jwt({"iss": "https://auth.kestrel-app.com", "sub": g.uuid(), "aud": client_id, "email": g.email(name),
                 "name": name, "iat": START_EPOCH, "exp": START_EPOCH + 3600})
    resp = {"access_token": g.P("oauth.access-token", at), "token_type": g.L("oauth.token_type", "Bearer"),
            "expires_in": g.L("oauth.expires_in", 3600), "refresh_token": g.P("oauth.refresh-token", rt),
            "id_token": g.P("oauth.id-token", idt), "scope": g.L("oauth.scope", "openid profile email offline_access")}
    g.entry(idx, "POST", "https://auth.kestrel-app.com/oauth2/token", std(g), form,
            "application/x-www-form-urlencoded", resp_body=g.jbody(resp, idx, ["response", "content", "text"]),
            resp_headers=[("Cache-Control", "no-store"), ("Pragma", "no-cache")])
    # 3) a PKCE verifier and client secret in the query (a device-flow style debug endpoint)
    idx = g.reserve()
    verifier2 = g.unique(lambda: g.run(ALNUM + "-._~", 64))
    code2 = g.unique(lambda: g.run(B64URL, 32))
    url = g.url("https://login.partner-idp.net/oauth/token",
                [("grant_type", "authorization_code"), ("code", g.P("oauth.authorization-code", code2)),
                 ("code_verifier", g.P("oauth.code-verifier", verifier2)),
                 ("client_secret", g.P("oauth.client-secret", g.run(B64URL, 40))), ("client_id", client_id)], idx)
    err = {"error": "invalid_grant", "error_description": "The authorization code has expired",
           "error_uri": g.L("url.docs", "https://login.partner-idp.net/docs/errors#invalid_grant")}
    g.entry(idx, "GET", url, std(g), status=400, status_text="Bad Request",
            resp_body=g.jbody(err, idx, ["response", "content", "text"]))
    # 4) refresh with JSON body
    idx = g.reserve()
    req = {"grant_type": "refresh_token", "refresh_token": g.P("oauth.refresh-token", rt), "client_id": client_id,
           "client_secret": g.P("oauth.client-secret", "GOCSPX-" + g.run(B64URL, 28))}
    resp = {"access_token": g.P("oauth.access-token", g.unique(lambda: "ya29.a0" + g.run(B64URL, 120))),
            "token_type": g.L("oauth.token_type", "Bearer"), "expires_in": g.L("oauth.expires_in", 3599),
            "refresh_token_expires_in": g.L("oauth.refresh_token_expires_in", 604800)}
    g.entry(idx, "POST", "https://oauth2.googleapis.com/token", std(g), g.jbody(req, idx, ["request", "postData", "text"]),
            "application/json", resp_body=g.jbody(resp, idx, ["response", "content", "text"]))


def e_push(g: Gen):
    idx = g.reserve()
    apns = g.unique(lambda: g.run(HEX, 64))
    voip = g.unique(lambda: g.run(HEX, 64))
    req = {"platform": "ios", "apns_token": g.P("push.apns-device-token", apns),
           "voip": {"token": g.P("push.apns-voip-token", voip)}, "environment": "production",
           "bundle_id": g.L("app.bundle-id", "com.kestrel.app"), "app_version": g.L("version.semver", "7.4.1"),
           "build": g.L("version.build", "20260311.2"), "locale": "en_GB",
           "timezone": g.L("locale.timezone", "Europe/London"), "checksum_sha256": g.L("hash.sha256", g.run(HEX, 64))}
    g.entry(idx, "POST", f"https://{API}/v2/devices/register", std(g) + [("Authorization", T("Bearer ", g.P("auth.bearer", g.run(ALNUM, 40))))],
            g.jbody(req, idx, ["request", "postData", "text"]), "application/json",
            resp_body=g.jbody({"ok": True, "device_id": g.L("id.device-record", "dev_" + g.run(LOWER + DIGITS, 12))}, idx, ["response", "content", "text"]),
            status=201, status_text="Created")
    idx = g.reserve()
    fcm = g.unique(lambda: g.run(B64URL, 22) + ":APA91b" + g.run(B64URL, 134))
    fcm2 = g.unique(lambda: g.run(B64URL, 22) + ":APA91b" + g.run(B64URL, 134))
    req = {"message": {"token": g.P("push.fcm-token", fcm), "notification": {"title": "Your order shipped", "body": "Track it in the app"},
                       "data": {"order_id": g.L("id.order", "ORD-" + g.run(DIGITS, 8)), "deeplink": "kestrel://orders"}}}
    k, v = g.vendor()
    g.entry(idx, "POST", "https://fcm.googleapis.com/v1/projects/kestrel-prod/messages:send",
            [("Authorization", T("Bearer ", g.P("oauth.access-token", "ya29.c." + g.run(B64URL, 150)))), ("Content-Type", "application/json")],
            g.jbody(req, idx, ["request", "postData", "text"]), "application/json",
            resp_body=g.jbody({"name": "projects/kestrel-prod/messages/0:" + g.run(DIGITS, 16)}, idx, ["response", "content", "text"]))
    idx = g.reserve()
    req = {"platform": "android", "registration_ids": [g.P("push.fcm-token", fcm2)], "key": M(k, v, True)}
    g.entry(idx, "PUT", f"https://{API}/v2/push/subscriptions", std(g),
            g.jbody(req, idx, ["request", "postData", "text"]), "application/json", status=204, status_text="No Content", resp_mime="text/plain")


def e_ads(g: Gen):
    idx = g.reserve()
    lat, lng = g.latlng()
    ip4, ip6 = g.ipv4(), g.ipv6()
    req = {"event": "app_open", "ts": START_EPOCH + 120,
           "device": {"idfa": g.P("adid.idfa", g.uuid(upper=True)), "idfv": g.P("adid.idfv", g.uuid(upper=True)),
                      "advertising_id": g.P("adid.advertising-id", g.uuid()), "gaid": g.P("adid.gaid", g.uuid()),
                      "limit_ad_tracking": False, "model": "iPhone16,2", "os_version": g.L("version.os", "18.3.1"),
                      "wifi_bssid": g.P("net.wifi-bssid", g.mac()), "mac_address": g.P("net.mac-address", g.mac()),
                      "bluetooth_mac": g.P("net.mac-address", g.mac("-").upper()),
                      "lat": g.P("geo.device-lat", lat), "lon": g.P("geo.device-lng", lng)},
           "network": {"ip": g.P("net.ipv4-public", ip4), "ipv6": g.P("net.ipv6-public", ip6), "carrier": "Vodafone UK"},
           "session_id": g.uuid(), "event_uuid": g.L("uuid.event-id", g.uuid()), "sdk_version": g.L("version.semver", "6.21.0"),
           "theme_color": g.L("style.hex-colour", "#" + g.run(HEX, 6)), "tz": g.L("locale.timezone", "Europe/Berlin"),
           "country": g.L("locale.country", "DE")}
    xff = g.ipv4()
    g.entry(idx, "POST", g.url("https://app.adjust-tracker.net/session", [("ip", g.P("net.ipv4-public", g.ipv4())),
                                                                           ("app_token", "ab12" + g.run(LOWER, 8))], idx),
            std(g) + [("X-Forwarded-For", T(g.P("net.ipv4-public", xff), ", 10.0.0.12")),
                      ("X-Real-IP", g.P("net.ipv6-public", g.ipv6()))],
            g.jbody(req, idx, ["request", "postData", "text"]), "application/json",
            resp_body=g.jbody({"status": "ok", "adid": g.P("adid.attribution-id", g.run(HEX, 32))}, idx, ["response", "content", "text"]))


def e_payments(g: Gen):
    # 1) JSON payment method with card, exp_month/exp_year, CVC
    idx = g.reserve()
    name = g.full_name()
    card = g.card("visa")
    mm, yy = g.rng.randint(1, 12), g.rng.randint(2027, 2032)
    req = {"type": "card", "card": {"number": g.P("payment.card-number", card), "exp_month": g.P("payment.exp-month", mm),
                                    "exp_year": g.P("payment.exp-year", yy), "cvc": g.P("payment.cvc", g.run(DIGITS, 3))},
           "billing_details": {"name": g.P("pii.person-name", name), "email": g.P("pii.email", g.email(name)),
                               "address": {"line1": g.P("pii.street-address", g.street()), "city": "Leeds",
                                           "postal_code": g.P("pii.postal-code", f"LS{g.rng.randint(1, 28)} {g.rng.randint(1, 9)}{g.run('ABDEFGHJLNPQRSTUWXYZ', 2)}"),
                                           "country": g.L("locale.country", "GB")}}}
    k, v = g.vendor()
    resp = {"id": g.L("id.payment-method", "pm_" + g.run(ALNUM, 24)), "object": "payment_method",
            "card": {"brand": "visa", "last4": card[-4:], "funding": "credit", "country": "GB"},
            "created": START_EPOCH + 200, "livemode": True}
    g.entry(idx, "POST", "https://api.stripe.com/v1/payment_methods",
            [("Authorization", T("Bearer ", M(k, v, True))), ("Stripe-Version", g.L("version.date-api", "2024-06-20")),
             ("Idempotency-Key", g.uuid())],
            g.jbody(req, idx, ["request", "postData", "text"]), "application/json",
            resp_body=g.jbody(resp, idx, ["response", "content", "text"]))
    # 2) a form checkout: grouped card number, expiry 11/26, CVC, amount look-alikes
    idx = g.reserve()
    mc = g.card("mc")
    grouped = " ".join(mc[i:i + 4] for i in range(0, 16, 4))
    exp = f"{g.rng.randint(1, 12):02d}/{g.rng.randint(27, 31)}"
    form = g.form([("card[number]", g.P("payment.card-number", grouped)), ("card[expiry]", g.P("payment.card-expiry", exp)),
                   ("card[cvc]", g.P("payment.cvc", g.run(DIGITS, 3))),
                   ("amount", g.L("money.amount-minor", "4999")), ("currency", g.L("money.currency", "eur")),
                   ("sku", g.L("commerce.sku", "KST-" + g.run(UPPER, 3) + "-" + g.run(DIGITS, 4))),
                   ("cardholder", g.P("pii.person-name", g.full_name()))], idx, ["request", "postData", "text"])
    g.entry(idx, "POST", "https://pay.kestrel-app.com/checkout/confirm", std(g, "text/html"), form,
            "application/x-www-form-urlencoded", resp_mime="text/html",
            resp_body="<!doctype html><html><body><p>Payment received. Order <b>" + g.text([g.L("id.order", "ORD-" + g.run(DIGITS, 8))], idx, ["response", "content", "text"]) + "</b></p></body></html>")
    # 3) SEPA + SDK tokens + amex
    idx = g.reserve()
    amex = g.card("amex")
    iban = g.iban()
    spaced = " ".join(iban[i:i + 4] for i in range(0, len(iban), 4))
    req = {"payment_method": {"type": "sepa_debit", "sepa_debit": {"iban": g.P("payment.iban", spaced)},
                              "mandate": {"accepted_at": g.L("date.iso", "2026-03-14T09:31:00Z"), "ip_address": g.P("net.ipv4-public", g.ipv4())}},
           "backup_card": {"pan": g.P("payment.card-number", amex), "expiry": g.P("payment.card-expiry", f"{g.rng.randint(1, 12):02d}/{g.rng.randint(27, 31)}"),
                           "security_code": g.P("payment.cvc", g.run(DIGITS, 4))},
           "sdk": {"braintree_client_token": g.P("payment.sdk-client-token", base64.b64encode(json.dumps(
               {"version": 2, "authorizationFingerprint": g.run(HEX, 64) + "|created_at=2026-03-14T09:30:00&merchant_id=" + g.run(LOWER + DIGITS, 16),
                "configUrl": "https://api.braintreegateway.com/merchants/x/client_api/v1/configuration"}).encode()).decode()),
                   "ephemeral_key": g.P("payment.ephemeral-key", "ek_live_" + g.run(ALNUM, 99)),
                   "access_token": g.P("payment.sdk-access-token", "A21AA" + g.run(B64URL, 92))},
           "price": g.L("money.price", "19.99"), "order_id": g.L("id.order", "ORD-" + g.run(DIGITS, 8))}
    k, v = g.vendor()
    resp = {"status": "requires_confirmation", "client_secret": M(k, v, True), "amount": g.L("money.amount-minor", 1999),
            "currency": g.L("money.currency", "eur"), "created_at": g.L("date.created_at", "2026-03-14T09:31:02Z")}
    g.entry(idx, "POST", f"https://{API}/v3/payments/intents", std(g), g.jbody(req, idx, ["request", "postData", "text"]),
            "application/json", resp_body=g.jbody(resp, idx, ["response", "content", "text"]))


def sigv4_url(g: Gen, idx, path):
    akid = g.unique(lambda: "ASIA" + g.run(UPPER + "234567", 16))
    sig = g.unique(lambda: g.run(HEX, 64))
    tok = g.unique(lambda: "IQoJb3JpZ2luX2VjE" + g.run(B64, 300))
    parts = ["https://kestrel-exports.s3.eu-west-1.amazonaws.com/exports/2026/03/orders-", g.run(DIGITS, 6), ".csv",
             "?X-Amz-Algorithm=", g.L("cloud.x-amz-algorithm", "AWS4-HMAC-SHA256"),
             "&X-Amz-Credential=", g.P("cloud.aws-access-key-id", akid), "%2F20260314%2Feu-west-1%2Fs3%2Faws4_request",
             "&X-Amz-Date=20260314T093000Z&X-Amz-Expires=", g.L("cloud.x-amz-expires", "900", context="X-Amz-Expires=900"),
             "&X-Amz-Security-Token=", g.P("cloud.aws-security-token", tok),
             "&X-Amz-SignedHeaders=host&X-Amz-Signature=", g.P("cloud.aws-sigv4-signature", sig)]
    out = []
    for p in parts:
        if isinstance(p, M):
            g.reg(p, idx, path)
            out.append(quote(str(p.value), safe="") if p.kind == "cloud.aws-security-token" else str(p.value))
        else:
            out.append(p)
    return "".join(out)


def gcs_url(g: Gen, idx, path):
    sig = g.unique(lambda: g.run(HEX, 512))
    parts = ["https://storage.googleapis.com/kestrel-media/uploads/", g.uuid(), ".jpg?X-Goog-Algorithm=GOOG4-RSA-SHA256",
             "&X-Goog-Credential=uploader%40kestrel-prod.iam.gserviceaccount.com%2F20260314%2Fauto%2Fstorage%2Fgoog4_request",
             "&X-Goog-Date=20260314T093000Z&X-Goog-Expires=", g.L("cloud.x-goog-expires", "3600", context="X-Goog-Expires=3600"),
             "&X-Goog-SignedHeaders=host&X-Goog-Signature=", g.P("cloud.gcs-signature", sig)]
    return g.text(parts, idx, path)


def sas_url(g: Gen, idx, path):
    sig = g.unique(lambda: base64.b64encode(bytes(g.rng.randrange(256) for _ in range(32))).decode())
    parts = ["https://kestrelbackups.blob.core.windows.net/invoices/", g.run(DIGITS, 8), ".pdf?sv=",
             g.L("cloud.azure-sv", "2022-11-02", context="sv=2022-11-02"), "&ss=b&srt=o&sp=r&se=2026-03-15T10%3A00%3A00Z&spr=https&sig=",
             g.P("cloud.azure-sas-sig", sig)]
    out = []
    for p in parts:
        if isinstance(p, M) and p.kind == "cloud.azure-sas-sig":
            g.reg(p, idx, path)
            out.append(quote(p.value, safe=""))
        elif isinstance(p, M):
            g.reg(p, idx, path)
            out.append(str(p.value))
        else:
            out.append(p)
    return "".join(out)


def e_cloud(g: Gen):
    for make, method, mime in ((sigv4_url, "GET", "text/csv"), (gcs_url, "PUT", "application/json"), (sas_url, "GET", "application/pdf")):
        idx = g.reserve()
        url = make(g, idx, ["request", "url"])
        body = "id,sku,qty\n1,KST-AAA-0001,2\n" if mime == "text/csv" else ("" if mime == "application/pdf" else "{}")
        g.entry(idx, method, url, [("User-Agent", UA)], resp_body=body, resp_mime=mime)
    # signed URLs inside JSON
    idx = g.reserve()
    path = ["response", "content", "text"]
    doc = {"exports": [{"kind": "orders", "download_url": T(sigv4_url(g, idx, path))},
                       {"kind": "media", "upload_url": T(gcs_url(g, idx, path))},
                       {"kind": "invoice", "url": T(sas_url(g, idx, path))}],
           "thumbnail": g.L("url.public-image", f"https://cdn.{APP}/img/products/{g.run(DIGITS, 5)}/hero@2x.png"),
           "generated_at": g.L("date.created_at", "2026-03-14T09:40:00Z")}
    g.entry(idx, "GET", f"https://{API}/v2/exports", std(g) + [("Authorization", T("Bearer ", g.P("auth.bearer", g.run(ALNUM, 40))))],
            resp_body=json.dumps(g.mat(doc, idx, path)))


def e_soap_saml(g: Gen):
    idx = g.reserve()
    path = ["request", "postData", "text"]
    f, l = g.first(), g.last()
    k, v = g.vendor()
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" '
             'xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd" xmlns:ns="urn:kestrel:crm:v2">\n'
             '  <soapenv:Header>\n    <wsse:Security>\n      <wsse:UsernameToken>\n        <wsse:Username>',
             g.P("soap.username", f"svc_{g.run(LOWER, 6)}_crm"), '</wsse:Username>\n        <wsse:Password Type="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordText">',
             g.P("soap.password", g.run(ALNUM, 6) + "!" + g.run(ALNUM + "#%", 9)), '</wsse:Password>\n      </wsse:UsernameToken>\n    </wsse:Security>\n  </soapenv:Header>\n'
             '  <soapenv:Body>\n    <ns:RegisterCustomer version="', g.L("version.semver", "2.3.0"), '">\n      <ns:Customer firstName="',
             g.P("pii.first-name", f, context=f'firstName="{f}"'), '" lastName="', g.P("pii.last-name", l, context=f'lastName="{l}"'),
             '" email="', g.P("pii.email", g.email(f"{f} {l}")), '" dateOfBirth="', g.P("pii.dob", g.dob()), '" ssn="', g.P("pii.us-ssn", g.ssn()), '">\n'
             '        <ns:Address street="', g.P("pii.street-address", g.street()), '" city="Portland" zip="', g.P("pii.postal-code", str(g.rng.randint(97201, 97299)), context=None), '" country="US"/>\n'
             '        <ns:Phone type="mobile">', g.P("pii.phone-e164", g.phone_e164()), '</ns:Phone>\n'
             '        <ns:Note>Prefers contact after 5pm</ns:Note>\n      </ns:Customer>\n      <ns:ApiKey>', M(k, v, True), '</ns:ApiKey>\n'
             '      <ns:Sku>', g.L("commerce.sku", "KST-" + g.run(UPPER, 3) + "-" + g.run(DIGITS, 4)), '</ns:Sku>\n    </ns:RegisterCustomer>\n  </soapenv:Body>\n</soapenv:Envelope>\n']
    # make the postal code's context unique
    pc = parts[parts.index('" city="Portland" zip="') + 1]
    pc.context = f'zip="{pc.value}"'
    body = g.text(parts, idx, path)
    rpath = ["response", "content", "text"]
    rparts = ['<?xml version="1.0" encoding="UTF-8"?>\n<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:ns="urn:kestrel:crm:v2">\n'
              '  <soapenv:Body>\n    <ns:RegisterCustomerResponse>\n      <ns:CustomerId>', g.L("id.customer", "CUS-" + g.run(DIGITS, 9)),
              '</ns:CustomerId>\n      <ns:SessionToken>', g.P("soap.session-token", g.run(ALNUM, 48)),
              '</ns:SessionToken>\n      <ns:ExpiresIn>', g.L("oauth.expires_in", "3600", context="<ns:ExpiresIn>3600</ns:ExpiresIn>"),
              '</ns:ExpiresIn>\n      <ns:Created>', g.L("date.created_at", "2026-03-14T09:33:10Z"), '</ns:Created>\n    </ns:RegisterCustomerResponse>\n  </soapenv:Body>\n</soapenv:Envelope>\n']
    g.entry(idx, "POST", "https://crm.kestrel-app.com/soap/CustomerService",
            [("SOAPAction", '"urn:kestrel:crm:v2#RegisterCustomer"'), ("User-Agent", "Apache-HttpClient/4.5.14 (Java/17.0.9)")],
            body, "text/xml; charset=utf-8", resp_body=g.text(rparts, idx, rpath), resp_mime="text/xml; charset=utf-8")

    # SAML ACS: a base64 SAMLResponse in a form body
    idx = g.reserve()
    path = ["request", "postData", "text"]
    steps = [["form", "SAMLResponse"], ["b64"]]
    name_f, name_l = g.first(), g.last()
    sigval = g.unique(lambda: base64.b64encode(bytes(g.rng.randrange(256) for _ in range(256))).decode())
    xml_parts = ['<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_',
                 g.run(HEX, 40), '" Version="2.0" IssueInstant="2026-03-14T09:35:00Z" Destination="https://app.kestrel-app.com/saml/acs">'
                 '<saml:Issuer>https://idp.northwind-corp.com/saml2/idp</saml:Issuer>'
                 '<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo><ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>'
                 '<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/></ds:SignedInfo><ds:SignatureValue>',
                 g.P("saml.signature-value", sigval), '</ds:SignatureValue></ds:Signature>'
                 '<saml:Assertion ID="_', g.run(HEX, 40), '" Version="2.0" IssueInstant="2026-03-14T09:35:00Z"><saml:Subject>'
                 '<saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">', g.P("saml.nameid-email", g.email(f"{name_f} {name_l}")),
                 '</saml:NameID></saml:Subject><saml:AttributeStatement>'
                 '<saml:Attribute Name="displayName"><saml:AttributeValue>', g.P("pii.person-name", f"{name_f} {name_l}"), '</saml:AttributeValue></saml:Attribute>'
                 '<saml:Attribute Name="mobile"><saml:AttributeValue>', g.P("pii.phone-e164", g.phone_e164()), '</saml:AttributeValue></saml:Attribute>'
                 '<saml:Attribute Name="employeeNumber"><saml:AttributeValue>', g.P("pii.employee-number", "E" + g.run(DIGITS, 7)), '</saml:AttributeValue></saml:Attribute>'
                 '<saml:Attribute Name="department"><saml:AttributeValue>Finance</saml:AttributeValue></saml:Attribute>'
                 '</saml:AttributeStatement></saml:Assertion></samlp:Response>']
    # build the xml text, registering markers with the form+b64 steps
    xml = g.text(xml_parts, idx, path, steps)
    relay = f"https://app.{APP}/dashboard?tab=billing"
    body = urlencode([("SAMLResponse", base64.b64encode(xml.encode()).decode()), ("RelayState", relay)], quote_via=quote)
    g.reg(g.L("saml.relay-state", relay), idx, path, [["form", "RelayState"]], exact=True)
    g.entry(idx, "POST", "https://app.kestrel-app.com/saml/acs", std(g, "text/html") + [("Origin", "https://idp.northwind-corp.com")],
            body, "application/x-www-form-urlencoded", status=302, status_text="Found",
            resp_headers=[("Location", "/dashboard?tab=billing"), ("Set-Cookie", T("kst_session=", g.P("auth.session-cookie", g.run(B64URL, 48)), "; Path=/; Secure; HttpOnly; SameSite=Lax"))],
            resp_mime="text/html", redirect="/dashboard?tab=billing")


def e_csv(g: Gen):
    idx = g.reserve()
    path = ["response", "content", "text"]
    parts = ["customer_id,first_name,last_name,email,phone,date_of_birth,street,city,postcode,country,created_at,lifetime_value\n"]
    for i in range(6):
        f, l = g.first(), g.last()
        while any(isinstance(p, M) and p.kind == "pii.first-name" and p.value == f for p in parts):
            f = g.first()
        row = [g.L("id.customer", str(100230 + i * 7)), ",", g.P("pii.first-name", f, context=f",{f},"), ",",
               g.P("pii.last-name", l, context=f",{l},"), ",", g.P("pii.email", g.email(f"{f} {l}")), ",",
               g.P("pii.phone-e164", g.phone_e164()), ",", g.P("pii.dob", g.dob()), ",",
               '"', g.P("pii.street-address", g.street()), '"', ",", g.pick(["Leeds", "Bristol", "Hamburg", "Lyon"]), ",",
               g.P("pii.postal-code", f"{g.rng.randint(10000, 99999)}", context=None), ",",
               g.L("locale.country", g.pick(["GB", "DE", "FR"]), context=None), ",",
               g.L("date.created_at", f"2025-{g.rng.randint(1, 12):02d}-{g.rng.randint(1, 28):02d}T10:{g.rng.randint(10, 59)}:00Z"), ",",
               g.L("money.price", f"{g.rng.randint(10, 900)}.{g.rng.randint(10, 99)}"), "\n"]
        pc = row[18]
        pc.context = f",{pc.value},"
        cc = row[20]
        cc.context = f",{cc.value},2025-"
        parts.extend(row)
    body = g.text(parts, idx, path)
    g.entry(idx, "GET", f"https://{API}/admin/exports/customers.csv?from=2025-01-01&to=2025-12-31",
            std(g, "text/csv") + [("Authorization", T("Bearer ", g.P("auth.bearer", g.run(ALNUM, 40))))],
            resp_body=body, resp_mime="text/csv; charset=utf-8",
            resp_headers=[("Content-Disposition", 'attachment; filename="customers-2025.csv"')])


def e_graphql(g: Gen):
    idx = g.reserve()
    name = g.full_name()
    req = {"operationName": g.L("graphql.operation-name", "UpdateProfile"),
           "query": "mutation UpdateProfile($input: ProfileInput!) { updateProfile(input: $input) { id email __typename } }",
           "variables": {"input": {"id": g.L("graphql.global-id", base64.b64encode(f"User:{g.rng.randint(1000, 99999)}".encode()).decode()),
                                   "email": g.P("pii.email", g.email(name)), "fullName": g.P("pii.person-name", name),
                                   "phone": g.P("pii.phone-e164", g.phone_e164()), "password": g.P("auth.password", g.run(ALNUM, 8) + "-" + g.run(ALNUM, 6)),
                                   "passwordChangedAt": g.L("date.passwordChangedAt", "2025-11-02T18:22:41Z"),
                                   "birthday": g.P("pii.dob", g.dob("us"))}}}
    resp = {"data": {"updateProfile": {"id": g.L("graphql.global-id", base64.b64encode(f"User:{g.rng.randint(1000, 99999)}".encode()).decode()),
                                       "email": g.P("pii.email", g.email()), "__typename": "Profile"}},
            "extensions": {"cost": {"requestedQueryCost": g.L("graphql.cost", 12), "maximumAvailable": g.L("graphql.max-cost", 50000)}}}
    g.entry(idx, "POST", f"https://{API}/graphql", std(g) + [("Authorization", T("Bearer ", g.P("auth.bearer", g.run(ALNUM, 40))))],
            g.jbody(req, idx, ["request", "postData", "text"]), "application/json",
            resp_body=g.jbody(resp, idx, ["response", "content", "text"]))
    idx = g.reserve()
    email, tok = g.email(), g.run(ALNUM, 36)
    q = T('query { customer(email: "', g.P("pii.email", email), '") { orders(first: 5) { id total } } viewer { apiToken(rotate: "',
          g.P("auth.api-token", tok), '") } }')
    req = {"query": q, "variables": {}}
    k, v = g.vendor()
    resp = {"data": {"customer": {"orders": [{"id": g.L("id.order", "ORD-" + g.run(DIGITS, 8)), "total": g.L("money.price", "42.50")}]},
                     "viewer": {"apiToken": M(k, v, True)}}}
    g.entry(idx, "POST", f"https://{API}/graphql", std(g), g.jbody(req, idx, ["request", "postData", "text"]), "application/json",
            resp_body=g.jbody(resp, idx, ["response", "content", "text"]))


def e_sse(g: Gen):
    idx = g.reserve()
    path = ["response", "content", "text"]
    docs = [{"type": "session.renewed", "session_token": g.P("auth.session-token", g.run(B64URL, 40)), "expires_in": g.L("oauth.expires_in", 3600)},
            {"type": "contact.updated", "contact": {"email": g.P("pii.email", g.email()), "phone_landline": g.P("pii.phone-national", g.phone_national())}},
            {"type": "integration.rotated", "value": g.V(), "rotated_at": g.L("date.created_at", "2026-03-14T09:50:00Z")},
            {"type": "heartbeat", "seq": g.L("sse.seq", 4711)}]
    out = []
    for i, d in enumerate(docs):
        out.append(f"id: {i + 1}\nevent: update\ndata: {json.dumps(g.mat(d, idx, path, [['sse', i]]), ensure_ascii=False)}\n\n")
    g.entry(idx, "GET", f"https://stream.{APP}/v1/events?channel=account", std(g, "text/event-stream") + [("Last-Event-ID", "0")],
            resp_body="".join(out), resp_mime="text/event-stream")


def e_websocket(g: Gen):
    idx = g.reserve()
    key = base64.b64encode(bytes(g.rng.randrange(256) for _ in range(16))).decode()
    accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
    msgs = []
    t = START_EPOCH + 60.0

    def add(kind, doc=None, text=None):
        nonlocal t
        t += g.rng.randint(1, 400) / 1000
        path = ["_webSocketMessages", len(msgs), "data"]
        if doc is not None:
            data = json.dumps(g.mat(doc, idx, path), ensure_ascii=False)
        else:
            data = g.text(text, idx, path)
        msgs.append({"type": kind, "time": round(t, 3), "opcode": 1, "data": data})

    add("send", {"op": "auth", "token": g.P("auth.ws-token", g.run(ALNUM, 44))})
    add("receive", {"op": "ready", "user": {"name": g.P("pii.person-name", g.full_name()), "email": g.P("pii.email", g.email())}, "seq": g.L("ws.seq", 1)})
    add("send", {"op": "chat.send", "text": T("my card is ", g.P("payment.card-number", g.card("visa")), " and my IBAN ", g.P("payment.iban", g.iban()))})
    add("receive", {"op": "config", "data": g.V()})
    add("receive", {"op": "keys", "list": [g.V(), g.V()]})
    add("send", text=["PING ", g.L("ws.plain-text", "heartbeat-" + g.run(DIGITS, 4))])
    add("receive", text=["user ", g.P("pii.email", g.email()), " joined from ", g.P("net.ipv4-public", g.ipv4())])
    add("receive", {"op": "device", "firmware": g.L("version.4part", f"4.{g.rng.randint(1, 9)}.0.{g.rng.randint(10, 99)}"), "request_id": g.L("uuid.request-id", g.uuid())})
    g.entry(idx, "GET", f"wss://ws.{APP}/v3/realtime",
            [("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", key), ("Sec-WebSocket-Version", "13"), ("Origin", f"https://app.{APP}")],
            status=101, status_text="Switching Protocols",
            resp_headers=[("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", g.L("ws.accept", accept))],
            extra={"_resourceType": "websocket", "_webSocketMessages": msgs})


def e_multipart(g: Gen):
    idx = g.reserve()
    path = ["request", "postData", "text"]
    b = "----KestrelBoundary" + g.run(ALNUM, 16)
    k, v = g.vendor()
    parts = [f"--{b}\r\nContent-Disposition: form-data; name=\"api_key\"\r\n\r\n", g.P("auth.api-key", g.run(HEX, 40)), "\r\n",
             f"--{b}\r\nContent-Disposition: form-data; name=\"data\"\r\n\r\n", M(k, v, True), "\r\n",
             f"--{b}\r\nContent-Disposition: form-data; name=\"metadata\"\r\nContent-Type: application/json\r\n\r\n",
             '{"uploader":"', g.P("pii.email", g.email()), '","document":"passport","sha":"', g.L("git.commit-sha", g.run(HEX, 40)), '"}\r\n',
             f"--{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"", g.L("asset.filename", "passport_scan@2x.png", context="passport_scan@2x.png"),
             "\"\r\nContent-Type: text/plain\r\n\r\nMRZ OCR result\nSurname: ", g.P("pii.last-name", g.last().upper(), context=None),
             "\nPassport No: ", g.P("pii.passport-de", g.passport("de")), "\nDate of birth: ", g.P("pii.dob", g.dob("eu")), "\r\n",
             f"--{b}--\r\n"]
    sn = parts[parts.index("\"\r\nContent-Type: text/plain\r\n\r\nMRZ OCR result\nSurname: ") + 1]
    sn.context = f"Surname: {sn.value}"
    body = g.text(parts, idx, path)
    g.entry(idx, "POST", f"https://upload.{APP}/v1/kyc/documents", std(g), body, f"multipart/form-data; boundary={b}",
            resp_body=g.jbody({"document_id": g.L("id.document", "doc_" + g.run(LOWER + DIGITS, 16)), "status": "processing"}, idx, ["response", "content", "text"]),
            status=202, status_text="Accepted")


def e_docs_js(g: Gen):
    idx = g.reserve()
    path = ["response", "content", "text"]
    parts = ["<!doctype html><html><head><title>Kestrel SDK – Authentication</title>"
             '<link rel="icon" href="/', g.L("asset.ios-2x", "icon@3x.png", context="icon@3x.png"), '"></head><body>\n'
             "<h1>Authenticating requests</h1>\n<p>Load the key at start-up and keep it out of source control:</p>\n"
             "<pre><code class=\"swift\">", g.L("code.let-apiKey", "let apiKey = loadKey()", context="let apiKey = loadKey()"),
             "\nlet client = ", g.L("code.argument-label", "KestrelClient(apiKey: apiKey)", context="KestrelClient(apiKey: apiKey)"), "\n", g.L("code.token-call", "const token = await getToken();", context="const token = await getToken();"),
             "\n</code></pre>\n<p>Install with <code>", g.L("package.at-version", "npm install @kestrel/sdk@5.12.0", context="@kestrel/sdk@5.12.0"),
             "</code> or clone <code>", g.L("git.ssh-remote", "git@github.com:kestrel/ios-sdk.git", context="git@github.com:kestrel/ios-sdk.git"),
             "</code>.</p>\n<p>Example values: <code>", g.L("pii-example.hmrc-ni", "QQ 12 34 56 C", context="QQ 12 34 56 C"),
             "</code>, <code>", g.L("pii-example.invalid-ssn", "000-12-3456", context="000-12-3456"), "</code>.</p>\n<p>Send <code>", g.L("docs.placeholder", "Authorization: Bearer YOUR_API_KEY", context="Authorization: Bearer YOUR_API_KEY"),
             "</code>; a request may set <code>", g.L("llm.max_tokens-doc", '"max_tokens": 1024', context='"max_tokens": 1024'), "</code>.</p>\n"
             "<p>Images: <code>", g.L("asset.ios-2x", "cart@2x.png", context="cart@2x.png"), "</code>, <code>",
             g.L("asset.ios-3x", "icon@3x.png", context="<code>icon@3x.png</code>"), "</code>. Contact <a href=\"mailto:", g.L("docs.support-email", "support@example.com", context="support@example.com"),
             "\">support</a>. In <code>.npmrc</code> set <code>", g.L("npmrc.always-auth", "always-auth=true", context="always-auth=true"), "</code>.</p>\n</body></html>\n"]
    g.entry(idx, "GET", f"https://docs.{APP}/sdk/authentication", std(g, "text/html"), resp_body=g.text(parts, idx, path),
            resp_mime="text/html; charset=utf-8",
            resp_headers=[("ETag", g.L("http.etag", 'W/"' + g.run(HEX, 16) + '"')), ("Cache-Control", "public, max-age=600")])

    idx = g.reserve()
    dsn_key = g.run(HEX, 32)
    parts = ['"use strict";(self.webpackChunkkestrel=self.webpackChunkkestrel||[]).push([[179],{4821:function(e,t,n){',
             "async function r(){", g.L("code.let-apiKey", "let apiKey = loadKey()", context="let apiKey = loadKey()"), ";return apiKey}",
             "function o(password){return password.length>=12}",  # a function about passwords
             'const i={env:"production",release:"', g.L("version.release", "kestrel-web@3.18.2", context="kestrel-web@3.18.2"),
             '",sentryDsn:"https://', g.P("telemetry.sentry-dsn-key", dsn_key), '@o4505118.ingest.sentry.io/4505119",',
             'value:"', g.V(), '",data:"', g.V(), '",keys:["', g.V(), '","', g.V(), '"],',
             'sprite:"/static/', g.L("asset.ios-2x", "cart@2x.png", context="/static/cart@2x.png"), '",',
             'brand:"', g.L("style.hex-colour", "#" + g.run(HEX, 6)), '",commit:"', g.L("git.commit-sha", g.run(HEX, 40)), '",',
             'passwordRules:"minlength: 12; required: lower; required: upper; required: digit;"};',
             't.default=i}}]);\n//# sourceMappingURL=main.', g.run(HEX, 20), '.js.map\n']
    g.entry(idx, "GET", f"https://app.{APP}/static/js/main.{g.run(HEX, 8)}.js", std(g, "*/*"), resp_body=g.text(parts, idx, path),
            resp_mime="application/javascript")


def e_config(g: Gen):
    idx = g.reserve()
    doc = {"app": {"min_version": g.L("version.semver", "7.0.0"), "latest": g.L("version.semver", "7.4.1"),
                   "firmware": g.L("version.4part", "5.2.0.14"),
                   "assets": [g.L("asset.ios-2x", "cart@2x.png"), g.L("asset.ios-3x", "icon@3x.png"), g.L("asset.ios-2x", "checkout-banner@2x.jpg")],
                   "dependencies": [g.L("package.at-version", "lottie-ios@4.4.1"), g.L("package.at-version", "package@1.2.3")],
                   "repo": g.L("git.ssh-remote", "git@github.com:kestrel/kestrel-ios.git"),
                   "sha": g.L("git.commit-sha", g.run(HEX, 40)), "build_sha": g.L("git.commit-sha", g.run(HEX, 7)),
                   "integrity": g.L("hash.sri", "sha384-" + base64.b64encode(bytes(g.rng.randrange(256) for _ in range(48))).decode())},
           "settings": [{"key": g.L("config.key-name", "feature.checkout_v2"), "value": g.L("config.value", "enabled")},
                        {"key": g.L("config.key-name", "theme.primary"), "value": g.L("style.hex-colour", "#" + g.run(HEX, 6))},
                        {"key": g.L("config.key-name", "limits.max_tokens"), "value": g.L("llm.max_tokens", 1024)},
                        {"key": g.L("config.key-name", "auth.token_ttl"), "value": g.L("config.ttl", 3600)}],
           "auth": {"token_type": g.L("oauth.token_type", "Bearer"), "expires_in": g.L("oauth.expires_in", 3600),
                    "password_min_length": g.L("config.password-min-length", 12), "max_login_attempts": g.L("config.max-attempts", 5),
                    "passwordChangedAt": g.L("date.passwordChangedAt", "2025-08-19T07:12:00Z"),
                    "tokenUrl": g.L("url.public", f"https://auth.{APP}/oauth2/token"), "secret_rotation_days": g.L("config.rotation-days", 90)},
           "catalog": [{"sku": g.L("commerce.sku", "KST-" + g.run(UPPER, 3) + "-" + g.run(DIGITS, 4)), "price": g.L("money.price", "12.99"),
                        "image": g.L("url.public-image", f"https://cdn.{APP}/img/p/{g.run(DIGITS, 6)}@3x.png"),
                        "color": g.L("style.hex-colour", "#" + g.run(HEX, 6))} for _ in range(3)],
           "support": {"timezone": g.L("locale.timezone", "America/New_York"), "country": g.L("locale.country", "US"),
                       "hotline_hours": "09:00-17:00",
                       "placeholders": {"uk": g.L("pii-example.hmrc-ni", "QQ 12 34 56 C"), "us": g.L("pii-example.invalid-ssn", "000-12-3456")}},
           "trace": {"trace_id": g.L("trace.trace-id", g.run(HEX, 32)), "span_id": g.L("trace.span-id", g.run(HEX, 16))},
           "created_at": g.L("date.created_at", "2026-01-07T12:00:00Z"), "updated_at": g.L("date.created_at", "2026-03-13T23:10:00Z")}
    g.entry(idx, "GET", f"https://{API}/v2/app-config?platform=ios&v=7.4.1", std(g),
            resp_body=g.jbody(doc, idx, ["response", "content", "text"], pretty=True),
            resp_headers=[("Persistent-Auth", g.L("header.persistent-auth", "true")), ("Cache-Control", "max-age=300"),
                          ("traceparent", g.L("trace.traceparent", f"00-{g.run(HEX, 32)}-{g.run(HEX, 16)}-01"))])


def e_json_in_json(g: Gen):
    idx = g.reserve()
    k, v = g.vendor()
    doc = {"batch": [{"event": "signup_completed",
                      "properties": JS({"email": g.P("pii.email", g.email()), "plan": "pro", "api_key": g.P("auth.api-key", g.run(ALNUM, 32)),
                                        "referrer": g.L("url.public", "https://www.google.com/"), "max_tokens": g.L("llm.max_tokens", 1024)}),
                      "context": JS({"device": {"advertising_id": g.P("adid.advertising-id", g.uuid()), "os": "Android 15"},
                                     "ip": g.P("net.ipv4-public", g.ipv4()), "library": {"name": "analytics-kotlin", "version": g.L("version.semver", "1.16.3")}})},
                     {"event": "settings_changed", "properties": JS({"changes": JS({"phone": g.P("pii.phone-e164", g.phone_e164()), "value": M(k, v, True)})})}],
           "sentAt": g.L("date.created_at", "2026-03-14T09:52:00.123Z"), "writeKey": g.P("telemetry.segment-write-key", g.run(ALNUM, 32))}
    g.entry(idx, "POST", "https://api.segment.io/v1/batch", std(g), g.jbody(doc, idx, ["request", "postData", "text"]), "application/json",
            resp_body=g.jbody({"success": True}, idx, ["response", "content", "text"]))


def e_telemetry(g: Gen):
    idx = g.reserve()
    sk = g.run(HEX, 32)
    body = g.jbody({"event_id": g.L("trace.event-id", g.run(HEX, 32)), "level": "error", "release": g.L("version.release", "kestrel-ios@7.4.1+2031"),
                    "user": {"email": g.P("pii.email", g.email()), "ip_address": g.P("net.ipv4-public", g.ipv4())},
                    "contexts": {"device": {"model": "iPhone16,2", "family": "iOS"}}}, idx, ["request", "postData", "text"])
    g.entry(idx, "POST", "https://o4505118.ingest.sentry.io/api/4505119/envelope/",
            [("X-Sentry-Auth", T("Sentry sentry_version=7, sentry_client=sentry.cocoa/8.36.0, sentry_key=",
                                 g.P("telemetry.sentry-key", sk))), ("User-Agent", UA)],
            body, "application/json", resp_body='{"id":"' + g.run(HEX, 32) + '"}')
    idx = g.reserve()
    nr_k, nr_v = g.vendor()
    hdrs = [("DD-API-KEY", g.P("telemetry.datadog-api-key", g.run(HEX, 32))), ("DD-APPLICATION-KEY", g.P("telemetry.datadog-app-key", g.run(HEX, 40))),
            ("X-Honeycomb-Team", g.P("telemetry.honeycomb-team", g.run(ALNUM, 22))), ("X-Honeycomb-Dataset", g.L("telemetry.dataset", "ios-app")),
            ("X-Bugsnag-Api-Key", g.P("telemetry.bugsnag-api-key", g.run(HEX, 32))), ("X-Bugsnag-Payload-Version", g.L("telemetry.payload-version", "5")),
            ("X-Amplitude-Api-Key", g.P("telemetry.amplitude-api-key", g.run(HEX, 32))), ("X-Team-Key", g.P("telemetry.team-key", g.run(ALNUM, 40))),
            ("X-Insert-Key", M(nr_k, nr_v, True)), ("X-Telemetry-Team", g.L("telemetry.team-name", "mobile-platform")),
            ("Content-Encoding", "identity"), ("User-Agent", UA)]
    body = g.jbody({"series": [{"metric": "app.launch.duration", "points": [[START_EPOCH, 412.5]], "tags": ["env:prod", "version:7.4.1"],
                                "host": g.P("pii.device-name", f"{g.first()}s-iPhone")}]}, idx, ["request", "postData", "text"])
    g.entry(idx, "POST", "https://api.datadoghq.eu/api/v1/series", hdrs, body, "application/json",
            resp_body='{"status":"ok"}', status=202, status_text="Accepted")


def e_magic_link(g: Gen):
    idx = g.reserve()
    email, email2 = g.email(), g.email()
    t1 = g.unique(lambda: g.run(B64URL, 43))
    t2 = g.unique(lambda: g.run(B64URL, 40))
    frag = lambda tok, em: quote(json.dumps({"token": tok, "email": em}, separators=(",", ":")), safe="")
    path = ["response", "content", "text"]
    doc = {"to": g.P("pii.email", email), "template": "magic_link",
           "link": T(f"https://app.{APP}/auth/magic?t=", g.P("auth.magic-link-token", t1), "&redirect=%2Fhome"),
           "app_link": f"https://app.{APP}/auth/callback#json=" + frag(t2, email2),
           "expires_in": g.L("oauth.expires_in", 900)}
    # the fragment carries percent-encoded JSON with a token and an email
    g.reg(g.P("auth.magic-link-fragment-token", t2), idx, path, [["json", ["app_link"]]])
    g.reg(g.P("pii.email", email2), idx, path, [["json", ["app_link"]]])
    g.entry(idx, "POST", f"https://{API}/v1/auth/magic-link", std(g), g.jbody({"email": g.P("pii.email", email)}, idx, ["request", "postData", "text"]),
            "application/json", resp_body=g.jbody(doc, idx, path))
    idx = g.reserve()
    url = g.url(f"https://app.{APP}/auth/magic", [("t", g.P("auth.magic-link-token", t1)), ("redirect", "/home")], idx)
    t3 = g.unique(lambda: g.run(B64URL, 40))
    loc = f"https://app.{APP}/auth/callback#json=" + frag(t3, email)
    g.reg(g.P("auth.magic-link-fragment-token", t3), idx, ["response", "headers", 0, "value"])
    g.reg(g.P("pii.email", email), idx, ["response", "headers", 0, "value"])
    g.entry(idx, "GET", url, std(g, "text/html"), status=302, status_text="Found",
            resp_headers=[("Location", loc),
                          ("Set-Cookie", T("__Host-kst_sess=", g.P("auth.session-cookie", g.run(B64URL, 44)), "; Path=/; Secure; HttpOnly"))],
            resp_mime="text/html", redirect=loc)


def e_profile(g: Gen):
    idx = g.reserve()
    name = g.full_name()
    lat, lng = g.latlng()
    hlat, hlng = g.latlng()
    doc = {"id": g.L("id.customer", "CUS-" + g.run(DIGITS, 9)), "name": g.P("pii.person-name", name), "email": g.P("pii.email", g.email(name)),
           "date_of_birth": g.P("pii.dob", g.dob()), "dob": g.P("pii.dob", g.dob("eu")),
           "identity": {"passport_number": g.P("pii.passport-us", g.passport("us")), "passport": {"number": g.P("pii.passport-uk", g.passport("uk")), "country": "GB"},
                        "ni_number": g.P("pii.uk-ni", g.ni_number(spaced=True)), "national_insurance": g.P("pii.uk-ni", g.ni_number()),
                        "ssn": g.P("pii.us-ssn", g.ssn()), "tax_id": g.P("pii.us-ssn", g.ssn().replace("-", "")),
                        },
           "form_hints": [g.L("pii-example.hmrc-ni", "QQ 12 34 56 C"), g.L("pii-example.invalid-ssn", "000-12-3456")],
           "address": {"street": g.P("pii.street-address", g.street()), "line2": g.P("pii.address-line2", f"Flat {g.rng.randint(2, 40)}{g.pick('ABC')}", context=None),
                       "city": "Manchester", "postcode": g.P("pii.postal-code", f"M{g.rng.randint(1, 40)} {g.rng.randint(1, 9)}{g.run('ABDEFGHJLNPQRSTUWXYZ', 2)}"),
                       "country": g.L("locale.country", "GB")},
           "phone_landline": g.P("pii.phone-national", g.phone_national()), "mobile": g.P("pii.phone-e164", g.phone_e164()),
           "location": {"lat": g.P("geo.location-lat", lat), "lng": g.P("geo.location-lng", lng), "accuracy_m": g.L("geo.accuracy", 35)},
           "home": {"latitude": g.P("geo.home-lat", hlat), "longitude": g.P("geo.home-lng", hlng)},
           "last_login_ip": g.P("net.ipv6-public", g.ipv6()),
           "preferences": {"timezone": g.L("locale.timezone", "Europe/London"), "currency": g.L("money.currency", "GBP")},
           "passwordChangedAt": g.L("date.passwordChangedAt", "2025-12-01T08:00:00Z"), "created_at": g.L("date.created_at", "2023-05-17T14:02:11Z"),
           "loyalty": {"points": g.L("commerce.points", g.rng.randint(100, 9000)), "tier": "gold"}}
    line2 = doc["address"]["line2"]
    line2.context = None
    g.entry(idx, "GET", f"https://{API}/v2/me?expand=identity,address", std(g) + [("Authorization", T("Bearer ", g.P("auth.bearer", g.run(ALNUM, 40))))],
            resp_body=g.jbody(doc, idx, ["response", "content", "text"]))
    # KYC form with the same kinds in a urlencoded body
    idx = g.reserve()
    form = g.form([("full_name", g.P("pii.person-name", g.full_name())), ("dob", g.P("pii.dob", g.dob("us"))),
                   ("ssn", g.P("pii.us-ssn", g.ssn())), ("passport", g.P("pii.passport-de", g.passport("de"))),
                   ("street", g.P("pii.street-address", g.street())), ("phone_landline", g.P("pii.phone-national", g.phone_national())),
                   ("country", g.L("locale.country", "US")), ("tz", g.L("locale.timezone", "America/Chicago"))],
                  idx, ["request", "postData", "text"])
    g.entry(idx, "POST", f"https://kyc.{APP}/v1/verify", std(g), form, "application/x-www-form-urlencoded",
            resp_body=g.jbody({"verification_id": g.L("id.verification", "ver_" + g.run(LOWER + DIGITS, 14)), "status": "pending"}, idx, ["response", "content", "text"]))


def e_orders(g: Gen):
    idx = g.reserve()
    cname, rname = g.full_name(), g.full_name()
    rname2 = g.full_name()
    lat, lng = g.latlng()
    doc = {"order_id": g.L("id.order", "ORD-" + g.run(DIGITS, 8)), "status": "paid",
           "customer": {"name": g.P("pii.customer-name", cname), "email": g.P("pii.email", g.email(cname)), "phone": g.P("pii.phone-e164", g.phone_e164())},
           "recipient": {"name": g.P("pii.recipient-name", rname), "phone_landline": g.P("pii.phone-national", g.phone_national())},
           "recipient_name": g.P("pii.recipient-name", rname2),
           "shipping_address": {"line1": g.P("pii.shipping-address", g.street()), "city": "Hamburg",
                                "postal_code": g.P("pii.postal-code", str(g.rng.randint(20095, 22769))), "country": g.L("locale.country", "DE")},
           "gift_message": T("Happy birthday ", g.P("pii.first-name", g.first(), context=None), "! Love, ", g.P("pii.first-name", g.first(), context=None)),
           "delivery": {"location": {"lat": g.P("geo.location-lat", lat), "lon": g.P("geo.location-lng", lng)}, "window": "10:00-12:00",
                        "timezone": g.L("locale.timezone", "Europe/Berlin")},
           "items": [{"sku": g.L("commerce.sku", "KST-" + g.run(UPPER, 3) + "-" + g.run(DIGITS, 4)), "qty": 2, "unit_price": g.L("money.price", "24.95"),
                      "image": g.L("url.public-image", f"https://cdn.{APP}/img/p/{g.run(DIGITS, 6)}@2x.jpg")}],
           "total": g.L("money.price", "49.90"), "currency": g.L("money.currency", "EUR"),
           "created_at": g.L("date.created_at", "2026-03-14T09:55:12Z")}
    gm = doc["gift_message"]
    for p in gm.parts:
        if isinstance(p, M):
            p.context = None
    g.entry(idx, "GET", f"https://{API}/v2/orders/{g.run(DIGITS, 8)}", std(g),
            resp_body=g.jbody(doc, idx, ["response", "content", "text"]))


def e_sms_recovery(g: Gen):
    idx = g.reserve()
    otp = g.unique(lambda: str(g.rng.randint(100000, 999999)))
    otp2 = g.unique(lambda: str(g.rng.randint(1000, 9999)))
    doc = {"messages": [{"to": g.P("pii.phone-e164", g.phone_e164()), "from": "Kestrel",
                         "body": T("Your Kestrel verification code is ", g.P("auth.otp-sms", otp), ". It expires in 10 minutes.")},
                        {"to": g.P("pii.phone-e164", g.phone_e164()), "body": T("G-", g.P("auth.otp-sms", otp2), " is your sign-in code.")}],
           "status_callback": g.L("url.public", f"https://{API}/hooks/sms-status")}
    k, v = g.vendor()
    g.entry(idx, "POST", "https://sms.messagebird-like.net/v2/messages", [("Authorization", T("AccessKey ", M(k, v, True))), ("User-Agent", "kestrel-notify/2.1")],
            g.jbody(doc, idx, ["request", "postData", "text"]), "application/json",
            resp_body=g.jbody({"id": g.L("id.message", "msg_" + g.run(HEX, 24)), "segments": g.L("sms.segments", 1)}, idx, ["response", "content", "text"]))
    idx = g.reserve()
    codes = [g.unique(lambda: f"{g.run(LOWER + DIGITS, 5)}-{g.run(LOWER + DIGITS, 5)}") for _ in range(4)]
    mnemonic = " ".join(g.pick(WORDS) for _ in range(12))
    doc = {"mfa": {"enabled": True, "method": "totp", "totp_secret": g.P("auth.totp-secret", g.run("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 32)),
                   "recovery_codes": [g.P("auth.recovery-code", c) for c in codes]},
           "wallet": {"mnemonic": g.P("crypto.mnemonic", mnemonic), "address": "bc1q" + g.run("qpzry9x8gf2tvdw0s3jn54khce6mua7l", 38),
                      "derivation_path": g.L("crypto.derivation-path", "m/84'/0'/0'/0/0")},
           "generated_at": g.L("date.created_at", "2026-03-14T09:58:00Z")}
    g.entry(idx, "POST", f"https://{API}/v1/security/mfa/setup", std(g) + [("Cookie", T("kst_session=", g.P("auth.session-cookie", g.run(B64URL, 48)), "; theme=dark"))],
            g.jbody({"password": g.P("auth.password", g.run(ALNUM, 10) + "#" + g.run(DIGITS, 3))}, idx, ["request", "postData", "text"]), "application/json",
            resp_body=g.jbody(doc, idx, ["response", "content", "text"]))


def e_vendor_bulk(g: Gen):
    """Every vendor format not used yet, under generic keys and in generic places."""
    n = len(g.vendor_pool)
    sizes = [n - 3 * (n // 4), n // 4, n // 4, n // 4]
    # 1) JSON integrations under value / data / key and lists of tokens
    idx = g.reserve()
    items = []
    left = sizes[0]
    j = 0
    while left > 0:
        slot = ("value", "data", "key", "list")[j % 4]
        item = {"id": g.L("id.integration", "int_" + g.run(LOWER + DIGITS, 10)), "label": f"prod-{j}"}
        if slot == "list" and left >= 2:
            item["values"] = [g.V(), g.V()]
            left -= 2
        else:
            item[slot if slot != "list" else "value"] = g.V()
            left -= 1
        item["created_at"] = g.L("date.created_at", f"2025-{g.rng.randint(1, 12):02d}-{g.rng.randint(1, 28):02d}T08:00:00Z")
        items.append(item)
        j += 1
    doc = {"integrations": items, "count": g.L("api.count", len(items)), "next": None}
    g.entry(idx, "GET", f"https://{API}/v2/integrations?include=credentials", std(g),
            resp_body=g.jbody(doc, idx, ["response", "content", "text"], pretty=True))
    # 2) a CI log in plain text
    idx = g.reserve()
    path = ["response", "content", "text"]
    parts = []
    for _ in range(sizes[1]):
        parts += [f"2026-03-14T10:0{g.rng.randint(0, 9)}:{g.rng.randint(10, 59)}Z INFO rotated credential ", g.V(), "\n"]
    parts += ["registry=https://registry.npmjs.org/\n", g.L("npmrc.always-auth", "always-auth=true", context="always-auth=true"), "\n"]
    g.entry(idx, "GET", f"https://ci.{APP}/jobs/{g.run(DIGITS, 6)}/log.txt", std(g, "text/plain"), resp_body=g.text(parts, idx, path),
            resp_mime="text/plain; charset=utf-8")
    # 3) generic names in the query and in a form body
    idx = g.reserve()
    pairs = [(("data", "value", "v", "ref", "item", "x")[j % 6] + str(j), g.V()) for j in range(sizes[2])]
    half = len(pairs) // 2
    url = g.url(f"https://{API}/v1/import", pairs[:half], idx)
    form = g.form(pairs[half:], idx, ["request", "postData", "text"])
    g.entry(idx, "POST", url, std(g), form, "application/x-www-form-urlencoded",
            resp_body=g.jbody({"imported": g.L("api.count", len(pairs))}, idx, ["response", "content", "text"]))
    # 4) XML element text and attributes
    idx = g.reserve()
    parts = ['<?xml version="1.0"?>\n<Credentials>\n']
    for j in range(sizes[3]):
        if j % 2:
            parts += ['  <Item name="misc" value="', g.V(), '"/>\n']
        else:
            parts += ['  <Item name="svc"><Value>', g.V(), "</Value></Item>\n"]
    parts.append("</Credentials>\n")
    g.entry(idx, "GET", f"https://{API}/v1/vault/export.xml", std(g, "application/xml"), resp_body=g.text(parts, idx, path),
            resp_mime="application/xml")


def build(seed: int):
    g = Gen(seed)
    e_llm_openai(g)
    e_llm_anthropic_sse(g)
    e_llm_other(g)
    e_oauth(g)
    e_push(g)
    e_ads(g)
    e_payments(g)
    e_cloud(g)
    e_soap_saml(g)
    e_csv(g)
    e_graphql(g)
    e_sse(g)
    e_websocket(g)
    e_multipart(g)
    e_docs_js(g)
    e_config(g)
    e_json_in_json(g)
    e_telemetry(g)
    e_magic_link(g)
    e_profile(g)
    e_orders(g)
    e_sms_recovery(g)
    e_vendor_bulk(g)
    har = {"log": {"version": "1.2", "creator": {"name": "redaction-audit-corpus", "version": "1"},
                   "pages": [], "entries": g.entries}}
    manifest = {"seed": seed, "plants": g.plants, "lookalikes": g.lookalikes}
    return har, manifest


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    har, manifest = build(int(argv[1]))
    Path(argv[2]).write_text(json.dumps(har, indent=1, ensure_ascii=False), encoding="utf-8")
    if len(argv) > 3:
        Path(argv[3]).write_text(json.dumps(manifest, indent=1, ensure_ascii=False), encoding="utf-8")
    kinds = {p["kind"] for p in manifest["plants"]}
    print(f"{len(har['log']['entries'])} entries, {len(manifest['plants'])} plants of {len(kinds)} kinds, "
          f"{len(manifest['lookalikes'])} look-alikes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
