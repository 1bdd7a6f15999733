"""What the approximations for three players and more cost, measured exactly.

For each ruleset: the exact equilibrium (thousand.solvers.nplayer), then for each method of
thousand.solvers.approx two exact policy evaluations (thousand.solvers.nplayer.evaluate_profile, no
simulation): every seat playing the method, and one seat playing it among equilibrium
players (each seat in turn). The loss of a seat is its equilibrium chance minus its chance
with the approximation. The equilibrium itself is evaluated the same way as a check (its
mixed states are played by the tie rule there, so it may differ from the solved values by
the weight of those states; the losses are measured from that evaluation, so that the
other seats play the same in both).

    python bench/bench_approx.py [--only pig-50 ...] [--write]

``--write`` stores the one-seat losses of every method per case in
solver/thousand/solvers/approx_measured.json, which the advice quotes and chooses by (docs/results.md has
the table); ``--from FILE`` writes it from the ``--json`` file of an earlier run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

try:
    import thousand  # noqa: F401
except ImportError:  # run from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from thousand.engine.player import Moves  # noqa: E402
from thousand.rules import load_ruleset  # noqa: E402
from thousand.solvers.approx import (
    DuelDecider,
    FinishDecider,
    MemorylessDecider,
    ProductDecider,
    RaceDecider,
    duel_matrix,
    interacting,
    race_turns,
)
from thousand.solvers.nplayer import EquilibriumDecider, evaluate_profile, solve_nplayer  # noqa: E402
from thousand.storage.geometric import geometric_duel  # noqa: E402
from thousand.storage.solve import solve  # noqa: E402

CASES = {  # name: (preset, overrides, players)
    "pig-50": ("pig", ("goal=50",), 3),
    "pig-100": ("pig", ("goal=100",), 3),
    "plain-500": ("plain", ("goal=500",), 3),
    "farkle-3000": ("farkle", ("goal=3000",), 3),
    "pig-30-4": ("pig", ("goal=30",), 4),
    # a 1000 game with every interaction (docs/results.md's small classic)
    "classic-150": (
        "classic",
        (
            "goal=150",
            "pits=[{low=50,exit=75}]",
            "barrel.threshold=100",
            "dump=[85]",
            "barrel.max_falls=1",
            "bolts.limit=2",
            'bolts.exempt=["unopened"]',
        ),
        3,
    ),
    # equal turns (six-dice's rule): the seat of the mover in the state, the round's last turns;
    # the duel-based methods do not see seats, so the race and the memoryless opponent are measured
    "pig-30-equal": ("pig", ("goal=30", "equal_turns=true"), 3),
    "pig-50-equal": ("pig", ("goal=50", "equal_turns=true"), 3),
}


def measure(name: str) -> dict:
    preset, sets, N = CASES[name]
    rs = load_ruleset(preset, sets)
    t0 = time.perf_counter()
    sol = solve_nplayer(rs, N)
    t_eq = time.perf_counter() - t0
    sp = sol.space
    x0 = Moves(rs).normalise(Moves(rs).initial())
    s0 = sol.index([x0] * N)
    own = evaluate_profile(sp, N, [EquilibriumDecider(sol)]).reshape(-1, N)  # every seat's block (equal_turns)
    # the reference: the equilibrium's decisions played as the evaluation plays them (at a
    # mixed state, the tie rule's policy), so that a loss compares like with like
    eq = own[s0]
    with tempfile.TemporaryDirectory() as d:
        turns = race_turns(sp, solve(rs, "race", tables=d))
        if rs.equal_turns:
            geo = geometric_duel(rs, d, progress=False)
        else:
            P = duel_matrix(sp, solve(rs, "duel", tables=d))
    out = {
        "ruleset": name,
        "players": N,
        "states": int(sol.V.shape[0]),
        "equilibrium_seconds": round(t_eq, 1),
        "certificate": sol.certificate,
        "mixed": len(sol.mixed),
        "seats": [float(v) for v in sol.V[s0]],
        "seats_pure": [float(v) for v in eq],
        "equilibrium_evaluated_max_diff": float(np.max(np.abs(own - sol.V))),
        "methods": {},
    }
    print(
        f"{name}: {N} players, {out['states']:,} states, equilibrium {t_eq:.1f} s, certificate "
        f"{sol.certificate:.1e}, {len(sol.mixed)} mixed states; seats {', '.join(f'{v:.6f}' for v in sol.V[s0])}; "
        f"its decisions played pure (the tie rule at mixed states) {', '.join(f'{v:.6f}' for v in eq)}, "
        f"anywhere within {out['equilibrium_evaluated_max_diff']:.1e}",
        flush=True,
    )
    if rs.equal_turns:
        deciders = [RaceDecider(sp, turns), MemorylessDecider(sol.game, geo)]
    else:
        deciders = [
            ProductDecider(sp, P, N - 1),
            DuelDecider(sp, P, N - 1),
            RaceDecider(sp, turns),
            FinishDecider(sp, turns, N - 1),
        ]
    for dec in deciders:
        t0 = time.perf_counter()
        every = evaluate_profile(sp, N, [dec])[0][s0]
        loss = []
        for k in range(N):
            lineup = [EquilibriumDecider(sol)] * N
            lineup[k] = dec
            loss.append(float(eq[k] - evaluate_profile(sp, N, lineup)[0][s0][k]))
        out["methods"][dec.name] = {
            "every_seat": [float(v) for v in every],
            "one_seat_loss": loss,
            "seconds": round(time.perf_counter() - t0, 1),
        }
        print(
            f"  {dec.name:8} every seat: {', '.join(f'{v:.6f}' for v in every)}; one seat among equilibrium "
            f"players loses {', '.join(f'{v:.6f}' for v in loss)} (seats 1..{N}); "
            f"{time.perf_counter() - t0:.1f} s",
            flush=True,
        )
    return out


def write_measured(results: list[dict]) -> Path:
    """solver/thousand/solvers/approx_measured.json: per case, the dice and the one-seat losses of every method
    (the cases measured now replace their earlier figures; the others are kept)."""
    rules = {r["ruleset"]: load_ruleset(*CASES[r["ruleset"]][:2]) for r in results}
    cases = [
        {
            "ruleset": r["ruleset"],
            "preset": CASES[r["ruleset"]][0],
            "goal": rules[r["ruleset"]].goal,
            "players": r["players"],
            "dice": rules[r["ruleset"]].dice,
            "interactions": interacting(rules[r["ruleset"]]),
            "equal_turns": bool(rules[r["ruleset"]].equal_turns),
            "losses": {name: m["one_seat_loss"] for name, m in r["methods"].items()},
        }
        for r in results
    ]
    path = Path(__file__).resolve().parents[1] / "solver" / "thousand" / "solvers" / "approx_measured.json"
    kept = json.loads(path.read_text()) if path.exists() else {}
    now = {c["ruleset"] for c in cases}
    cases = [c for c in kept.get("cases", []) if c["ruleset"] not in now] + cases
    kept.update({"source": "python bench/bench_approx.py --write", "cases": cases})
    path.write_text(json.dumps(kept, indent=1) + "\n")
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="+", choices=list(CASES), default=list(CASES))
    ap.add_argument(
        "--write", action="store_true", help="store the losses in solver/thousand/solvers/approx_measured.json"
    )
    ap.add_argument("--json", dest="json_out", default=None, help="also write every figure to this file")
    ap.add_argument(
        "--from",
        dest="json_in",
        default=None,
        help="take the figures from the --json file of an earlier run instead of measuring",
    )
    a = ap.parse_args()
    if a.json_in:
        results = json.loads(Path(a.json_in).read_text())
    else:
        results = []
        for n in a.only:
            results.append(measure(n))
            if a.json_out:  # after every case: a long run that stops keeps what it measured
                Path(a.json_out).write_text(json.dumps(results, indent=1))
    if a.write:
        print(f"wrote {write_measured(results)}")


if __name__ == "__main__":
    main()
