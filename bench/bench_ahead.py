"""What the lookahead over the others' next turns (method ``ahead``) costs the advice at a
decision, three players: the preparation once per ruleset, then one decision (the whole
turn solved, every end valued) at positions from the start of a game to its end, with the
product of duels beside it (read off the duel table alone) in the same run.

    python bench/bench_ahead.py [--rules classic] [--tables DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

try:
    import thousand  # noqa: F401
except ImportError:  # run from a source checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from thousand.engine.player import Moves, PlayerState  # noqa: E402
from thousand.rules import load_ruleset  # noqa: E402
from thousand.solvers.advice import AheadGame, ahead_advisor, duels_advisor  # noqa: E402
from thousand.storage.solve import solve_objective  # noqa: E402

POSITIONS = {  # share of the goal each player holds (0: not yet opened where the rules open)
    "start": (0.0, 0.0, 0.0),
    "early": (0.1, 0.2, 0.05),
    "middle": (0.3, 0.45, 0.12),
    "late": (0.7, 0.6, 0.55),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", default="classic")
    ap.add_argument("--tables", default=None)
    a = ap.parse_args()
    rs = load_ruleset(a.rules)
    duel = solve_objective(rs, "duel", a.tables, progress=False)
    t0 = time.perf_counter()
    ahead = AheadGame(duel, 3)
    print(
        f"{rs.name}, 3 players: the lookahead prepared in {time.perf_counter() - t0:.1f} s "
        f"({ahead.game.m:,} player states)",
        flush=True,
    )
    moves = Moves(rs)
    u = rs.unit
    for name, shares in POSITIONS.items():
        xs = []
        for share in shares:
            score = int(share * rs.goal) // (5 * u) * 5 * u
            x = moves.initial() if score == 0 else PlayerState(score, opened=True)
            xs.append(moves.normalise(x))
        took = {}
        for method, make in (
            ("ahead", lambda: ahead_advisor(ahead, xs[1:])),
            ("product", lambda: duels_advisor(duel, xs[1:], "product")),
        ):
            t0 = time.perf_counter()
            best = make().advise(xs[0], 0, None, None).best
            took[method] = (time.perf_counter() - t0, best.action)
        print(
            f"  {name:7} scores {', '.join(str(x.score) for x in xs):17} one decision: lookahead "
            f"{took['ahead'][0]:.2f} s ({took['ahead'][1]}), product of duels {took['product'][0]:.3f} s "
            f"({took['product'][1]})",
            flush=True,
        )


if __name__ == "__main__":
    main()
