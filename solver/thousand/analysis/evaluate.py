"""Validate a bot against the optimum: the report of ``thousand evaluate``.

It puts together the jobs of their own modules: the table's values of every action
(:mod:`thousand.analysis.oracle`), the exact evaluation (:mod:`thousand.analysis.exact`), Monte Carlo
games (:mod:`thousand.analysis.montecarlo`) and the blunders (:mod:`thousand.analysis.blunders`): the
decisions the bot took, valued by the table, with the ``thousand advise`` command line
that shows each of the worst.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from thousand.base.choices import SEATS
from thousand.base.errors import ThousandError
from thousand.base.objectives import objective as objective_named
from thousand.engine.turn import TurnRules
from thousand.rules.ruleset import Ruleset

from .blunders import Blunders
from .bots import Bot, BotState, advise_command, load_bot
from .exact import EXACT_BUDGET, BudgetExceeded, exact_duel, exact_race
from .montecarlo import MCResult, _mean_ci_any, _Moments, fast_mc, mc_duel, mc_race, wilson
from .oracle import Oracle

__all__ = ["BEST_RESPONSE_PAIRS", "BLUNDER_SWEEP_BUDGET", "SAMPLED_TURNS", "report_blunders", "run_evaluation"]

BLUNDER_SWEEP_BUDGET = 50_000  # decision states of the sweep whose blunders are also valued
# the duels whose best response evaluate computes unasked (Pig to 100: 10,000 pairs, about a minute)
BEST_RESPONSE_PAIRS = 10_000


def run_evaluation(
    rs: Ruleset,
    bot_spec: str,
    opp_spec: str = "optimal",
    objective: str = "duel",
    games: int = 2000,
    seed: int = 1,
    exact: bool = True,
    budget: int = EXACT_BUDGET,
    worst: int = 5,
    timeout: float = 2.0,
    tables_dir: str | None = None,
    overrides: tuple[str, ...] = (),
    progress: bool = True,
    blunder_games: int = 500,
    best_response: bool | None = False,
) -> dict:
    """The whole evaluation: {'json': ..., 'text': ..., 'exact': ExactResult|None, 'mc': MCResult|None,
    'blunders': Blunders}. ``best_response``: with the exact duel, also the exact best
    response to the bot in each seat (:mod:`thousand.analysis.exploit`); None: where the
    duel has at most :data:`BEST_RESPONSE_PAIRS` state pairs (Pig to 100 takes about a minute)."""
    race = not objective_named(objective).opponents  # the player alone: expected turns
    oracles: dict = {}
    oracle = Oracle(rs, objective, tables_dir, progress=progress)
    oracles[objective] = oracle
    engine = TurnRules(rs)
    bots: list[Bot] = []
    try:
        bot = load_bot(bot_spec, rs, objective, tables_dir, seed, timeout, oracles)
        bots.append(bot)
        opp = None
        if not race:
            opp = (
                bot
                if opp_spec.strip() == bot_spec.strip() and bot.deterministic
                else load_bot(opp_spec, rs, objective, tables_dir, seed + 7919, timeout, oracles)
            )
            if opp is not bot:
                bots.append(opp)
        out: dict = {
            "ruleset": rs.name,
            "ruleset_hash": rs.hash,
            "objective": objective,
            "bot": bot.name,
            "opponent": None if race else opp.name,
        }
        lines = [
            f"{rs.name}: bot {bot.name}"
            + ("" if race else f" against {opp.name}")
            + f" ({'expected turns to win alone' if race else 'P(bot wins)'})"
        ]
        optimum = oracle.solution.start_value()
        ctx = _Run(
            rs, objective, overrides, engine, bot, opp, bot_spec, opp_spec, oracle, race, optimum, tables_dir, progress
        )

        sweep_blunders = Blunders(oracle, keep=worst)
        ex = _exact_part(ctx, budget, sweep_blunders, out, lines) if exact else None
        if not exact:
            out["exact"] = {"skipped": "--no-exact"}
        elif ex is not None and not race and best_response is not False:
            pairs = len(oracle.solution.index) ** 2
            if best_response or pairs <= BEST_RESPONSE_PAIRS:
                _best_response_part(ctx, budget, out, lines)
            else:
                out["exact"]["best_response"] = {"skipped": f"{pairs:,} state pairs; --best-response computes it"}
                lines.append(f"best response: not computed ({pairs:,} state pairs; --best-response computes it)")
        blunders = Blunders(oracle, keep=worst)
        mc = _monte_carlo_part(ctx, games, seed, blunder_games, blunders, out, lines) if games else None
        src = blunders if blunders.decisions else sweep_blunders
        _blunder_part(ctx, src, src is blunders, out, lines)
        faults = {b.name: {"counts": b.faults.counts, "examples": b.faults.examples} for b in bots if b.faults.total}
        if faults:
            out["faults"] = faults
            for name, f in faults.items():
                lines.append(
                    f"faults of {name}: "
                    + ", ".join(f"{k} {v}" for k, v in f["counts"].items())
                    + f" (first: {f['examples'][0]})"
                )
        return {
            "json": out,
            "text": "\n".join(lines),
            "exact": ex,
            "mc": mc,
            "blunders": src,
            "sweep_blunders": sweep_blunders,
        }
    finally:
        for b in bots:
            b.close()


@dataclass
class _Run:
    """What every part of one evaluation reads."""

    rs: Ruleset
    objective: str
    overrides: tuple[str, ...]
    engine: TurnRules
    bot: Bot
    opp: Bot | None
    bot_spec: str
    opp_spec: str
    oracle: Oracle
    race: bool
    optimum: float
    tables_dir: str | None
    progress: bool


def _exact_part(ctx: _Run, budget: int, sweep_blunders, out: dict, lines: list[str]):
    """The bot's exact value in both seats (where it fits ``budget``), into ``out`` and ``lines``."""
    rs, objective, overrides, race, optimum = ctx.rs, ctx.objective, ctx.overrides, ctx.race, ctx.optimum
    engine, bot, opp, opp_spec, oracle, progress = ctx.engine, ctx.bot, ctx.opp, ctx.opp_spec, ctx.oracle, ctx.progress
    ex, why = _exact(engine, bot, opp, opp_spec, oracle, race, budget, sweep_blunders, progress)
    if ex is None:
        lines.append(f"exact: skipped ({why}); Monte Carlo only")
        out["exact"] = {"skipped": why}
    else:
        ex.optimum = optimum
        out["exact"] = ex.to_json()
        if race:
            lines.append(
                f"exact: expected turns {ex.value_first:.6f}, optimum {optimum:.6f}, "
                f"given up {ex.value_first - optimum:+.6f} turns "
                f"({ex.states} states, {ex.decisions} decision states, {ex.seconds:.1f} s)"
            )
        else:
            lines.append(
                f"exact: P(bot wins) moving first {ex.value_first:.6f}, second "
                f"{ex.value_second:.6f}; optimal vs optimal: first {optimum:.6f}, "
                f"second {1 - optimum:.6f}"
            )
            lines.append(f"       ({ex.states} game states, {ex.decisions} decision states, {ex.seconds:.1f} s)")
        if ex.truncated > 1e-12:
            lines.append(
                f"       note: {ex.truncated:.2e} of probability cut off in very long turns (counted as busts)"
            )
        if sweep_blunders.decisions:
            out["exact"]["blunders"] = _blunder_json(sweep_blunders, rs, objective, overrides, race, per_game=False)
    return ex


def _best_response_part(ctx: _Run, budget: int, out: dict, lines: list[str]) -> None:
    """The exact best response to the bot in each seat and its gap to the equilibrium's
    chance there, into ``out["exact"]["best_response"]`` and ``lines``."""
    from .exploit import best_response

    if ctx.progress:
        sys.stderr.write("best response to the bot (policy rounds against its fixed policy)...\n")
        sys.stderr.flush()
    try:
        br = best_response(ctx.engine, ctx.bot, ctx.oracle, budget)
    except BudgetExceeded:
        out["exact"]["best_response"] = {"skipped": f"more than {budget:,} decision states"}
        return
    except ThousandError as exc:  # what best_response does not cover (equal turns), in its words
        out["exact"]["best_response"] = {"skipped": str(exc)}
        lines.append(f"best response: skipped ({exc})")
        return
    out["exact"]["best_response"] = br.to_json()
    lines.append(
        f"best response: an opponent who knows the bot's policy wins {br.first:.6f} moving first "
        f"and {br.second:.6f} second"
    )
    lines.append(
        f"       (the equilibrium: {br.equilibrium_first:.6f} and {1 - br.equilibrium_first:.6f}; "
        f"exploitability {br.gap_first:+.6f} and {br.gap_second:+.6f}; {br.rounds} policy rounds, {br.seconds:.1f} s)"
    )


def _monte_carlo_part(ctx: _Run, games: int, seed: int, blunder_games: int, blunders, out: dict, lines: list[str]):
    """``games`` simulated games with the bot in each seat (the compiled simulator where it
    plays these bots), and the blunders of a smaller run of the Python game loop."""
    rs, objective, race, engine, bot, opp = ctx.rs, ctx.objective, ctx.race, ctx.engine, ctx.bot, ctx.opp
    bot_spec, opp_spec, tables_dir, progress = ctx.bot_spec, ctx.opp_spec, ctx.tables_dir, ctx.progress
    mc = fast_mc(rs, objective, bot_spec, opp_spec, games, seed, tables_dir)
    if mc is not None:
        # blunders from a smaller run of the Python game loop
        g2 = min(games, blunder_games)
        if race:
            mc_race(engine, bot, g2, seed, blunders)
        else:
            mc_duel(engine, bot, opp, g2, seed, blunders)
    elif race:
        mc = mc_race(engine, bot, games, seed, blunders, progress, blunder_games)
    else:
        mc = mc_duel(engine, bot, opp, games, seed, blunders, progress, blunder_games)
    out["monte_carlo"] = (
        mc.to_json(race)
        if not isinstance(mc.turns, _Moments)
        else {
            "games": mc.games,
            "mean_turns": mc.turns.mean,
            "ci95": list(_mean_ci_any(mc.turns)[1:]),
            "seconds": round(mc.seconds, 3),
            "engine": mc.engine,
        }
    )
    speed = mc.games / mc.seconds if mc.seconds > 0 else float("inf")
    if race:
        m, lo, hi = _mean_ci_any(mc.turns)
        lines.append(
            f"Monte Carlo: {mc.games} games, mean turns {m:.4f} (95% CI {lo:.4f} to {hi:.4f})"
            f"{_unf(mc)}; {mc.seconds:.1f} s, {speed:,.0f} games/s ({mc.engine})"
        )
    else:
        lo, hi = wilson(mc.wins, mc.games)
        lines.append(
            f"Monte Carlo: {mc.games} games, bot wins {mc.wins / mc.games:.4f} "
            f"(95% CI {lo:.4f} to {hi:.4f}){_unf(mc)}; {mc.seconds:.1f} s, "
            f"{speed:,.0f} games/s ({mc.engine})"
        )
        for seat, k, n in (
            ("first", mc.first_wins, mc.first_games),
            ("second", mc.second_wins, mc.second_games),
        ):
            if n:
                lo, hi = wilson(k, n)
                lines.append(f"  moving {seat:6}: {n} games, bot wins {k / n:.4f} (95% CI {lo:.4f} to {hi:.4f})")
    return mc


def _blunder_part(ctx: _Run, src, simulated: bool, out: dict, lines: list[str]) -> None:
    """The bot's worst decisions (in the simulated games, else over the exact sweep)."""
    if src.decisions:
        where = (
            f"in the first {len(src.per_game)} simulated games"
            if simulated
            else "over the exact sweep's decision states"
        )
        report_blunders(ctx.rs, src, where, ctx.objective, ctx.overrides, simulated, out, lines)


def report_blunders(
    rs: Ruleset, src: Blunders, where: str, objective: str, overrides, per_game: bool, out: dict, lines: list[str]
) -> None:
    """The blunders' figures, the worst decisions each with the ``thousand advise`` command
    that shows its options, into ``lines``, and the same in ``out["blunders"]``."""
    race = not objective_named(objective).opponents
    lines += _blunder_lines(src, where, race, per_game)
    ws = [w for w in src.worst_sorted() if w[0] > 1e-12]
    if ws:
        lines.append("  worst decisions:")
    for lost, _, st, a, best, _val in ws:
        lines.append(f"  - gave up {lost:.6f}: {_state_text(rs, st)}")
        lines.append(f"      bot: {a.label()}; best: {best.label()}")
        lines.append(f"      $ {advise_command(rs, st, objective, overrides)}")
    out["blunders"] = _blunder_json(src, rs, objective, overrides, race, per_game=per_game)


def _blunder_lines(src, where: str, race: bool, simulated: bool) -> list[str]:
    """The blunders in figures a player reads: mistakes per 100 decisions and the average
    given up per decision first; the sums of the decisions' losses (over all, and per game)
    named as sums: a sum of P(win) losses is not a probability (it passes 1 in a long game)."""
    unit = "turns" if race else "P(win)"
    sums = "summed over the decisions" + ("" if race else ": a sum of losses, not a probability")
    per100 = 100 * src.mistakes / src.decisions
    out = [
        f"blunders {where}: {src.decisions} decisions, {src.mistakes} not optimal ({per100:.1f} per 100); "
        f"on average {src.total / src.decisions:.6f} {unit} given up per decision ({src.total:.6f} {sums})"
    ]
    if simulated and src.per_game:
        pg = np.asarray(src.per_game)
        out.append(f"  a game's decisions summed: mean {pg.mean():.6f}, max {pg.max():.6f} {unit} given up")
    return out


def _unf(mc: MCResult) -> str:
    return f", {mc.unfinished} unfinished (counted as half)" if mc.unfinished else ""


def _state_text(rs: Ruleset, st: BotState) -> str:
    s = f"me {st.me.describe(rs)}"
    if st.seat is not None:
        s += f" ({SEATS[st.seat]} seat)"
    if st.to_beat is not None:
        s += f"; last turn against a finished total of {st.to_beat}"
    elif len(st.opponents) > 1:
        s += "; opponents " + ", ".join(y.describe(rs) for y in st.opponents) + " (in the order they move)"
    elif st.opponent is not None:
        s += f"; opponent {st.opponent.describe(rs)}"
    return s + f"; turn total {st.turn_total}, roll {','.join(map(str, st.roll))}"


def _blunder_json(b: Blunders, rs, objective, overrides, race, per_game: bool) -> dict:
    d = {
        "decisions": b.decisions,
        "not_optimal": b.mistakes,
        "given_up": b.total,
        "worst": [
            {
                "given_up": lost,
                "state": st.to_json(),
                "bot": a.to_json(),
                "best": best.to_json(),
                "advise": advise_command(rs, st, objective, overrides),
            }
            for lost, _, st, a, best, _v in b.worst_sorted()
            if lost > 1e-12
        ],
    }
    if per_game and b.per_game:
        d["per_game_mean"] = float(np.mean(b.per_game))
        d["per_game_max"] = float(np.max(b.per_game))
    return d


SAMPLED_TURNS = 12  # turns enumerated to estimate an exact evaluation's size before it starts


def _decisions_estimate(engine, bot, oracle, race: bool, pairs: int) -> float:
    """The decision states an exact evaluation would ask the bot about, roughly: the mean
    over a few sampled turns (the start, then random states of the table) times the
    states or pairs. It overcounts (not every pair is reached), so the caller refuses only
    well past its budget; cheap next to the evaluation itself."""
    import random

    from .exact import PolicyTurns

    states = list(oracle.solution.index)
    rng = random.Random(0)
    x0 = engine.moves.initial()
    sample = [(x0, None if race else x0)] + [
        (rng.choice(states), None if race else rng.choice(states)) for _ in range(SAMPLED_TURNS - 1)
    ]
    horizon = oracle.solution.last_turn_horizon if engine.rs.equal_turns and not race else None
    probe = PolicyTurns(engine, bot, budget=10**9, horizon=horizon)
    for x, y in sample:
        probe.ends(x, y, seat=None if horizon is None else 0)
    return len(probe.answers) / len(sample) * pairs


def _exact(engine, bot, opp, opp_spec, oracle, race, budget, sweep_blunders, progress):
    """(ExactResult, "") or (None, why skipped)."""
    if not bot.deterministic:
        return None, f"bot {bot.name} is not deterministic"
    if not race and opp is not None and not opp.deterministic:
        return None, f"opponent {opp.name} is not deterministic"
    n_states = len(oracle.solution.index)
    pairs = n_states if race else n_states * n_states
    if pairs > budget:
        return None, f"{pairs:,} {'states' if race else 'state pairs'} exceed the budget of {budget:,} decision states"
    est = _decisions_estimate(engine, bot, oracle, race, pairs)
    if est > 2 * budget:
        return None, f"about {est:,.0f} decision states (sampled) exceed the budget of {budget:,}"
    if progress:
        sys.stderr.write(f"exact evaluation over up to {pairs:,} {'states' if race else 'state pairs'}...\n")
        sys.stderr.flush()
    decisions: list = []
    try:
        if race:
            ex = exact_race(engine, bot, budget, decisions)
        else:
            optimal_opp = opp_spec.strip() == "optimal" and opp is not bot
            ex = exact_duel(engine, bot, None if optimal_opp else opp, oracle, budget, decisions)
    except BudgetExceeded:
        return None, f"more than {budget:,} decision states"
    if len(decisions) <= BLUNDER_SWEEP_BUDGET and not race:
        for st, a in decisions:
            sweep_blunders.record(st, a)
    return ex, ""
