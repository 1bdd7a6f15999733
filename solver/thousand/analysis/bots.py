"""Bots: what a bot sees and answers, the rules of one decision, loaders, built-in bots,
and the JSON-lines client for bots written in any language (docs/bots.md).

A bot is asked once per scoring roll on which it has a choice. It sees a
:class:`BotState` (both players, the turn total before this roll, the roll, sorted, and
every legal :class:`Action`) and answers one of the legal actions: the dice to set
aside and whether to roll on or stop. Where the rules leave no choice after a set-aside
(a compulsory roll of hot dice, a confirmed bank, a mid-turn dump or overshoot) the
``roll`` flag of the answer is ignored.

The legal actions are those of :class:`thousand.engine.TurnRules`, the one definition of a
turn in play.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import json
import os
import random
import select
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thousand.base.choices import SEATS
from thousand.base.errors import BotError
from thousand.base.i18n import _
from thousand.base.objectives import objective as objective_named
from thousand.engine.player import Moves, PlayerState
from thousand.engine.turn import Action, TurnRules, TurnState, still_to_play
from thousand.rules.ruleset import Ruleset

from .observation import Encoding

PROTOCOL = 1
BUILTINS = ("optimal", "race", "hold:N", "cautious", "random")


# --------------------------------------------------------------------------- types


@dataclass(frozen=True)
class BotState:
    """One decision: the mover ``me`` (and ``opponent``, None in a race) at the start of
    the turn, the turn total before this roll, the roll (sorted) and the legal actions
    (the set-aside with the most points first).

    With ``equal_turns`` (docs/rules.md section 7) also the mover's ``seat`` in the round
    (0 the first) and, in a last turn, ``to_beat``: the top final total, held by
    ``tied`` players (the opponents after ``seat`` in the round play their last turns
    after this one). Without equal turns ``seat`` and ``to_beat`` are None."""

    ruleset: Ruleset
    me: PlayerState
    opponent: PlayerState | None
    turn_total: int
    roll: tuple[int, ...]
    legal: tuple[Action, ...]
    hot: bool = False  # this roll is a roll of hot dice (all dice again)
    others: tuple[PlayerState, ...] = ()  # three players and more: the opponents after ``opponent``
    seat: int | None = None  # equal_turns: the mover's place in the round
    to_beat: int | None = None  # equal_turns, a last turn: the top final total
    tied: int = 0  # ... and the players holding it

    @classmethod
    def at(
        cls,
        engine: TurnRules,
        s: TurnState,
        opponent: PlayerState | None,
        others: tuple[PlayerState, ...] = (),
        seat: int | None = None,
        to_beat: int | None = None,
        tied: int = 0,
    ) -> BotState:
        """The decision at the rolled turn state ``s`` (its legal actions by ``engine``)."""
        return cls(
            engine.rs,
            s.player,
            opponent,
            s.total,
            s.roll,
            engine.legal(s),
            engine.compulsory(s),
            tuple(others),
            seat,
            to_beat,
            tied,
        )

    @property
    def opponents(self) -> tuple[PlayerState, ...]:
        """Every opponent in the order they move next (``opponent`` first)."""
        return ((self.opponent,) if self.opponent is not None else ()) + self.others

    @property
    def dice(self) -> int:
        return len(self.roll)

    def key(self) -> tuple:
        return (
            self.me,
            self.opponent,
            self.turn_total,
            self.roll,
            self.hot,
            self.others,
            self.seat,
            self.to_beat,
            self.tied,
        )

    @property
    def last_turn(self) -> bool:
        """A last turn of an equal_turns round: banking wins only above ``to_beat``."""
        return self.to_beat is not None

    @property
    def later(self) -> tuple[PlayerState, ...]:
        """In a last turn, the opponents who still play theirs after this one (in order)."""
        return still_to_play(self.opponents, self.seat) if self.last_turn else ()

    # what the bot machinery asks of a decision (poker dice has its own, PokerBotState)

    def coerce(self, answer: Any) -> Action:
        return coerce_action(self, answer)

    def fallback(self) -> Action:
        return fallback(self)

    def check_reply(self, reply: dict) -> None:
        """A JSON-lines answer must name both the set-aside and the continuation."""
        if "keep" not in reply or reply.get("then") not in ("roll", "stop"):
            raise _fault("malformed", f'an answer needs "keep" and "then": {_short(reply)}')

    def to_json(self) -> dict:
        return {
            "me": player_json(self.me),
            "opponent": player_json(self.opponent) if self.opponent else None,
            "opponents": [player_json(y) for y in self.opponents],
            "turn_total": self.turn_total,
            "dice": self.dice,
            "roll": list(self.roll),
            "hot_dice_roll": self.hot,
            "seat": self.seat,
            "to_beat": self.to_beat,
            "tied": self.tied,
            "legal": [a.to_json() for a in self.legal],
        }


def player_json(x: PlayerState) -> dict:
    return {k: (bool(v) if k == "opened" else int(v)) for k, v in x._asdict().items()}


def advise_command(rs: Ruleset, state: BotState, objective: str, overrides: tuple[str, ...] = ()) -> str:
    """The ``thousand advise`` command line that shows the options of ``state``."""

    def counters(x: PlayerState, p: str, k: int = 1) -> list[str]:
        out = []
        if not x.opened:
            out.append(f"--{p}unopened" + (f" {k}" if p else ""))
        for k in ("bolts", "falls", "pit_tries", "pit_entry", "barrel_tries", "barrel_entry", "overshoots"):
            v = getattr(x, k)
            if v:
                out.append(f"--{p}{k.replace('_', '-')} {v}")
        return out

    parts = ["thousand", "advise", shlex.quote(rs.name)]
    parts += [f"--set {shlex.quote(o)}" for o in overrides]
    parts += [f"--me {state.me.score}"] + counters(state.me, "")
    against = objective_named(objective).opponents
    if against and state.to_beat is not None:
        # a last turn: the total to beat, and the players still to play after this one
        parts += [f"--to-beat {state.to_beat}"] + ([f"--tied {state.tied}"] if state.tied > 1 else [])
        for k, y in enumerate(state.later, start=1):
            parts += [f"--opp {y.score}"] + counters(y, "opp-", k)
    elif against and state.opponent is not None:
        for k, y in enumerate(state.opponents, start=1):
            parts += [f"--opp {y.score}"] + counters(y, "opp-", k)
        if state.seat is not None:
            parts += [f"--seat {SEATS[state.seat]}"]
    else:
        parts += [objective_named(objective).solve_options()]
    parts += [f"--turn {state.turn_total}", f"--roll {','.join(map(str, state.roll))}"]
    return " ".join(parts)


def match_action(legal: tuple[Action, ...], keep, roll: bool | None) -> Action | None:
    """The legal action with these dice set aside and this continuation (ignored where forced)."""
    keep = tuple(sorted(keep))
    cands = [a for a in legal if a.keep == keep]
    if not cands:
        return None
    if len(cands) == 1 and cands[0].forced:
        return cands[0]
    for a in cands:
        if roll is None or a.roll == roll:
            return a
    return None


def coerce_action(state: BotState, answer: Any) -> Action:
    """A bot's answer as one of ``state.legal``, or a :class:`BotError` saying why not.

    Accepted: an :class:`Action`; a dict ``{"keep": [...], "then": "roll"|"stop"}``; a pair
    ``(keep, "roll"|"stop"|bool)``; or a bare ``"roll"``/``"stop"`` meaning the set-aside
    with the most points (the first legal one)."""
    legal = state.legal
    if isinstance(answer, Action):
        for a in legal:  # the common case: one of the legal actions itself
            if a is answer:
                return a
        keep, roll = answer.keep, answer.roll
    elif isinstance(answer, str):
        if answer not in ("roll", "stop"):
            raise _fault("malformed", f"answer {answer!r} is neither 'roll' nor 'stop'")
        keep, roll = legal[0].keep, answer == "roll"
    elif isinstance(answer, dict):
        if "keep" not in answer:
            keep = legal[0].keep
        else:
            keep = answer["keep"]
        then = answer.get("then", answer.get("action"))
        if then not in ("roll", "stop"):
            raise _fault("malformed", f'answer {_short(answer)}: \'then\' must be "roll" or "stop"')
        roll = then == "roll"
    elif isinstance(answer, (tuple, list)) and len(answer) == 2:
        keep, then = answer
        roll = then if isinstance(then, bool) else (then == "roll" if then in ("roll", "stop") else None)
        if roll is None:
            raise _fault("malformed", f"answer {_short(answer)}: the second item must be 'roll' or 'stop'")
    else:
        raise _fault("malformed", f"answer {_short(answer)} is not an action")
    try:
        keep = tuple(int(v) for v in keep)
    except (TypeError, ValueError):
        raise _fault("malformed", f"answer {_short(answer)}: 'keep' must be a list of faces") from None
    a = match_action(legal, keep, roll)
    if a is None:
        raise _fault(
            "illegal",
            f"illegal action: keep {list(keep)} then {'roll' if roll else 'stop'} "
            f"(legal: {'; '.join(x.label() for x in legal)})",
        )
    return a


def _fault(kind: str, msg: str) -> BotError:
    """A counted fault of a bot's answer (``kind``: malformed, illegal, late, raised)."""
    e = BotError(msg)
    e.kind = kind
    return e


def _short(v: Any, n: int = 80) -> str:
    s = repr(v)
    return s if len(s) <= n else s[: n - 3] + "..."


# --------------------------------------------------------------------------- faults


@dataclass
class Faults:
    """Faults of a bot: counted per kind, the first few kept with their messages."""

    counts: dict = field(default_factory=dict)
    examples: list = field(default_factory=list)

    def add(self, kind: str, msg: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if len(self.examples) < 5:
            self.examples.append(f"{kind}: {msg}")

    @property
    def total(self) -> int:
        return sum(self.counts.values())


class Bot:
    """The base of the bots the evaluator drives: ``choose(state) -> Action`` never raises
    for a bot's misbehaviour (a fault is counted and the fallback action, the first legal
    set-aside then stop where allowed, is played) except after ``max_faults`` faults."""

    name = "bot"
    deterministic = True

    def __init__(self, max_faults: int = 1000):
        self.faults = Faults()
        self.max_faults = max_faults
        self.decisions = 0

    def decide(self, state: BotState) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def choose(self, state: BotState) -> Action:
        self.decisions += 1
        try:
            return state.coerce(self.decide(state))
        except BotError as exc:
            if not hasattr(exc, "kind"):
                raise
            self.fault(exc.kind, str(exc))
        except Exception as exc:  # a user bot raised: a counted fault, never a traceback
            self.fault("raised", f"{type(exc).__name__}: {exc}".splitlines()[0][:200])
        return state.fallback()

    def fault(self, kind: str, msg: str) -> None:
        self.faults.add(kind, msg)
        if self.faults.total >= self.max_faults:
            raise BotError(
                _("bot {0}: {1} faults, giving up (first: {2})").format(
                    self.name, self.faults.total, self.faults.examples[0]
                )
            )

    def new_game(self) -> None:
        pass

    def close(self) -> None:
        pass


def fallback(state: BotState) -> Action:
    """The action played for a faulty answer: the first legal set-aside, stopping where allowed."""
    first = state.legal[0].keep
    cands = [a for a in state.legal if a.keep == first]
    return next((a for a in cands if not a.roll), cands[0])


class HoldBot(Bot):
    """Set aside the most points; stop once the turn total reaches ``n``, or banking wins,
    where banking is allowed (Neller's "hold at n"). In a last turn of an equal_turns
    round it rolls on until a bank would reach the total to beat (equal to it shares the top)."""

    def __init__(self, n: int):
        super().__init__()
        self.n = n
        self.name = f"hold:{n}"
        self._moves = None

    def decide(self, state: BotState) -> Action:
        first = state.legal[0].keep
        cands = [a for a in state.legal if a.keep == first]
        if len(cands) == 1:
            return cands[0]
        stop = next(a for a in cands if not a.roll)
        t = state.turn_total + stop.points
        if self._moves is None or self._moves.rs is not state.ruleset:
            self._moves = Moves(state.ruleset)
        wins = self._moves.wins(state.me, t)
        if state.last_turn:
            # a last turn: a bank short of the total to beat is worth nothing (equal to it
            # shares the top, the best an exact barrel allows)
            return stop if wins and state.me.score + t >= state.to_beat else next(a for a in cands if a.roll)
        return stop if t >= self.n or wins else next(a for a in cands if a.roll)


class CautiousBot(HoldBot):
    """Stop as soon as banking is allowed."""

    def __init__(self):
        super().__init__(0)
        self.name = "cautious"


class RandomBot(Bot):
    """A uniformly random legal action (seeded)."""

    deterministic = False

    def __init__(self, seed: int = 0):
        super().__init__()
        self.rng = random.Random(seed)
        self.name = "random"

    def decide(self, state: BotState) -> Action:
        return state.legal[self.rng.randrange(len(state.legal))]


class TableBot(Bot):
    """The best action by a solved table (``optimal``: the duel table; ``race``: the race
    table, blind to the opponent). ``optimal`` among three players or more plays what the
    advice layer advises there (:class:`thousand.advice.Advisor`: the equilibrium where its
    table is at hand, else the best measured approximation), as a player asking it would."""

    def __init__(self, oracle, name: str, tables_dir: str | None = None):
        super().__init__()
        self.oracle, self.name = oracle, name
        self.tables_dir = tables_dir
        self._advisor = None

    def decide(self, state: BotState) -> Action:
        if self.name == "optimal" and state.others:
            return self._advised(state)
        return self.oracle.best(state)

    def _advised(self, state: BotState) -> Action:
        from thousand.advice.policy import Advisor
        from thousand.advice.situation import Situation

        if self._advisor is None:
            self._advisor = Advisor(state.ruleset, "auto", self.tables_dir, chances=False)
        last = state.to_beat is not None
        sit = Situation(
            state.ruleset,
            state.me,
            state.later if last else state.opponents,
            seat=None if last else state.seat,
            turn_total=state.turn_total,
            roll=state.roll,
            to_beat=state.to_beat,
            tied=max(state.tied, 1),
        )
        adv = next(p.advice for p in self._advisor.advise(sit) if p.advice is not None)
        return adv.best.detail["action"]


class _Late(BaseException):
    """Raised into a Python bot's ``decide`` when its time is up (BaseException, so that a
    bot's own ``except Exception`` does not swallow it)."""


class PythonBot(Bot):
    """A user's object with ``decide(state)``, given ``timeout`` seconds a decision: a
    real-time timer interrupts a bot that loops or sleeps (a counted ``late`` fault;
    ``max_late`` in a row stop the evaluation). The timer needs the main thread of a
    Unix process; elsewhere decisions are not timed."""

    def __init__(self, obj: Any, name: str, timeout: float = 2.0, max_late: int = 3):
        super().__init__(max_faults=100)
        self.obj, self.name = obj, name
        self.deterministic = bool(getattr(obj, "deterministic", True))
        self.timeout, self.max_late, self.late_in_row = timeout, max_late, 0
        self._timed = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()

    def decide(self, state: BotState) -> Any:
        if not self._timed:
            return self.obj.decide(state)

        def late(signum, frame):
            raise _Late

        old = signal.signal(signal.SIGALRM, late)
        try:
            try:
                signal.setitimer(signal.ITIMER_REAL, self.timeout)
                answer = self.obj.decide(state)
            finally:  # a timer that fires on the way out is still caught below
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _Late:
            self.late_in_row += 1
            if self.late_in_row >= self.max_late:
                raise BotError(
                    _("bot {0!r} did not answer within {1:g} s {2} times in a row; giving up").format(
                        self.name, self.timeout, self.late_in_row
                    )
                ) from None
            raise _fault("late", f"no answer within {self.timeout:g} s") from None
        finally:
            signal.signal(signal.SIGALRM, old)
        self.late_in_row = 0
        return answer

    def new_game(self) -> None:
        f = getattr(self.obj, "new_game", None)
        if callable(f):
            try:
                f()
            except Exception as exc:
                self.fault("raised", f"new_game: {type(exc).__name__}: {exc}")


class _FnBot:
    def __init__(self, fn):
        self.decide = fn


def load_python_object(spec: str, need_decide: bool = True) -> Any:
    """``module:attr`` or ``path/to/file.py:attr`` -> an object with ``decide`` (or, without
    ``need_decide``, the attribute as it is)."""
    target, _sep, attr = spec.rpartition(":")
    if not target or not attr:
        raise BotError(_("bot {0!r}: expected module:attr or path/to/file.py:attr").format(spec))
    try:
        if target.endswith(".py") or os.sep in target or "/" in target:
            path = Path(target)
            if not path.is_file():
                raise BotError(_("bot {0!r}: no such file {1}").format(spec, target))
            name = f"_thousand_bot_{abs(hash(str(path.resolve())))}"
            mspec = importlib.util.spec_from_file_location(name, path)
            if mspec is None or mspec.loader is None:
                raise BotError(_("bot {0!r}: cannot load {1}").format(spec, target))
            module = importlib.util.module_from_spec(mspec)
            sys.modules[name] = module
            mspec.loader.exec_module(module)
        else:
            module = importlib.import_module(target)
    except BotError:
        raise
    except Exception as exc:  # import errors, syntax errors, errors at import time
        raise BotError(
            _("bot {0!r}: cannot import {1}: {2}: {3}").format(
                spec, target, type(exc).__name__, str(exc).splitlines()[0] if str(exc) else ""
            )
        ) from None
    if not hasattr(module, attr):
        raise BotError(_("bot {0!r}: {1} has no attribute {2!r}").format(spec, target, attr))
    obj = getattr(module, attr)
    if not need_decide:
        return obj
    try:
        if isinstance(obj, type):
            obj = obj()
        elif callable(obj) and not hasattr(obj, "decide"):
            obj = _FnBot(obj)
    except Exception as exc:
        raise BotError(
            _("bot {0!r}: creating the bot failed: {1}: {2}").format(spec, type(exc).__name__, exc)
        ) from None
    if not callable(getattr(obj, "decide", None)):
        raise BotError(_("bot {0!r}: the object has no decide(state) method").format(spec))
    return obj


# --------------------------------------------------------------------------- JSON-lines bots


class ProcessBot(Bot):
    """A bot in any language, talking JSON lines over stdin/stdout (docs/bots.md)."""

    def __init__(
        self,
        command: str,
        rs: Ruleset,
        objective: str,
        timeout: float = 2.0,
        start_timeout: float = 10.0,
        max_faults: int = 100,
        max_late: int = 3,
    ):
        super().__init__(max_faults=max_faults)
        self.command, self.rs, self.objective = command, rs, objective
        self.timeout, self.max_late = timeout, max_late
        self.late_in_row = 0
        self.name = f"exec:{command}"
        self.buf = b""
        self.next_id = 0
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise BotError(_("bot command {0!r}: {1}").format(command, exc)) from None
        if not argv:
            raise BotError(_("bot command is empty"))
        self.stderr_path = None
        import tempfile

        self._err = tempfile.TemporaryFile()  # noqa: SIM115 - the bot's stderr for its whole life, closed by close()
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, start_new_session=True
            )
        except OSError as exc:
            self._err.close()
            raise BotError(_("bot command {0!r} cannot start: {1}").format(command, exc.strerror or exc)) from None
        try:
            self._send({"type": "hello", "protocol": PROTOCOL, "objective": objective, "ruleset": ruleset_json(rs)})
            reply = self._read_reply(start_timeout)
            if reply is None:
                raise BotError(
                    _("bot {0!r} did not answer the handshake within {1:g} s").format(command, start_timeout)
                )
            if not isinstance(reply, dict) or reply.get("type") != "ready":
                raise BotError(
                    _('bot {0!r}: the handshake answer must be {{"type": "ready"}}, got {1}').format(
                        command, _short(reply)
                    )
                )
            if reply.get("name"):
                self.name = str(reply["name"])[:60]
        except BaseException:
            self.close()
            raise

    # ---- wire

    def _send(self, msg: dict) -> None:
        try:
            self.proc.stdin.write((json.dumps(msg) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._died() from None

    def _died(self) -> BotError:
        try:
            code = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            code = None
        tail = self.stderr_tail()
        return BotError(
            f"bot {self.name!r} exited (code {code}) after {self.decisions} "
            f"decision{'' if self.decisions == 1 else 's'}" + (f"; its stderr ends: {tail}" if tail else "")
        )

    def stderr_tail(self) -> str:
        try:
            self._err.seek(0)
            lines = [ln for ln in self._err.read().decode(errors="replace").splitlines() if ln.strip()]
            return lines[-1][:200] if lines else ""
        except (OSError, ValueError):
            return ""

    def _readline(self, deadline: float) -> bytes | None:
        """One line from the bot, or None when the deadline passes; BotError on EOF."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _w, _x = select.select([fd], [], [], left)
            if not r:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                raise self._died()
            self.buf += chunk
            if len(self.buf) > 1 << 20 and b"\n" not in self.buf:
                self.buf = b""
                raise BotError(_("bot {0!r}: a reply line longer than 1 MiB").format(self.name))
        line, _sep, self.buf = self.buf.partition(b"\n")
        return line

    def _read_reply(self, timeout: float, want_id: int | None = None):
        deadline = time.monotonic() + timeout
        while True:
            line = self._readline(deadline)
            if line is None:
                return None
            if not line.strip():
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                if want_id is None:
                    raise BotError(
                        _("bot {0!r}: the handshake answer is not JSON: {1}").format(
                            self.command, _short(line.decode(errors="replace"))
                        )
                    ) from None
                return _Malformed(line.decode(errors="replace"))
            if want_id is not None and isinstance(msg, dict) and "id" in msg and msg["id"] != want_id:
                continue  # a late answer to an earlier request
            return msg

    # ---- decisions

    def decide(self, state: BotState) -> Any:
        self.next_id += 1
        rid = self.next_id
        self._send({"type": "decide", "id": rid, "state": state.to_json()})
        reply = self._read_reply(self.timeout, rid)
        if reply is None:
            self.late_in_row += 1
            if self.late_in_row >= self.max_late:
                raise BotError(
                    _("bot {0!r} did not answer within {1:g} s {2} times in a row; giving up").format(
                        self.name, self.timeout, self.late_in_row
                    )
                )
            raise _fault("late", f"no answer within {self.timeout:g} s (request {rid})")
        self.late_in_row = 0
        if isinstance(reply, _Malformed):
            raise _fault("malformed", f"not JSON: {_short(reply.text)}")
        if not isinstance(reply, dict):
            raise _fault("malformed", f"not a JSON object: {_short(reply)}")
        state.check_reply(reply)
        return reply

    def choose(self, state: BotState) -> Action:
        self.decisions += 1
        try:
            return state.coerce(self.decide(state))
        except BotError as exc:
            kind = getattr(exc, "kind", None)
            if kind is None:
                raise  # the bot died or gave up: the evaluation cannot go on
            self.fault(kind, str(exc))
        return state.fallback()

    def close(self) -> None:
        p = getattr(self, "proc", None)
        if p is None:
            return
        try:
            self._close_proc(p)
        finally:
            self._err.close()  # the temporary file that holds the bot's stderr
            self.proc = None

    def _close_proc(self, p) -> None:
        if p.poll() is None:
            try:
                p.stdin.write(b'{"type": "bye"}\n')
                p.stdin.flush()
            except (OSError, ValueError):
                pass
        with contextlib.suppress(OSError, ValueError):
            p.stdin.close()
        try:
            p.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                p.kill()
            p.wait()
        with contextlib.suppress(OSError, ValueError):
            p.stdout.close()

    def __del__(self):
        with contextlib.suppress(Exception):
            self.close()


# --------------------------------------------------------------------------- policies (RL)


class PolicyBot:
    """A policy from the reinforcement-learning world, asked as a Python bot:
    ``policy(observation, mask)`` returns an action number (both of
    :class:`thousand.analysis.observation.Encoding`). An answer that is no legal action's
    number is an ``illegal`` fault (the fallback action is played); the timer and the
    fault counts are :class:`PythonBot`'s. ``deterministic`` is the policy's own attribute
    (True unless it says otherwise)."""

    def __init__(self, policy, rs: Ruleset, players: int = 2):
        self.policy = policy
        self.encoding = Encoding(rs, players)
        self.deterministic = bool(getattr(policy, "deterministic", True))

    def decide(self, state: BotState) -> Action:
        obs, mask = self.encoding.of_state(state)
        k = self.policy(obs, mask)
        a = self.encoding.action(k, state.legal)
        if a is None:
            raise _fault("illegal", f"action {_short(k)} is not marked in the mask")
        return a

    def new_game(self) -> None:
        f = getattr(self.policy, "new_game", None)
        if callable(f):
            f()


def load_policy(spec: str, rs: Ruleset, players: int = 2, timeout: float = 2.0) -> Bot:
    """``policy:MODULE:ATTR`` or ``policy:path/to/file.py:ATTR``: a callable on
    (observation, mask), or a class making one (called with no arguments)."""
    target = spec[len("policy:") :].strip()
    obj = load_python_object(target, need_decide=False)
    if isinstance(obj, type):
        try:
            obj = obj()
        except Exception as exc:
            raise BotError(
                _("bot {0!r}: creating the bot failed: {1}: {2}").format(spec, type(exc).__name__, exc)
            ) from None
    if not callable(obj):
        raise BotError(_("bot {0!r}: a policy is a callable on (observation, mask)").format(spec))
    try:
        inspect.signature(obj).bind(None, None)
    except TypeError:
        raise BotError(_("bot {0!r}: a policy takes two arguments, (observation, mask)").format(spec)) from None
    except ValueError:  # no signature to read (a builtin): taken as it is
        pass
    return PythonBot(PolicyBot(obj, rs, players), spec, timeout=timeout)


class _Malformed:
    def __init__(self, text: str):
        self.text = text


def ruleset_json(rs: Ruleset) -> dict:
    if getattr(rs, "game", None) == "poker":
        return {
            "name": rs.name,
            "hash": rs.hash,
            "game": "poker",
            "dice": rs.dice,
            "faces": rs.faces,
            "rolls": rs.rolls,
            "lock_kept": rs.lock_kept,
            "three_of_a_kind": rs.three_of_a_kind,
            "straights": rs.straights,
            "tie_break": rs.tie_break,
            "toml": rs.to_toml(),
        }
    return {
        "name": rs.name,
        "hash": rs.hash,
        "dice": rs.dice,
        "faces": rs.faces,
        "goal": rs.goal,
        "unit": rs.unit,
        "keep": rs.keep,
        "hot_dice": rs.hot_dice,
        "open_min": rs.open_min,
        "toml": rs.to_toml(),
    }


# --------------------------------------------------------------------------- loading


def load_bot(
    spec: str,
    rs: Ruleset,
    objective: str = "duel",
    tables_dir: str | None = None,
    seed: int = 0,
    timeout: float = 2.0,
    oracles: dict | None = None,
    players: int = 2,
) -> Bot:
    """A bot from its spec: a built-in (``optimal``, ``race``, ``hold:N``, ``cautious``,
    ``random``), ``exec:COMMAND`` (a JSON-lines bot), ``module:attr`` /
    ``path/to/file.py:attr`` (a Python bot), ``policy:MODULE:ATTR`` (a callable on
    (observation, mask) of :class:`thousand.analysis.observation.Encoding` for ``players``)
    or ``openspiel:MODULE:ATTR`` (an OpenSpiel bot for Pig, :mod:`thousand.analysis.openspiel`)."""
    spec = spec.strip()
    if spec in ("optimal", "race"):
        from .oracle import Oracle

        oracles = {} if oracles is None else oracles
        # optimal plays the objective's own table against opponents; race (or alone) the race's
        obj = objective if spec == "optimal" and objective_named(objective).opponents else "race"
        if obj not in oracles:
            oracles[obj] = Oracle(rs, obj, tables_dir)
        return TableBot(oracles[obj], spec, tables_dir)
    if spec.startswith("hold:"):
        try:
            n = int(spec[5:])
        except ValueError:
            raise BotError(_("bot {0!r}: hold:N needs a whole number N").format(spec)) from None
        if n < 0:
            raise BotError(_("bot {0!r}: hold:N needs N >= 0 points").format(spec))
        return HoldBot(n)
    if spec == "cautious":
        return CautiousBot()
    if spec == "random" or spec.startswith("random:"):
        s = seed
        if spec.startswith("random:"):
            try:
                s = int(spec[7:])
            except ValueError:
                raise BotError(_("bot {0!r}: random:SEED needs a whole number").format(spec)) from None
        return RandomBot(s)
    if spec.startswith("exec:"):
        return ProcessBot(spec[5:].strip(), rs, objective, timeout=timeout)
    if spec.startswith("openspiel:"):
        # an OpenSpiel Bot, or ATTR(game, player_id) making one, for OpenSpiel's pig
        from .openspiel import OpenSpielBot, openspiel_pig

        game = openspiel_pig(rs, spec)
        return PythonBot(OpenSpielBot(load_python_object(spec[10:].strip(), need_decide=False), game), spec, timeout)
    if spec.startswith("policy:"):
        # a lone player (the race) sees itself alone
        return load_policy(spec, rs, players if objective_named(objective).opponents else 1, timeout)
    if ":" in spec:
        return PythonBot(load_python_object(spec), spec, timeout=timeout)
    raise BotError(
        _(
            "unknown bot {0!r}: use one of {1}, exec:COMMAND, policy:MODULE:ATTR, openspiel:MODULE:ATTR, module:attr "
            "or path/to/file.py:attr"
        ).format(spec, ", ".join(BUILTINS))
    )


def is_builtin(spec: str) -> bool:
    s = spec.strip()
    return s in ("optimal", "race", "cautious", "random") or s.startswith("hold:") or s.startswith("random:")


__all__ = ["Action", "BotState", "Bot", "PolicyBot", "load_bot", "coerce_action", "fallback"]
