"""Monte Carlo games of any bots, played through the rules of a turn in play
(:class:`thousand.engine.TurnRules`, :func:`thousand.engine.finish_turn`), or by the
compiled simulator (:mod:`thousand.analysis.simulate`) when both players are built in.

Dice: the Python loop draws each die with ``random.Random(seed).randint``; a duel
plays the bot first in even-numbered games and second in odd ones. A game that
lasts :data:`thousand.engine.MAX_TURNS` turns is abandoned and counted as half a win.
"""

from __future__ import annotations

import math
import random
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from thousand.base.errors import ThousandError
from thousand.base.objectives import objective as objective_named
from thousand.engine.player import PlayerState
from thousand.engine.turn import MAX_TURNS, GameStep, TurnEnd, TurnRules, finish_turn, next_turn
from thousand.rules.ruleset import Ruleset

from .blunders import Blunders
from .bots import Bot, BotState, is_builtin

__all__ = ["MCResult", "fast_mc", "mc_duel", "mc_race", "mean_ci", "play_game", "play_turn", "wilson"]


def play_turn(
    engine: TurnRules,
    rng: random.Random,
    bot: Bot,
    x: PlayerState,
    y: PlayerState | None,
    on_decision=None,
    others: tuple[PlayerState, ...] = (),
    seat: int | None = None,
    to_beat: int | None = None,
    tied: int = 0,
) -> TurnEnd:
    """One turn of ``bot`` from ``x`` (against ``y``, and the ``others`` after it; with
    ``equal_turns`` in ``seat``, and in a last turn against the top total ``to_beat`` of
    ``tied`` players), the dice thrown by ``rng``; the bot is asked only where the rules
    leave a choice, and ``on_decision(state, action)`` sees each answer."""
    faces = engine.rs.faces
    s = engine.start(x)
    while True:
        r = engine.after_roll(s, [rng.randint(1, faces) for _ in range(s.dice)])  # after_roll sorts
        if isinstance(r, TurnEnd):
            return r
        legal = engine.legal(r)
        if len(legal) == 1:
            a = legal[0]
        else:
            st = BotState.at(engine, r, y, others, seat, to_beat, tied)
            a = bot.choose(st)
            if on_decision is not None:
                on_decision(st, a)
        s = engine.apply(r, a)
        if isinstance(s, TurnEnd):
            return s


def play_game(engine: TurnRules, players: int, turn) -> list[int] | None:
    """One game of ``players`` seats from the start; ``turn(mover, states, seat, to_beat,
    tied)`` plays the turn of seat ``mover`` and returns its :class:`TurnEnd` (``seat`` is
    the mover's with ``equal_turns``, else None; ``to_beat`` the top final total in a last
    turn, held by ``tied`` players; a finished player appears in ``states`` with its final
    total as its score). Returns the winners (several share a top under ``equal_turns``),
    or None for a game abandoned after :data:`MAX_TURNS` turns; the game's course is
    :func:`thousand.engine.next_turn`'s."""
    moves = engine.moves
    seated = bool(engine.rs.equal_turns)
    step = GameStep(None, (moves.initial(),) * players)
    for _turn in range(MAX_TURNS):
        last = bool(step.finished)
        end = turn(
            step.mover,
            step.players,
            step.mover if seated else None,
            step.to_beat if last else None,
            step.tied if last else 0,
        )
        step = next_turn(moves, step, end)
        if step.winners is not None:
            return list(step.winners)
    return None


def wilson(k: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion k/n."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


@dataclass
class MCResult:
    games: int = 0
    first_games: int = 0
    first_wins: float = 0.0
    second_games: int = 0
    second_wins: float = 0.0
    unfinished: int = 0
    turns: list = field(default_factory=list)
    seconds: float = 0.0
    engine: str = "python"

    @property
    def wins(self) -> float:
        return self.first_wins + self.second_wins

    def to_json(self, race: bool) -> dict:
        if race:
            m, lo, hi = mean_ci(self.turns)
            return {
                "games": self.games,
                "mean_turns": m,
                "ci95": [lo, hi],
                "unfinished": self.unfinished,
                "seconds": round(self.seconds, 3),
                "engine": self.engine,
            }
        out = {
            "games": self.games,
            "win_rate": self.wins / max(self.games, 1),
            "ci95": list(wilson(self.wins, self.games)),
            "unfinished": self.unfinished,
            "seconds": round(self.seconds, 3),
            "engine": self.engine,
        }
        for seat, k, n in (
            ("first", self.first_wins, self.first_games),
            ("second", self.second_wins, self.second_games),
        ):
            if n:
                out[f"as_{seat}"] = {"games": n, "win_rate": k / n, "ci95": list(wilson(k, n))}
        return out


def mean_ci(xs) -> tuple[float, float, float]:
    n = len(xs)
    if n == 0:
        return (float("nan"),) * 3
    a = np.asarray(xs, dtype=float)
    m = float(a.mean())
    s = float(a.std(ddof=1)) if n > 1 else 0.0
    h = 1.959963984540054 * s / math.sqrt(n)
    return m, m - h, m + h


def _games(res: MCResult, games: int, blunders: Blunders | None, blunder_games: int | None, progress: bool):
    """Yield ``(game number, blunder recorder or None)`` for each game, keeping the books
    around it: blunders valued in the first ``blunder_games`` games only, the game count,
    progress on stderr and the time."""
    t0 = last = time.perf_counter()
    rec = blunders.record if blunders is not None else None
    for g in range(games):
        if blunder_games is not None and g == blunder_games:
            rec, blunders = None, None
        yield g, rec
        if blunders is not None:
            blunders.end_game()
        res.games += 1
        if progress and time.perf_counter() - last > 1.0:
            last = time.perf_counter()
            sys.stderr.write(f"\rMonte Carlo: {g + 1}/{games} games   ")
            sys.stderr.flush()
    if progress and time.perf_counter() - t0 > 1.0:
        sys.stderr.write("\n")
    res.seconds = time.perf_counter() - t0


def mc_duel(
    engine: TurnRules,
    bot: Bot,
    opp: Bot,
    games: int,
    seed: int,
    blunders: Blunders | None = None,
    progress: bool = False,
    blunder_games: int | None = None,
) -> MCResult:
    """``games`` games, the bot first in even-numbered ones and second in odd ones."""
    rng = random.Random(seed)
    res = MCResult()
    for g, rec in _games(res, games, blunders, blunder_games, progress):
        bot_first = g % 2 == 0
        bot.new_game()
        if opp is not bot:
            opp.new_game()
        players = [bot, opp] if bot_first else [opp, bot]

        def turn(mover, states, seat, to_beat, tied):
            p = players[mover]
            return play_turn(
                engine,
                rng,
                p,
                states[mover],
                states[1 - mover],
                rec if p is bot else None,
                seat=seat,
                to_beat=to_beat,
                tied=tied,
            )

        winners = play_game(engine, 2, turn)
        bot_seat = 0 if bot_first else 1
        won = 0.5 if winners is None else (1.0 / len(winners) if bot_seat in winners else 0.0)
        if winners is None:
            res.unfinished += 1
        if bot_first:
            res.first_games += 1
            res.first_wins += won
        else:
            res.second_games += 1
            res.second_wins += won
    return res


def mc_race(
    engine: TurnRules,
    bot: Bot,
    games: int,
    seed: int,
    blunders: Blunders | None = None,
    progress: bool = False,
    blunder_games: int | None = None,
) -> MCResult:
    """``games`` games of the bot alone: the turns it needs to win."""
    rng = random.Random(seed)
    res = MCResult()
    moves = engine.moves
    x0 = moves.initial()
    for _g, rec in _games(res, games, blunders, blunder_games, progress):
        bot.new_game()
        x = x0
        for k in range(1, MAX_TURNS + 1):
            after = finish_turn(moves, (x,), 0, play_turn(engine, rng, bot, x, None, rec))
            if after.won:
                res.turns.append(k)
                break
            x = after.players[0]
        else:
            res.unfinished += 1
    return res


def fast_mc(
    rs: Ruleset, objective: str, bot: str, opp: str, games: int, seed: int, tables_dir: str | None
) -> MCResult | None:
    """Monte Carlo by the compiled simulator (``thousand.analysis.simulate``), when it is there and
    takes these bots and rules; else None."""
    alone = not objective_named(objective).opponents
    if not (is_builtin(bot) and (alone or is_builtin(opp))):
        return None
    try:
        from . import simulate  # type: ignore[attr-defined]
    except ImportError:
        return None
    try:
        if alone:
            r = simulate.simulate_race(rs, bot, games, seed, tables_dir=tables_dir)
            res = MCResult(games=r.games, seconds=r.seconds, engine="compiled")
            res.turns = _Moments(r.games, r.mean_turns, r.std_turns)
            return res
        half = games // 2
        a = simulate.simulate_duel(rs, bot, opp, games - half, seed, tables_dir=tables_dir)
        b = simulate.simulate_duel(rs, opp, bot, half, seed + 1, tables_dir=tables_dir)
        # unfinished games (cut by the simulator's turn limit) count one half, as in the Python loop
        return MCResult(
            games=a.games + b.games,
            first_games=a.games,
            first_wins=a.first_wins + 0.5 * a.unfinished,
            second_games=b.games,
            second_wins=b.second_wins + 0.5 * b.unfinished,
            unfinished=a.unfinished + b.unfinished,
            seconds=a.seconds + b.seconds,
            engine="compiled",
        )
    except ThousandError:
        return None
    except Exception:  # an unfinished simulator must never break the evaluation
        return None


class _Moments(list):
    """Mean and standard deviation of many samples, standing in for the list of samples."""

    def __init__(self, n: int, mean: float, std: float):
        super().__init__()
        self.n, self.mean, self.std = n, mean, std


def _mean_ci_any(turns) -> tuple[float, float, float]:
    if isinstance(turns, _Moments):
        h = 1.959963984540054 * turns.std / math.sqrt(max(turns.n, 1))
        return turns.mean, turns.mean - h, turns.mean + h
    return mean_ci(turns)
