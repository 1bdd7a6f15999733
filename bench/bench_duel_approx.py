"""What the duel approximation for six-dice costs, measured exactly on derived rulesets.

For each case (a six-dice ruleset small enough for the exact duel): the exact duel
(thousand.solvers.duel.solve_duel), the race and the memoryless-opponent values
(thousand.solvers.geometric) on the same player states, then exact policy evaluations
(thousand.solvers.duel.seat_profile_values: the profile's linear system, one sparse LU, no
simulation) of one player using an approximation against an exact player, in each
seat. The loss of that player is its exact duel chance minus its chance so. As a check
the evaluation of the exact player against itself is printed beside the solved value.

    python bench/bench_duel_approx.py [--only six-200 ...] [--write]

``--write`` stores the losses in solver/thousand/solvers/approx_measured.json (key ``duel_cases``), which
the advice quotes (thousand.solvers.geometric.approximation_note; docs/results.md).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

try:
    import thousand  # noqa: F401
except ImportError:  # run from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from thousand.rules import load_ruleset  # noqa: E402
from thousand.solvers.duel import DuelModel, seat_profile_values, solve_duel  # noqa: E402
from thousand.solvers.geometric import stand_ins  # noqa: E402

NO_BARREL_TRIES = ("barrel.attempts=0", "barrel.max_falls=0", "barrel.fall_to=penalty")
CASES = {  # name: overrides of six-dice (goal 200, barrel at 150; the preset's bolts throughout)
    "six-200": ("goal=200", "barrel.threshold=150", "pits=[]", "pit_attempts=0") + NO_BARREL_TRIES,
    "six-200-pit": ("goal=200", "pits=[{low=50,exit=100}]", "pit_attempts=1", "barrel.threshold=150") + NO_BARREL_TRIES,
    "six-200-barrel": (
        "goal=200",
        "pits=[]",
        "pit_attempts=0",
        "barrel.threshold=150",
        "barrel.attempts=3",
        "barrel.max_falls=3",
        "barrel.fall_to=penalty",
    ),
}


def measure(name: str) -> dict:
    rs = load_ruleset("six-dice", CASES[name])
    t0 = time.perf_counter()
    model = DuelModel(rs)
    sol = solve_duel(rs, model=model)
    t_duel = time.perf_counter() - t0
    m, table = model.players, model.table
    Q = np.ascontiguousarray(sol.P.T)
    x0 = model.moves.initial()
    s0, s1 = model.index(x0, 0), model.index(x0, 1)
    exact = float(sol.P[s0, s1])
    check = float(seat_profile_values(model, table, Q, Q)[s0, s1])
    t0 = time.perf_counter()
    methods, geo = stand_ins(model)
    t_geo = time.perf_counter() - t0
    out = {
        "ruleset": name,
        "overrides": list(CASES[name]),
        "player_states": m,
        "pairs": model.pairs,
        "duel_seconds": round(t_duel, 1),
        "duel_residual": sol.residual,
        "approximations_seconds": round(t_geo, 2),
        "geometric_residual": geo.residual,
        "p_first": exact,
        "p_first_evaluated": check,
        "losses": {},
    }
    print(
        f"{name}: {m} player states, {model.pairs:,} pairs; exact duel {t_duel:.1f} s, P(first) {exact:.9f} "
        f"(evaluated {check:.9f}); race and geometric values {t_geo:.2f} s, residual {geo.residual:.1e}",
        flush=True,
    )
    for method, A in methods.items():
        first = exact - float(seat_profile_values(model, table, A, Q)[s0, s1])
        second = float(seat_profile_values(model, table, Q, A)[s0, s1]) - exact
        out["losses"][method] = [first, second]
        print(f"  {method:9} loses {first:.6f} in the first seat, {second:.6f} in the second", flush=True)
    return out


def _case(r: dict) -> dict:
    """One measured ruleset as the advice layer reads it (thousand.advice.costs): what kind of game it is."""
    from thousand.solvers.approx import interacting

    rs = load_ruleset("six-dice", tuple(r["overrides"]))
    return {
        "ruleset": f"six-dice {r['ruleset']}",
        "overrides": r["overrides"],
        "losses": r["losses"],
        "preset": "six-dice",
        "goal": rs.goal,
        "players": 2,
        "dice": rs.dice,
        "equal_turns": bool(rs.equal_turns),
        "interactions": interacting(rs),
    }


def write_measured(results: list[dict]) -> Path:
    path = Path(__file__).resolve().parents[1] / "solver" / "thousand" / "solvers" / "approx_measured.json"
    kept = json.loads(path.read_text()) if path.exists() else {}
    kept["duel_source"] = "python bench/bench_duel_approx.py --write"
    kept["duel_cases"] = [_case(r) for r in results]
    path.write_text(json.dumps(kept, indent=1) + "\n")
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="+", choices=list(CASES), default=list(CASES))
    ap.add_argument(
        "--write", action="store_true", help="store the losses in solver/thousand/solvers/approx_measured.json"
    )
    a = ap.parse_args()
    t0 = time.perf_counter()
    results = [measure(c) for c in a.only]
    print(
        f"total {time.perf_counter() - t0:.1f} s, "
        f"peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
    )
    if a.write:
        print(f"wrote {write_measured(results)}")


if __name__ == "__main__":
    main()
