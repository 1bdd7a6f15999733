"""What every scorekeeper shares: a game that is its log of entries, the commands common
to every game (help, advice, sheet, log, undo, save, quit), saving and the session loop.

The 1000 scorekeeper (:mod:`thousand.play`) and poker dice's
(:mod:`thousand.play.poker`) are :class:`LoggedGame` subclasses driven by
:func:`run_session`.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

from thousand.base.errors import Refused, StateError, ThousandError
from thousand.base.i18n import _
from thousand.base.untrusted import cut, output_file, write_durably

__all__ = [
    "SAVE_FORMAT",
    "LoggedGame",
    "autosave_dir",
    "handle_line",
    "run_session",
    "save_game",
    "session_command",
]

SAVE_FORMAT = 1


class LoggedGame:
    """A game that is its log of entries (this module's doc): an entry is applied and
    logged, a refused one changes nothing, ``undo`` replays the log without the last entry,
    and the save is the rules plus the log. Subclasses define ``_reset`` (the state before
    any entry), ``_apply(entry)`` (one entry, or :class:`Refused`) and ``normalise(entry)``."""

    def __init__(self, rs, names: list[str], spec: str, overrides: tuple[str, ...], seed: int | None):
        if len(names) < 2:
            raise StateError(_("a game needs at least two players: --players A B [C ...]"))
        if len(set(names)) != len(names):
            raise StateError(_("player names must differ"))
        self.rs, self.names, self.spec, self.overrides, self.seed = rs, list(names), spec, tuple(overrides), seed
        self.log: list[str] = []

    def normalise(self, entry: str) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def submit(self, entry: str) -> list[str]:
        """Apply one entry and log it; a refused entry changes nothing (raises :class:`Refused`)."""
        entry = self.normalise(entry)
        try:
            msgs = self._apply(entry)
        except ThousandError:
            self._replay(self.log)  # leave the game exactly as it was
            raise
        self.log.append(entry)
        return msgs

    def undo(self) -> str:
        if not self.log:
            raise Refused(_("nothing to undo"))
        last = self.log[-1]
        self._replay(self.log[:-1])
        return _("undone: {entry}").format(entry=last)

    def adopt(self, log: list[str]) -> None:
        """The game with ``log`` instead of its own (entries kept elsewhere, e.g. on a phone
        that played on without the server): replayed from the start; if an entry does not
        apply, :class:`Refused` names it and the game stays as it was."""
        self._reset()
        entries: list[str] = []
        e = ""
        try:
            for e in log:
                entry = self.normalise(e)
                self._apply(entry)
                entries.append(entry)
        except ThousandError as exc:
            self._replay(self.log)  # the game's own log, untouched so far
            raise Refused(
                _("entry {n} ({entry!r}) does not apply: {why}").format(n=len(entries) + 1, entry=e, why=exc)
            ) from None
        self.log, self.messages = entries, []

    def _replay(self, log: list[str]) -> None:
        self._reset()
        self.log = []
        for e in log:
            self._apply(e)
            self.log.append(e)
        self.messages = []

    def to_json(self) -> dict:
        return {
            "format": SAVE_FORMAT,
            "rules": self.spec,
            "overrides": list(self.overrides),
            "ruleset_hash": self.rs.hash,
            # the rules in full: a save opens where the ruleset file it names is not (another machine)
            "ruleset": self.rs.to_mapping(),
            "players": self.names,
            "seed": self.seed,
            "log": list(self.log),
        }

    def dice_rng(self) -> random.Random:
        """The generator of the program's throws: seeded by ``--seed`` and the log length, so
        a replay, a resume or an undo followed by ``roll`` throws the same dice."""
        return random.SystemRandom() if self.seed is None else random.Random(f"{self.seed}:{len(self.log)}")


def session_command(g: LoggedGame, verb: str, arg: str, advisors, help_text: str) -> tuple[str, bool] | None:
    """The commands every scorekeeper shares (quit, help, ?, sheet, log, undo, save), or None
    for a game's own verbs."""
    if verb in ("quit", "exit", "q"):
        return "", True
    if verb in ("help", "h"):
        return _(help_text), False
    if verb in ("?", "hint", "advice"):
        return advisors.advise(g), False
    if verb == "sheet":
        return g.sheet(), False
    if verb == "log":
        return "\n".join(f"{k + 1:4}  {e}" for k, e in enumerate(g.log)) or _("(no entries)"), False
    if verb == "undo":
        msg = g.undo()
        return msg + "\n" + g.sheet(), False
    if verb == "save":
        if not arg:
            raise Refused(_("save needs a file name: save FILE"))
        try:
            save_game(g, output_file(arg, _("file")))
        except OSError as exc:
            raise Refused(_("cannot save to {path}: {why}").format(path=arg, why=exc.strerror or exc)) from None
        return _("saved {n} entries to {path}").format(n=len(g.log), path=arg), False
    return None


def handle_line(g: LoggedGame, line: str, advisors, help_text: str, entry_of) -> tuple[str, bool]:
    """One input line of a scorekeeper: a shared command (:func:`session_command`), or
    ``entry_of(g, verb, arg, line)`` for the game's own verbs. Returns (text, quit)."""
    line = line.strip()
    if not line or line.startswith("#"):
        return "", False
    verb, _sep, arg = line.partition(" ")
    verb, arg = verb.lower(), arg.strip()
    common = session_command(g, verb, arg, advisors, help_text)
    if common is not None:
        return common
    return entry_of(g, verb, arg, line), False


def autosave_dir() -> Path:
    """Where games are saved as they go: ``$XDG_STATE_HOME/thousand/games`` (default
    ``~/.local/state/thousand/games``), a folder of this user's alone (made so by
    :func:`thousand.base.untrusted.ensure_private_folder` when the first game is saved)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "thousand" / "games"


def save_game(g: LoggedGame, path: Path) -> None:
    """Write the game to ``path`` durably (:func:`thousand.base.untrusted.write_durably`:
    fsync'ed and renamed into place, readable by this user alone); the folder must exist."""
    write_durably(Path(path), json.dumps(g.to_json(), indent=1) + "\n")


def run_session(g: LoggedGame, advisors, stdin, echo, command, autosave: Path | None = None) -> int:
    """Read commands line by line from ``stdin`` until it ends or the player quits;
    ``echo(text, nl=True)`` shows the answers (and, when input is piped, the input).
    Every change is saved to ``autosave`` as it happens, so that neither the end of the
    input nor Ctrl-C loses the game. ``command(g, line, advisors)`` handles a line
    (:func:`thousand.play.run_command`; poker dice has its own). Returns the exit code
    (130 after Ctrl-C)."""
    echo_input = not stdin.isatty()
    echo(
        _("thousand play {name}: {players} (type help for the commands)").format(
            name=g.rs.name, players=", ".join(g.names)
        )
    )
    if autosave is not None:
        echo(_("the game is saved as it goes to {path}").format(path=autosave))
    echo(g.sheet())
    code, saved = 0, list(g.log)
    try:
        while True:
            echo(g.prompt(), nl=False)
            line = stdin.readline()
            if not line:
                echo("")
                break
            if echo_input:
                echo(line.rstrip("\n"))
            try:
                text, quit_ = command(g, line, advisors)
            except ThousandError as exc:
                text, quit_ = _("refused: {why}").format(why=cut(exc, 400)), False
            # saved before the answer is shown: an entry the player saw acknowledged is on disk
            if autosave is not None and g.log != saved:
                _autosave(g, autosave, echo)
                saved = list(g.log)
            if text:
                echo(text)
            if quit_:
                break
    except KeyboardInterrupt:
        echo("")
        code = 130
    if autosave is not None and g.log:
        _autosave(g, autosave, echo)
        echo(_("saved {n} entries; resume with: thousand play --resume {path}").format(n=len(g.log), path=autosave))
    return code


def _autosave(g: LoggedGame, path: Path, echo) -> None:
    try:
        save_game(g, path)
    except OSError as exc:
        echo(_("(cannot autosave to {path}: {why})").format(path=path, why=exc.strerror or exc))
