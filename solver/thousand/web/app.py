"""The web advisor and scorekeeper: a Starlette application (served by uvicorn from
``thousand serve``) with a small JSON API and one offline page.

The API (every answer JSON; every error ``{"error": "one line"}`` with a 4xx status):

=======  ===============================  ===================================================
GET      /sw.js, /manifest.webmanifest    the service worker and the manifest: the page installs
                                          to a phone's home screen and opens without the server
                                          (the last state of each game, read-only)
GET      /api/presets                     the rulesets of the 1000 family: name, summary
GET      /api/strings                     the page's words in the request's language
GET      /api/games                       the saved games, the most recent first
POST     /api/games                       a new game: ``{"rules", "overrides", "players",
                                          "seed"}``; 201 and its state
POST     /api/games/import                a game from a save file's JSON; 201 and its state
GET      /api/games/{id}                  the state of a game (below)
POST     /api/games/{id}/entry            ``{"entry": "roll 1,5,3,3,4" | "roll" | "keep 1,5"
                                          | "stop"}``; the new state (``roll`` alone: the
                                          server throws the dice)
POST     /api/games/{id}/undo             take back the last entry; the new state
POST     /api/games/{id}/sync             ``{"since": digest, "log": [...]}``: the whole log
                                          as a phone kept it with the server away, taken if
                                          the game is still at the log of ``since``
                                          (``log_digest``; 412 if it moved on meanwhile,
                                          409 if an entry does not apply); the new state
GET      /api/games/{id}/advice           the advice for the player to move: 200 with every
                                          option's value and the ``builds`` its exact advice
                                          lacks (objective, seconds, the running solve's
                                          ``job`` progress), or 202 while a table is solved
POST     /api/games/{id}/build            ``{"objective": "duel" | "players3" ...}``: solve that
                                          table in the background (one solve however many ask);
                                          202 and its progress
GET      /api/games/{id}/review           every decision so far valued (``thousand review``): 200,
                                          or 202 while a table is solved
GET      /api/games/{id}/save             the save file (the format of ``thousand play``)
GET      /api/server                      ``{"lan_url", "trusted"}``, and ``authority`` (url,
                                          SHA-256 fingerprint) with ``--https``
GET      /table-ca.crt                    the table's certificate authority (``--https``), for
                                          the phones to install once
GET      /api/qr?text=...                 the QR code of ``text`` as SVG
DELETE   /api/games/{id}                  forget a game
=======  ===============================  ===================================================

With ``thousand serve --lan`` a request from another device must carry the game's token
(header ``X-Thousand-Token`` or ``?token=``; 403 otherwise), and changes are rate-limited
per device (429).

Every request is checked by :class:`Guard` before it reaches the application: its ``Host``
must be a name this server serves (loopback, and with ``--lan`` the address it printed;
421 otherwise), so a page of another site that rebinds its own name to this machine reads
nothing; a change (POST, DELETE) must be ``application/json`` (415) and come from the page
itself: an ``Origin`` (or ``Sec-Fetch-Site``) of this server, or a game's token header
(403 otherwise), so no other site can write. A script sends ``Origin`` with the server's
address. Every answer carries a Content-Security-Policy that forbids framing,
``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: no-referrer`` (the game's link
holds its token).

The language of the words is ``?lang=ru|en``, else the ``Accept-Language`` header, else
English. The state of a game: ``id``, ``rules``, ``round``, ``over``, ``where`` (whose move
and what they may do), ``players`` (name, score, status, last steps, to move, winner),
``turn`` (total, dice to roll, the roll waiting for a set-aside, its ``options``, whether
stopping is allowed and why not), ``messages`` (what the last entry did), ``log`` and
``engine`` (the rules as the page's own scorekeeper reads them, :mod:`.offline`).
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
import time
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from thousand.base import i18n
from thousand.base.errors import Refused, ThousandError
from thousand.base.i18n import _
from thousand.base.untrusted import InputError, cut, load_json
from thousand.play.game import Advisors, Game, advice_json, game_entry, keep_label
from thousand.rules.ruleset import Ruleset, load_ruleset, preset_names

from .jobs import Solves, Solving
from .offline import log_digest, page_rules
from .page import MAX_PLAYERS, PAGE_WORDS, STATIC
from .store import GameStore, UnknownGame

__all__ = [
    "BURST",
    "LOOPBACK",
    "MAX_BODY",
    "MAX_ENTRY",
    "MAX_LOG",
    "MAX_NAME",
    "MAX_OVERRIDES",
    "MAX_PLAYERS",
    "PAGE_WORDS",
    "RATE",
    "SECURITY_HEADERS",
    "STATIC",
    "UNSAFE",
    "Api",
    "BodyLimit",
    "Guard",
    "RateLimit",
    "Server",
    "create_app",
    "host_name",
    "served_hosts",
    "state_of",
]

MAX_BODY = 64 * 1024  # bytes of a request body
MAX_NAME = 40
MAX_OVERRIDES = 40
MAX_ENTRY = 200  # characters of one entry
MAX_LOG = 4000  # entries of a log a phone sends back (a game of 1000 for six is far shorter)
RATE, BURST = 10.0, 40  # changes a second per device, and the burst above that
LOOPBACK = ("127.0.0.1", "::1", "localhost")


def _lang(request: Request) -> str:
    q = request.query_params.get("lang")
    if q in i18n.LANGUAGES:
        return q
    for part in request.headers.get("accept-language", "").split(","):
        code = part.split(";")[0].strip().split("-")[0].lower()
        if code in i18n.LANGUAGES:
            return code
    return "en"


def _error(status: int, message: str) -> JSONResponse:
    # one line, and a long input quoted in it cut short
    return JSONResponse({"error": cut(message, 400)}, status_code=status)


class BodyLimit:
    """Refuse a request body over :data:`MAX_BODY` bytes (413) before reading it all."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            return await _error(413, f"request body over {MAX_BODY} bytes")(scope, receive, send)
        seen = 0

        async def limited():
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > MAX_BODY:
                raise HTTPException(413, f"request body over {MAX_BODY} bytes")
            return message

        await self.app(scope, limited, send)


SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        b"worker-src 'self'; manifest-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        b"frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]
UNSAFE = ("POST", "PUT", "PATCH", "DELETE")


def host_name(value: str) -> str:
    """The name in a ``Host`` header without its port (``[::1]:8000`` -> ``::1``), lower case."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else ""
    name, sep, port = value.rpartition(":")
    return name if sep and port.isdigit() else value


class Guard:
    """What every request must meet before the application sees it (the module's
    docstring): a ``Host`` this server serves, and for a change a JSON body from this
    server's own page (or a game's token); every answer gets :data:`SECURITY_HEADERS`."""

    def __init__(self, app: ASGIApp, hosts: tuple[str, ...] = LOOPBACK):
        self.app = app
        self.hosts = frozenset(h.lower().strip("[]") for h in hosts)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers") or []}
        host = headers.get("host", "")
        if host_name(host).rstrip(".") not in self.hosts:
            return 421, f"this server does not serve the host {cut(host or '(none)', 60)!r}"
        if scope["method"] not in UNSAFE:
            return None
        if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return 415, "a change must be sent as application/json"
        origin = headers.get("origin")
        if origin is not None:
            if origin.lower() != f"{scope.get('scheme', 'http')}://{host.lower()}":
                return 403, "a change from another site is refused"
            return None
        fetch_site = headers.get("sec-fetch-site")
        if fetch_site is not None:
            return None if fetch_site in ("same-origin", "none") else (403, "a change from another site is refused")
        if headers.get("x-thousand-token"):
            return None  # a header of our own: another site's page cannot send it without our consent
        return 403, "a change must come from this server's page (header Origin) or carry the game's token"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        refused = self.refusal(scope)
        if refused is not None:
            return await _error(*refused)(scope, receive, send_with_headers)
        return await self.app(scope, receive, send_with_headers)


class RateLimit:
    """At most :data:`RATE` changes a second per device, in bursts of :data:`BURST` (a token
    bucket per client address over POST and DELETE): more is a 429 of one line."""

    def __init__(self, app: ASGIApp):
        self.app = app
        self.buckets: dict[str, tuple[float, float]] = {}
        self.guard = threading.Lock()

    def allow(self, who: str, now: float) -> bool:
        with self.guard:
            level, then = self.buckets.get(who, (float(BURST), now))
            level = min(float(BURST), level + (now - then) * RATE)
            ok = level >= 1.0
            self.buckets[who] = (level - 1.0 if ok else level, now)
            if len(self.buckets) > 10_000:  # forget the quiet ones
                self.buckets = {k: v for k, v in self.buckets.items() if now - v[1] < 60}
            return ok

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("POST", "DELETE"):
            who = (scope.get("client") or ("?", 0))[0]
            if not self.allow(who, time.monotonic()):
                return await _error(429, "too many changes at once; wait a moment")(scope, receive, send)
        return await self.app(scope, receive, send)


class Server:
    """The application's state: the saved games and the tables (solved in the background)."""

    def __init__(
        self,
        folder: Path | None = None,
        tables_dir: str | None = None,
        lan_url: str | None = None,
        trusted: tuple[str, ...] = LOOPBACK,
    ):
        self.store = GameStore(folder)
        self.lan_url = lan_url  # the page's address for the other phones; None: loopback only
        self.trusted_hosts = trusted
        self.tables_dir = tables_dir
        self.solves = Solves(tables_dir)
        self._advisors: dict[str, Advisors] = {}

    def trusted(self, request: Request) -> bool:
        """A request from this machine (or any request, when the server listens on loopback
        only): it sees every game; a request from another device needs the game's token."""
        return self.lan_url is None or (request.client is not None and request.client.host in self.trusted_hosts)

    def game_id(self, request: Request) -> str:
        """The id in the path, where the request may use that game: from this machine, or
        with the game's token (header ``X-Thousand-Token`` or ``?token=``); else 403."""
        game_id = request.path_params["id"]
        self.store.path(game_id)  # a malformed id is a 404
        if self.trusted(request):
            return game_id
        token = request.headers.get("x-thousand-token") or request.query_params.get("token")
        if not self.store.token_ok(game_id, token):
            raise HTTPException(403, "this game opens only with its link (its token)")
        return game_id

    def advisors(self, g: Game) -> Advisors:
        # one per ruleset: it keeps the solutions it found (and whether a duel is small)
        key = g.rs.hash
        if key not in self._advisors:
            # no lookahead: the page answers each phone at once (results.md: its preparation and cost)
            self._advisors[key] = Advisors(
                g.rs, "auto", self.tables_dir, solver=self.solves.solution, on_request=True, lookahead=False
            )
        return self._advisors[key]

    def builds(self, g: Game) -> list[dict]:
        """The tables this position's exact advice lacks (:meth:`Advisors.missing`), each with
        its solve's progress when one runs (``job``; None before anyone asked for it)."""
        out = []
        for m in self.advisors(g).missing(g):
            job = self.solves.job(g.rs, m["objective"])
            out.append({**m, "job": job.progress() if job is not None else None})
        return out


def state_of(game_id: str, g: Game, messages: list[str] | None = None, token: str | None = None) -> dict:
    """The JSON state of a game (see the module docstring); ``token``, when given, goes with it
    (to whoever created the game, or the server's own machine)."""
    tr = g.turn
    players = []
    for j, name in enumerate(g.names):
        players.append(
            {
                "name": name,
                "score": g.finished.get(j, g.states[j].score),
                "status": g.status(j),
                "last": g.history[j][-4:],
                "to_move": (j == g.current and not g.over),
                "winner": bool(g.winners and j in g.winners),
            }
        )
    turn = None
    if not g.over:
        why = g.engine.stop_refusal(tr.state) if tr.roll is None else None
        turn = {
            "player": g.names[g.current],
            "total": tr.total,
            "dice": tr.dice,
            "roll": list(tr.roll) if tr.roll else None,
            "options": [{"keep": list(d), "points": p, "label": keep_label(p, d)} for p, d in tr.options],
            "can_stop": tr.roll is None and why is None,
            "stop_refusal": why,
            "compulsory": tr.compulsory,
        }
    return {
        "id": game_id,
        "rules": g.spec,
        "ruleset": g.rs.name,
        "ruleset_hash": g.rs.hash,
        "faces": g.rs.faces,
        "round": g.round,
        "over": g.over,
        "where": g.where(),
        "players": players,
        "turn": turn,
        "messages": list(messages or []),
        "log": list(g.log),
        "engine": page_rules(g.rs),
        "lang": i18n.language(),
        **({"token": token} if token else {}),
    }


async def _json_body(request: Request) -> dict:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        data = load_json(raw, "the request body")
    except InputError as exc:
        raise HTTPException(400, str(exc)) from None
    if not isinstance(data, dict):
        raise HTTPException(400, "the request body must be a JSON object")
    return data


def _players(value) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise HTTPException(400, "players must be a list of names")
    names = [" ".join(n.split()) for n in value]
    if not 2 <= len(names) <= MAX_PLAYERS:
        raise HTTPException(400, f"a game has 2 to {MAX_PLAYERS} players, not {len(names)}")
    if any(not n or len(n) > MAX_NAME for n in names):
        raise HTTPException(400, f"a player's name has 1 to {MAX_NAME} characters")
    return names


def _overrides(value) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(o, str) for o in value) or len(value) > MAX_OVERRIDES:
        raise HTTPException(400, f"overrides must be a list of at most {MAX_OVERRIDES} key=value strings")
    return tuple(o.strip() for o in value if o.strip())


def served_hosts(lan_url: str | None, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The ``Host`` names the server answers to: loopback's, the host of ``lan_url`` and ``extra``."""
    from urllib.parse import urlsplit

    lan = (urlsplit(lan_url).hostname or "",) if lan_url else ()
    return tuple(dict.fromkeys(h.lower() for h in (*LOOPBACK, *lan, *extra) if h))


def _in_language(fn):
    """Run ``fn(request, ...)`` in a worker thread in the request's language; the errors
    of the program become 4xx answers of one line."""

    async def endpoint(request: Request):
        lang = _lang(request)
        body = await _json_body(request) if request.method == "POST" else None

        def work():
            with i18n.using(lang):
                return fn(request, body)

        try:
            return await run_in_threadpool(work)
        except UnknownGame as exc:
            return _error(404, str(exc))
        except Refused as exc:  # an entry the rules do not allow now: the game is unchanged
            return _error(409, str(exc))
        except ThousandError as exc:
            return _error(400, str(exc))

    return endpoint


class Api:
    """The endpoints of the page and its JSON API (the module's docstring) over one
    :class:`Server`: each JSON endpoint ``fn(request, body)`` runs in a worker thread in the
    request's language (:func:`_in_language`); the page's own files are served as they are."""

    def __init__(self, server: Server, authority: Path | None = None):
        self.server = server
        self.ca_der = self.ca_fingerprint = None
        if authority is not None:
            from .tls import authority_der, fingerprint

            self.ca_der, self.ca_fingerprint = authority_der(authority), fingerprint(authority)
        # the service worker's cache is named after the static files, so a changed page replaces it
        self.shell_hash = hashlib.sha256(
            b"".join(p.name.encode() + p.read_bytes() for p in sorted(STATIC.iterdir()) if p.is_file())
        ).hexdigest()[:16]

    def presets(self, request, body):
        out = []
        for name in preset_names(game="1000"):
            rs = load_ruleset(name)
            out.append({"name": name, "summary": rs.summary, "players": [2, MAX_PLAYERS]})
        return JSONResponse(out)

    def strings(self, request, body):
        return JSONResponse(
            {
                "lang": i18n.language(),
                "languages": list(i18n.LANGUAGES),
                "words": {k: _(v) for k, v in PAGE_WORDS.items()},
            }
        )

    def games(self, request, body):
        # another device lists nothing: it opens the games whose links it was given
        return JSONResponse(self.server.store.listing() if self.server.trusted(request) else [])

    def server_info(self, request, body):
        info = {"lan_url": self.server.lan_url, "trusted": self.server.trusted(request)}
        if self.ca_der is not None:
            info["authority"] = {"url": "/table-ca.crt", "fingerprint": self.ca_fingerprint}
        return JSONResponse(info)

    def qr(self, request, body):
        text = request.query_params.get("text", "")
        if not text or len(text) > 500:
            raise HTTPException(400, "text: 1 to 500 characters")
        try:
            import segno
        except ImportError:
            raise HTTPException(404, "QR codes need the web extra (segno): pip install -e '.[web]'") from None
        buf = io.BytesIO()
        segno.make(text, error="m").save(buf, kind="svg", scale=4, border=2)
        return Response(buf.getvalue(), media_type="image/svg+xml")

    def new_game(self, request, body):
        rules = body.get("rules")
        if not isinstance(rules, str) or not rules or "/" in rules or rules.endswith(".toml"):
            raise HTTPException(400, "rules must be the name of a preset")
        seed = body.get("seed")
        if seed is not None and type(seed) is not int:
            raise HTTPException(400, "seed must be a whole number")
        overrides = _overrides(body.get("overrides"))
        rs = load_ruleset(rules, overrides)
        if not isinstance(rs, Ruleset):
            raise HTTPException(400, f"{rules} is not a ruleset of the 1000 family")
        g = Game(rs, _players(body.get("players")), rules, overrides, seed)
        game_id = self.server.store.create(g)
        return JSONResponse(state_of(game_id, g, token=self.server.store.token(game_id)), status_code=201)

    def import_game(self, request, body):
        rules = body.get("rules")
        if not isinstance(rules, str) or "/" in rules or "\\" in rules or rules.endswith(".toml"):
            # a save names its rules; here only a preset, never a file on the server
            raise HTTPException(400, "only games of the presets can be resumed here")
        # the preset decides the rules here (a save's own ruleset is for files of one's own)
        body = {k: v for k, v in body.items() if k != "ruleset"}
        try:
            g = Game.from_json(body)
        except ThousandError as exc:  # a bad file, not a move: 400 whatever the cause
            raise HTTPException(400, str(exc)) from None
        if not isinstance(g, Game) or "/" in g.spec or g.spec.endswith(".toml"):
            raise HTTPException(400, "only games of the presets can be resumed here")
        _players(g.names)
        game_id = self.server.store.create(g)
        return JSONResponse(state_of(game_id, g, token=self.server.store.token(game_id)), status_code=201)

    def game(self, request, body):
        game_id = self.server.game_id(request)
        g = self.server.store.load(game_id)
        return JSONResponse(
            state_of(game_id, g, token=self.server.store.token(game_id) if self.server.trusted(request) else None)
        )

    def entry(self, request, body):
        game_id = self.server.game_id(request)
        text = body.get("entry")
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_ENTRY:
            raise HTTPException(400, 'entry must be a line such as "roll 1,5,3,3,4", "keep 1,5" or "stop"')
        verb, _sep, arg = " ".join(text.split()).partition(" ")
        with self.server.store.change(game_id) as g:
            msgs = g.submit(game_entry(g, verb.lower(), arg, text.strip()))
        return JSONResponse(state_of(game_id, g, msgs))

    def undo(self, request, body):
        game_id = self.server.game_id(request)
        with self.server.store.change(game_id) as g:
            msg = g.undo()
        return JSONResponse(state_of(game_id, g, [msg]))

    def sync(self, request, body):
        game_id = self.server.game_id(request)
        since, log = body.get("since"), body.get("log")
        entries_ok = isinstance(log, list) and len(log) <= MAX_LOG
        entries_ok = entries_ok and all(isinstance(e, str) and len(e) <= MAX_ENTRY for e in log)
        if not (isinstance(since, str) and entries_ok):
            raise HTTPException(400, f'sync needs "since" (a log digest) and "log" (at most {MAX_LOG} entries)')
        with self.server.store.change(game_id) as g:
            if log_digest(g.log) != since:
                raise HTTPException(
                    412, "the game changed on the server while this phone was away: its offline entries were not taken"
                )
            g.adopt(log)
        return JSONResponse(state_of(game_id, g))

    def advice(self, request, body):
        game_id = self.server.game_id(request)
        g = self.server.store.load(game_id)
        # what is missing first, the advice after: a build that ends between the two then
        # shows as exact advice still listed as building (the next poll drops it), never
        # as nothing left to build beside advice that is not exact yet
        builds = self.server.builds(g)
        try:
            parts = self.server.advisors(g).advice(g)
        except Solving as s:
            return JSONResponse(s.job.progress(), status_code=202)
        return JSONResponse(
            {"status": "ready", "player": g.names[g.current], "advice": advice_json(parts), "builds": builds}
        )

    def build(self, request, body):
        game_id = self.server.game_id(request)
        g = self.server.store.load(game_id)
        objective = body.get("objective")
        wanted = [m["objective"] for m in self.server.advisors(g).missing(g)]
        if objective not in wanted:
            have = ", ".join(wanted) or "none"
            raise HTTPException(400, f"objective must be a table this game's advice lacks ({have}), not {objective!r}")
        return JSONResponse(self.server.solves.start(g.rs, objective).progress(), status_code=202)

    def review(self, request, body):
        from thousand.play.review import review_game

        game_id = self.server.game_id(request)
        g = self.server.store.load(game_id)
        try:
            rv = review_game(g, advisors=self.server.advisors(g))
        except Solving as s:
            return JSONResponse(s.job.progress(), status_code=202)
        return JSONResponse({"status": "ready", "review": rv.to_json()})

    def save(self, request, body):
        game_id = self.server.game_id(request)
        g = self.server.store.load(game_id)
        return Response(
            json.dumps(g.to_json(), indent=1) + "\n",
            media_type="application/json",
            headers={"Content-Disposition": f'attachment; filename="thousand-{game_id}.json"'},
        )

    def delete(self, request, body):
        game_id = self.server.game_id(request)
        self.server.store.delete(game_id)
        return JSONResponse({"deleted": game_id})

    async def index(self, request: Request):
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    # the service worker's cache is named after the static files, so a changed page replaces it
    async def service_worker(self, request: Request):
        # served from / (not /static/) so that its scope is the whole page
        text = (STATIC / "sw.js").read_text(encoding="utf-8").replace("__VERSION__", self.shell_hash)
        return Response(text, media_type="text/javascript", headers={"Cache-Control": "no-cache"})

    async def table_authority(self, request: Request):
        # public by nature: what a phone installs to trust this server's certificate
        if self.ca_der is None:
            return _error(404, "this server has no certificate authority (thousand serve --https makes one)")
        return Response(
            self.ca_der,
            media_type="application/x-x509-ca-cert",
            headers={"Content-Disposition": 'attachment; filename="thousand-table-ca.crt"'},
        )

    async def manifest(self, request: Request):
        return FileResponse(STATIC / "manifest.webmanifest", media_type="application/manifest+json")

    async def http_error(self, request: Request, exc: HTTPException):
        return _error(exc.status_code, exc.detail)

    async def not_found(self, request: Request, exc):
        return _error(404, f"no such page: {request.url.path}")

    async def server_error(self, request: Request, exc):
        return _error(500, f"internal error: {type(exc).__name__}")


def create_app(
    folder: Path | None = None,
    tables_dir: str | None = None,
    lan_url: str | None = None,
    trusted: tuple[str, ...] = LOOPBACK,
    authority: Path | None = None,
    hosts: tuple[str, ...] = (),
) -> Starlette:
    """The application; games are saved under ``folder`` (default :func:`store.default_folder`).
    ``lan_url`` (``thousand serve --lan``): the address other devices open; requests from them
    need each game's token, and mutating requests are rate-limited per device; ``trusted``:
    the client addresses that see every game without one (this machine's); ``authority``
    (``--https``): the table's certificate authority (:mod:`.tls`), offered to the phones at
    ``/table-ca.crt``; ``hosts``: names the server answers to besides loopback and the host of
    ``lan_url`` (:class:`Guard`)."""
    server = Server(folder, tables_dir, lan_url, trusted)
    api = Api(server, authority)
    routes = [
        Route("/", api.index),
        Route("/sw.js", api.service_worker),
        Route("/manifest.webmanifest", api.manifest),
        Route("/table-ca.crt", api.table_authority),
        Route("/api/presets", _in_language(api.presets)),
        Route("/api/strings", _in_language(api.strings)),
        Route("/api/games", _in_language(api.games), methods=["GET"]),
        Route("/api/server", _in_language(api.server_info), methods=["GET"]),
        Route("/api/qr", _in_language(api.qr), methods=["GET"]),
        Route("/api/games", _in_language(api.new_game), methods=["POST"]),
        Route("/api/games/import", _in_language(api.import_game), methods=["POST"]),
        Route("/api/games/{id}", _in_language(api.game), methods=["GET"]),
        Route("/api/games/{id}", _in_language(api.delete), methods=["DELETE"]),
        Route("/api/games/{id}/entry", _in_language(api.entry), methods=["POST"]),
        Route("/api/games/{id}/undo", _in_language(api.undo), methods=["POST"]),
        Route("/api/games/{id}/sync", _in_language(api.sync), methods=["POST"]),
        Route("/api/games/{id}/advice", _in_language(api.advice), methods=["GET"]),
        Route("/api/games/{id}/build", _in_language(api.build), methods=["POST"]),
        Route("/api/games/{id}/review", _in_language(api.review), methods=["GET"]),
        Route("/api/games/{id}/save", _in_language(api.save), methods=["GET"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(Guard, hosts=served_hosts(lan_url, hosts)),
            Middleware(BodyLimit),
            Middleware(RateLimit),
        ],
        exception_handlers={
            HTTPException: api.http_error,
            404: api.not_found,
            405: api.http_error,
            500: api.server_error,
        },
    )
    app.state.server = server
    return app
