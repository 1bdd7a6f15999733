"""The saved games of the web page: one JSON file per game (the scorekeeper's save format,
:meth:`thousand.play.session.LoggedGame.to_json`) in one folder that the server owns.

A game is named by an id the server makes (16 hex digits); no path ever comes from the
client. Every change is written durably (:func:`thousand.base.untrusted.write_durably`:
fsync'ed, renamed into place) before the answer goes out, so a kill or a restart of the
server loses nothing it answered, and a change that is refused leaves the file as it was.
Changes to one game are serialised by a lock per id. The folder, every game and its secret
token beside it (``{id}.token``) are this user's alone (0700 and 0600): the page's link for
other devices carries the token, and a request from another device needs it.
"""

from __future__ import annotations

import os
import re
import secrets
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from thousand.base.errors import StateError
from thousand.base.i18n import _
from thousand.base.untrusted import InputError, ensure_private_folder, load_json, write_durably
from thousand.play.game import Game
from thousand.play.session import save_game

__all__ = ["GAME_ID", "MAX_GAMES", "GameStore", "UnknownGame", "default_folder"]

GAME_ID = re.compile(r"[0-9a-f]{16}")  # matched whole (fullmatch): no trailing newline
MAX_GAMES = 10_000  # a folder of saved games larger than this refuses new ones


class UnknownGame(StateError):
    """No saved game has this id."""


def default_folder() -> Path:
    """``$XDG_STATE_HOME/thousand/web`` (default ``~/.local/state/thousand/web``)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "thousand" / "web"


class GameStore:
    """Saved games under ``folder``: :meth:`create`, :meth:`load`, :meth:`change` (load,
    apply, save, under the game's lock), :meth:`listing`."""

    def __init__(self, folder: Path | None = None):
        self.folder = Path(folder) if folder is not None else default_folder()
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def path(self, game_id: str) -> Path:
        if not isinstance(game_id, str) or not GAME_ID.fullmatch(game_id):
            raise UnknownGame(_("no game {0!r}").format(game_id))
        return self.folder / f"{game_id}.json"

    def lock(self, game_id: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(game_id, threading.Lock())

    def _write(self, game_id: str, g: Game) -> None:
        ensure_private_folder(self.folder)
        save_game(g, self.path(game_id))

    def token_path(self, game_id: str) -> Path:
        return self.folder / f"{game_id}.token"

    def token(self, game_id: str) -> str:
        """The game's secret (:func:`secrets.token_urlsafe`, 128 bits): whoever has it may read
        and change the game from another device. A game saved before games had one gets one
        now (written atomically, readable by this user alone)."""
        path = self.token_path(self.path(game_id).stem)
        try:
            return path.read_text(encoding="ascii").strip()
        except FileNotFoundError:
            if not self.path(game_id).exists():
                raise UnknownGame(_("no game {0!r}").format(game_id)) from None
        with self._guard:
            if path.exists():
                return path.read_text(encoding="ascii").strip()
            token = secrets.token_urlsafe(16)
            write_durably(path, token + "\n")
            return token

    def token_ok(self, game_id: str, token: str | None) -> bool:
        """Whether ``token`` is the game's (compared in constant time); an unknown game is
        :class:`UnknownGame` only to a request that holds a token at all."""
        if not isinstance(token, str) or not token:
            return False
        return secrets.compare_digest(token.encode(), self.token(game_id).encode())

    def create(self, g: Game) -> str:
        """Store a new game and its token; its id."""
        ensure_private_folder(self.folder)
        if sum(1 for _p in self.folder.glob("*.json")) >= MAX_GAMES:
            raise StateError(_("too many saved games ({0}): delete some first").format(MAX_GAMES))
        while True:
            game_id = secrets.token_hex(8)
            if not self.path(game_id).exists():
                break
        with self.lock(game_id):
            self._write(game_id, g)
            self.token(game_id)
        return game_id

    def load(self, game_id: str) -> Game:
        path = self.path(game_id)
        try:
            data = load_json(path.read_bytes(), game_id)
        except FileNotFoundError:
            raise UnknownGame(_("no game {0!r}").format(game_id)) from None
        except (OSError, InputError) as exc:
            raise StateError(_("cannot read the saved game {path}: {why}").format(path=game_id, why=exc)) from None
        if not isinstance(data, dict):
            raise StateError(_("{path} is not a saved game").format(path=game_id))
        return Game.from_json(data)

    @contextmanager
    def change(self, game_id: str):
        """``with store.change(id) as g:`` — the game, saved when the block ends without an
        error (an error leaves the saved game as it was)."""
        with self.lock(game_id):
            g = self.load(game_id)
            yield g
            self._write(game_id, g)

    def delete(self, game_id: str) -> None:
        with self.lock(game_id):
            try:
                self.path(game_id).unlink()
            except FileNotFoundError:
                raise UnknownGame(_("no game {0!r}").format(game_id)) from None
            self.token_path(game_id).unlink(missing_ok=True)

    def listing(self) -> list[dict]:
        """Every saved game, the most recently changed first: id, token, rules, players, entries."""
        out = []
        if not self.folder.is_dir():
            return out
        for path in self.folder.glob("*.json"):
            if not GAME_ID.fullmatch(path.stem):
                continue
            try:
                data = load_json(path.read_bytes(), path.stem)
                out.append(
                    {
                        "id": path.stem,
                        "token": self.token(path.stem),
                        "rules": str(data["rules"]),
                        "players": list(data["players"]),
                        "entries": len(data["log"]),
                        "changed": path.stat().st_mtime,
                    }
                )
            except (OSError, InputError, KeyError, TypeError):
                continue  # a damaged file is reported when it is opened
        out.sort(key=lambda d: -d["changed"])
        for d in out:
            d["changed"] = time.strftime("%Y-%m-%d %H:%M", time.localtime(d["changed"]))
        return out
