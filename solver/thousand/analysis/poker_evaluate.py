"""How far a poker-dice bot is from the equilibrium: ``thousand evaluate poker --bot SPEC``.

The bot takes one seat; every other seat plays the solved equilibrium (which does not
know the bot is there: later players react to the hand it ends with, as they would to
anyone's). The bot also plays every replay it ties into. Exactly, with ``W(m, j)`` the
bot's chance in seat ``j`` of an m-player game::

    W(m, j) = Σ_(b, k) P_m,j(b, k) · Σ_h f_bot(h | b, k, m - j) · u_bot(h)

where ``P_m,j`` is the distribution of the best hand ``b`` and its ``k`` holders met by
seat ``j`` under equilibrium play of the earlier seats, ``f_bot`` the bot's final-hand
distribution (from asking it at every turn state its own play reaches), and ``u_bot``
the chance of winning from the end of its turn: 0 below ``b``; as a holder in place
``q`` of ``k'`` holders with ``n`` still to play, ``B_q[n, k'](b)`` with::

    B_q[0, 1] = 1,   B_q[0, k'] = W(k', q),
    B_q[n, k'](b) = P_<(b, k', n) · B_q[n-1, k'](b) + P_=(b, k', n) · B_q[n-1, k'+1](b)

(``P_<``, ``P_=`` the equilibrium movers' chances to end below or level). ``W(m, j)``
appears on its own right side through the all-tie replay; it is affine in itself
(x = A + p·x) and solved so. Every answer is also valued by the optimal turn: the
decisions that cost the most win probability (assuming optimal play afterwards), times how
often they arise in the main game, are listed. Monte Carlo games with the bot in each seat
cross-check the exact figures, and are the only figures where the bot would be asked
more than ``budget`` times.
"""

from __future__ import annotations

import math
import random
import time
from collections import defaultdict
from itertools import combinations_with_replacement

import numpy as np

from thousand.engine.poker import KEEP_ID, KEEPS, ROLL_ID, _minus, throw_probability
from thousand.rules.poker import PokerRuleset
from thousand.solvers.poker_advice import Situation

from .poker_bots import OptimalPokerBot, PokerBotState, load_poker_bot, play_game

__all__ = ["EXACT_BUDGET", "BotTurns", "bot_seat_values", "evaluate_poker"]

EXACT_BUDGET = 400_000


def _throws(n: int):
    return [(o, throw_probability(o)) for o in combinations_with_replacement(range(1, 7), n)]


class _OverBudget(Exception):
    pass


class BotTurns:
    """The bot's final-hand distribution in each situation, asking it at every turn state
    its own play reaches (cached; at most ``budget`` questions in all), and the loss of
    each answer against the optimal turn."""

    def __init__(self, rs: PokerRuleset, sol, bot, budget: int):
        self.rs, self.sol, self.bot, self.budget = rs, sol, bot, budget
        self.opt = OptimalPokerBot(sol)
        self.asked = 0
        self._final: dict = {}

    def final(self, best, holders: int, after: int):
        """(P(final strength) (H,), [(loss, mass, state, reroll, best reroll)]) in one situation."""
        key = (best, holders, after)
        if key in self._final:
            return self._final[key]
        rs, sol = self.rs, self.sol
        u_roll = sol.utility(best, holders, after + 1)[sol.strength_of_roll]
        opt = self.opt.turn_for(Situation(best, holders, after))
        to_beat = None if best is None else rs.hands.by_strength[best].dice
        states = {((), d): p for d, p in _throws(5)}
        final = np.zeros(sol.H)
        losses = []
        for throw in range(1, rs.rolls + 1):
            nxt: dict = defaultdict(float)
            for (locked, free), mass in states.items():
                dice = tuple(sorted(locked + free))
                if throw == rs.rolls:
                    final[sol.strength_of_roll[ROLL_ID[dice]]] += mass
                    continue
                self.asked += 1
                if self.asked > self.budget:
                    raise _OverBudget
                st = PokerBotState(rs, dice, throw, free, to_beat, holders, after)
                reroll = self.bot.choose(st)
                C = opt.C[throw + 1][0]

                def val(x):
                    return float(u_roll[ROLL_ID[dice]]) if not x else float(C[KEEP_ID[_minus(dice, x)]])

                a = int(opt.action[throw][0, opt.shape.state_of(locked, free)])
                best_x = () if a < 0 else _minus(dice, KEEPS[a])
                loss = val(best_x) - val(reroll)
                if loss > 1e-12:
                    losses.append((loss, mass, st, reroll, best_x))
                if not reroll:
                    final[sol.strength_of_roll[ROLL_ID[dice]]] += mass
                    continue
                keep = _minus(dice, reroll)
                for o, p in _throws(len(reroll)):
                    nxt[(keep, o) if rs.lock_kept else ((), tuple(sorted(keep + o)))] += mass * p
            states = nxt
        self._final[key] = (final, losses)
        return final, losses


def bot_seat_values(turns: BotTurns, M: int) -> dict:
    """``W(m, j)`` of the module docstring for every m <= M and seat j < m."""
    sol, H = turns.sol, turns.sol.H
    idx = np.arange(H)
    W = {(1, 0): 1.0}

    def B(q, n, k, x, m, j):
        """The bot's chance as holder in place q of k holders, n still to play (vector over b)."""
        if n == 0:
            if k == 1:
                return np.ones(H)
            return np.full(H, x if (k, q) == (m, j) else W[(k, q)])
        F = sol.movers(n, k)[1]
        below = idx[None, :] < idx[:, None]
        plo, peq = (F * below).sum(axis=1), F[idx, idx]
        return plo * B(q, n - 1, k, x, m, j) + peq * B(q, n - 1, k + 1, x, m, j)

    for m in range(2, M + 1):
        for j in range(m):
            D = sol.situations(m, j)
            n = m - j

            def value(x):
                total = 0.0
                for k, d in D.items():
                    if d is None:
                        f, _ = turns.final(None, 0, n - 1)
                        total += float(f @ B(0, n - 1, 1, x, m, j))
                        continue
                    lead = B(0, n - 1, 1, x, m, j)
                    tie = B(k, n - 1, k + 1, x, m, j)
                    for b in np.flatnonzero(d > 1e-15):
                        f, _ = turns.final(int(b), k, n - 1)
                        u = np.where(idx > b, lead, 0.0)
                        u[b] = tie[b]
                        total += float(d[b]) * float(f @ u)
                return total

            a = value(0.0)
            p = value(1.0) - a
            W[(m, j)] = a / (1.0 - p)
    return W


def evaluate_poker(
    rs: PokerRuleset,
    sol,
    spec: str,
    players: int,
    games: int,
    seed: int,
    exact: bool,
    budget: int,
    worst: int,
    timeout: float,
) -> dict:
    """The report of ``thousand evaluate poker``: {"json": ..., "text": ...}."""
    t0 = time.perf_counter()
    bot = load_poker_bot(spec, rs, sol, seed=seed, timeout=timeout)
    try:
        V = sol.seat_values[players]
        exact_ok = exact and bot.deterministic
        W, worst_list, asked = None, [], None
        if exact_ok:
            turns = BotTurns(rs, sol, bot, budget)
            try:
                W = bot_seat_values(turns, players)
                asked = turns.asked
                weighted = []
                for j in range(players):  # the worst decisions of the main game, weighted by their reach
                    for k, d in sol.situations(players, j).items():
                        pairs = (
                            [(None, 1.0)] if d is None else [(int(b), float(d[b])) for b in np.flatnonzero(d > 1e-15)]
                        )
                        for b, w in pairs:
                            for lo, mass, st, x, bx in turns.final(b, k, players - j - 1)[1]:
                                weighted.append((w * mass * lo, lo, w * mass, st, x, bx))
                weighted.sort(key=lambda t: -t[0])
                worst_list = [
                    {
                        "state": st.to_json(),
                        "reroll": list(x),
                        "best_reroll": list(bx),
                        "loss": lo,
                        "reach": reach,
                        "weighted": w,
                    }
                    for w, lo, reach, st, x, bx in weighted[:worst]
                ]
            except _OverBudget:
                exact_ok = False
        seats = [
            {"seat": i + 1, "optimal": float(V[i]), "exact": W[(players, i)] if W else None} for i in range(players)
        ]
        rng = random.Random(seed)
        opt = OptimalPokerBot(sol)
        for i, s in enumerate(seats):
            if games:
                lineup = [opt] * players
                lineup[i] = bot
                wins = sum(play_game(rs, lineup, rng) == i for _ in range(games))
                p = wins / games
                half = 1.96 * math.sqrt(max(p * (1 - p), 1e-12) / games)
                s["monte_carlo"] = {"games": games, "win_probability": p, "interval": [p - half, p + half]}
            s["loss"] = (
                (s["optimal"] - s["exact"])
                if s["exact"] is not None
                else (s["optimal"] - s["monte_carlo"]["win_probability"] if games else None)
            )
        faults = {"total": bot.faults.total, "counts": bot.faults.counts, "examples": bot.faults.examples}
    finally:
        bot.close()
    mean_loss = [s["loss"] for s in seats if s["loss"] is not None]
    data = {
        "ruleset": rs.name,
        "ruleset_hash": rs.hash,
        "bot": spec,
        "players": players,
        "method": "exact" if exact_ok else "monte_carlo",
        "decisions_asked": asked if exact_ok else None,
        "seats": seats,
        "mean_loss": sum(mean_loss) / len(mean_loss) if mean_loss else None,
        "worst": worst_list,
        "faults": faults,
        "seconds": round(time.perf_counter() - t0, 3),
    }
    return {"json": data, "text": _render(data, exact, bot.deterministic)}


def _shown(x: float) -> float:
    """A loss for display: rounding noise of an exact zero shown as 0, not -0.000000."""
    return x if abs(x) > 5e-13 else 0.0


def _render(d: dict, exact: bool, deterministic: bool) -> str:
    lines = [
        f"{d['ruleset']}, {d['players']} players: bot {d['bot']} in each seat in turn, the others "
        "playing the equilibrium"
    ]
    if d["method"] == "exact":
        lines.append(
            f"exact: the bot was asked at every turn state its play reaches ({d['decisions_asked']} decisions)"
        )
    elif exact and not deterministic:
        lines.append("the bot is not deterministic: Monte Carlo only")
    elif exact:
        lines.append("too many decisions for the exact evaluation (raise --budget): Monte Carlo only")
    lines.append("  seat  optimal   bot        loss       Monte Carlo (95%)")
    for s in d["seats"]:
        ex = f"{s['exact']:.6f}" if s["exact"] is not None else "    -   "
        mc = s.get("monte_carlo")
        mc_t = (
            (f"{mc['win_probability']:.4f} [{mc['interval'][0]:.4f}, {mc['interval'][1]:.4f}] ({mc['games']} games)")
            if mc
            else "-"
        )
        loss = f"{_shown(s['loss']):+.6f}" if s["loss"] is not None else "   -"
        lines.append(f"  {s['seat']:>4}  {s['optimal']:.6f}  {ex}   {loss}  {mc_t}")
    if d["mean_loss"] is not None:
        lines.append(f"mean loss in win probability over the seats: {_shown(d['mean_loss']):.6f}")
    if d["worst"]:
        lines.append("worst decisions (win probability lost x how often the decision arises):")
        for w in d["worst"]:
            st = w["state"]
            beat = f"to beat {st['to_beat_hand']}" if st["to_beat"] else "first to play"
            you = "stop" if not w["reroll"] else "re-roll " + ",".join(map(str, w["reroll"]))
            best = "stop" if not w["best_reroll"] else "re-roll " + ",".join(map(str, w["best_reroll"]))
            lines.append(
                f"  {','.join(map(str, st['dice']))} after throw {st['throw']} ({beat}, "
                f"{st['after']} after): {you}, best {best}; loses {w['loss']:.4f} "
                f"(arises with P {w['reach']:.2e})"
            )
    f = d["faults"]
    lines.append(
        "faults: none"
        if not f["total"]
        else f"faults: {f['total']} ({', '.join(f'{k} {v}' for k, v in f['counts'].items())}); "
        f"first: {f['examples'][0]}"
    )
    return "\n".join(lines)
