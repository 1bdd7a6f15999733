"""Every equilibrium of one orbit of an exported Pig equilibrium, from the file alone (NumPy).

    python docs/pig_orbit_equilibria.py pig-100.npz 16,40,61
    python docs/pig_orbit_equilibria.py pig-100.npz --mixed          (every mixed state's orbit)
    python docs/pig_orbit_equilibria.py pig-100.npz --sample 50      (orbits drawn at random)

An orbit is the states a 1 leads round: (16, 40, 61) with the player at 16 to move, then
(40, 61, 16), then (61, 16, 40), and back. Every bank leaves the orbit for a state of
higher scores, whose values the file holds; so the orbit is a small game of its own: each
mover's turn policy, given the file's values of the banked states, sets its chance of a
bust ``b`` and every player's chance from its banks ``A``, and the orbit's rows then follow
in closed form from

    V(state r) = A_r + b_r S V(state r+1)      (S puts the mover first)

An equilibrium of the orbit is a policy for each mover (or a mixture of two neighbouring
ones) that is best against its own chance after a 1, ``z_r = V(state r+1)``'s last entry.
This script lists each mover's best policies as ``z`` runs over [0, 1] (a grid of 513
points, each change bisected to the last bit), then tries every combination: every mover
keeping one policy (``z_r`` inside that policy's interval), and every set of movers
mixing two neighbours at their breakpoint (the weights solved by Newton's method from
several starts, the others keeping a policy). Each candidate found is confirmed by each
mover's best turn against its ``z_r``: no mover gains more than 1e-12. It prints every
equilibrium with its rows, and how far the file's rows are from each.

Pig's rules, written from docs/rules.md: check_pig_equilibrium.py beside this file.
"""

from __future__ import annotations

import itertools
import sys
from math import gcd
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_pig_equilibrium import PigFile  # noqa: E402


class Mover:
    """One mover of the orbit: its best policies along its chance after a 1."""

    def __init__(self, f: PigFile, scores):
        self.f, self.scores = f, tuple(scores)
        me, rest = scores[0], tuple(scores[1:])
        # the banked rows (mover first) do not depend on z: read them once
        self.banked = {t: np.roll(f.values[f.row(rest + (me + t,))], 1) for t in range(1, f.goal - me)}
        grid = np.linspace(0.0, 1.0, 513)
        pols = [self.policy(z) for z in grid]
        found = []
        todo = [(grid[j - 1], pols[j - 1], grid[j], pols[j]) for j in range(1, len(grid)) if pols[j - 1] != pols[j]]
        while todo:
            nxt = []
            for a, pa, c, pc in todo:
                mid = 0.5 * (a + c)
                if mid in (a, c):
                    found.append((c, pc))
                    continue
                q = self.policy(mid)
                if q != pa:
                    nxt.append((a, pa, mid, q))
                if q != pc:
                    nxt.append((mid, q, c, pc))
            todo = nxt
        found.sort()
        self.cuts = np.array([c for c, _p in found])
        self.stops = [pols[0]] + [p for _c, p in found]
        ends = [self.ends(s) for s in self.stops]
        self.b = np.array([e[0] for e in ends])
        self.A = np.array([e[1] for e in ends])

    def policy(self, z: float) -> frozenset:
        """The totals the best turn against ``z`` reaches and stops at (a tie stops): two
        rules that differ only where the turn never gets are one policy."""
        goal, me = self.f.goal, self.scores[0]
        R = {t: 1.0 for t in range(goal - me, goal - me + 6)}
        stops = set()
        for t in range(goal - me - 1, 1, -1):  # a turn total of 1 is never reached
            roll = z / 6 + sum(R[t + f] for f in range(2, 7)) / 6
            bank = self.banked[t][0]
            if bank >= roll:
                stops.add(t)
            R[t] = max(bank, roll)
        return frozenset(stops & self.reached(stops))

    def reached(self, stops) -> set:
        """The turn totals below the goal a turn that stops at ``stops`` can reach."""
        reached = {0}
        for t in range(self.f.goal - self.scores[0]):
            if t in reached and t not in stops:
                reached.update(range(t + 2, t + 7))
        return {t for t in reached if t < self.f.goal - self.scores[0]}

    def best(self, z: float) -> float:
        """The mover's chance by its best turn against ``z``."""
        b, A = self.ends(self.policy(z))
        return float(A[0] + b * z)

    def ends(self, stops: frozenset):
        """(chance of a bust, every player's chance from the banks and wins) of a policy."""
        goal, me, N = self.f.goal, self.scores[0], self.f.N
        won = np.zeros(N)
        won[0] = 1.0
        P = {t: 0.0 for t in range(goal - me, goal - me + 6)}
        A = {t: won for t in range(goal - me, goal - me + 6)}
        for t in range(goal - me - 1, -1, -1):
            if t in stops:
                P[t], A[t] = 0.0, self.banked[t]
            else:
                P[t] = 1 / 6 + sum(P[t + f] for f in range(2, 7)) / 6
                A[t] = sum(A[t + f] for f in range(2, 7)) / 6
        return P[0], A[0]

    def describe(self, k: int) -> str:
        """The policy in words: the turn totals it reaches and stops at, as ranges ("at 20
        or more" when it stops wherever it gets from 20 on)."""
        stops = sorted(self.stops[k])
        if not stops:
            return "rolls to the goal"
        runs, start = [], stops[0]
        for a, c in zip(stops, stops[1:] + [None]):
            if c != a + 1:
                runs.append((start, a))
                start = c
        words = [f"{a}" if a == c else f"{a}-{c}" for a, c in runs]
        if all(t in self.stops[k] for t in self.reached(self.stops[k]) if t >= runs[-1][0]):
            words[-1] = f"{runs[-1][0]} or more"  # the turn never gets past the last run
            return "stops at " + ", ".join(words) + " in the turn"
        return "stops at " + ", ".join(words) + " in the turn, rolls on elsewhere"


def orbit_values(A, b, N: int, M: int):
    """The orbit's rows for each combination: A (L, C, N), b (L, C) -> (L, C, N)."""
    L = A.shape[0]
    out = np.zeros_like(A)
    for r in range(L):
        num = np.zeros(A.shape[1:])
        prod = np.ones(A.shape[1])
        for j in range(M):
            row = (r + j) % L
            num += prod[:, None] * np.roll(A[row], j, axis=-1)
            prod = prod * b[row]
        with np.errstate(divide="ignore", invalid="ignore"):
            out[r] = np.where((prod < 1.0)[:, None], num / (1.0 - prod)[:, None], 0.0)
    return out


def equilibria(f: PigFile, scores):
    N = f.N
    states = [tuple(scores[k:]) + tuple(scores[:k]) for k in range(N)]
    L = next(k for k in range(1, N + 1) if states[k % N] == states[0])
    states = states[:L]
    M = L * N // gcd(L, N)
    movers = [Mover(f, s) for s in states]
    found = []
    for mixers in itertools.chain.from_iterable(itertools.combinations(range(L), k) for k in range(L + 1)):
        # a choice per mover: a policy index, or (for a mixer) a cut index
        ranges = [range(len(mv.cuts)) if r in mixers else range(len(mv.stops)) for r, mv in enumerate(movers)]
        choice = np.array(list(itertools.product(*ranges))).T  # (L, C)
        if choice.size == 0:
            continue

        def play(w, cols):
            A = np.stack([movers[r].A[choice[r, cols]] for r in range(L)])
            b = np.stack([movers[r].b[choice[r, cols]] for r in range(L)])
            for j, r in enumerate(mixers):
                k = choice[r, cols]
                A[r] = (1 - w[j])[:, None] * movers[r].A[k] + w[j][:, None] * movers[r].A[k + 1]
                b[r] = (1 - w[j]) * movers[r].b[k] + w[j] * movers[r].b[k + 1]
            V = orbit_values(A, b, N, M)
            z = np.stack([V[(r + 1) % L][:, N - 1] for r in range(L)])
            return V, z

        def miss(z, cols):
            return np.stack([z[r] - movers[r].cuts[choice[r, cols]] for r in mixers])

        C = choice.shape[1]
        for s0 in (0.5, 0.1, 0.9) if mixers else (0.0,):
            w = np.full((len(mixers), C), s0)
            active = np.arange(C) if mixers else np.arange(0)
            for _ in range(60):
                if not len(active):
                    break
                G = miss(play(w[:, active], active)[1], active)
                J = np.zeros((len(active), len(mixers), len(mixers)))
                for i in range(len(mixers)):
                    dw = w[:, active].copy()
                    dw[i] += 1e-7
                    J[:, :, i] = (miss(play(dw, active)[1], active) - G).T / 1e-7
                with np.errstate(all="ignore"):
                    # pinv: a mixer whose weight does not move the bust values has no step
                    step = (np.linalg.pinv(np.nan_to_num(J)) @ G.T[..., None])[..., 0].T
                w[:, active] = np.nan_to_num(w[:, active] - step, nan=9.0)
                # Newton goes on where it has not converged and the weights stay near [0, 1]
                wa = w[:, active]
                active = active[(np.max(np.abs(G), axis=0) > 1e-15) & np.all((wa > -0.5) & (wa < 1.5), axis=0)]
            cols = np.flatnonzero(np.all((w >= -1e-12) & (w <= 1 + 1e-12), axis=0))
            V, z = play(np.clip(w[:, cols], 0.0, 1.0), cols)
            ok = np.ones(len(cols), bool)
            for r in range(L):
                k = choice[r, cols]
                if r in mixers:
                    ok &= np.abs(z[r] - movers[r].cuts[k]) <= 1e-12
                else:
                    cuts = np.concatenate([[-np.inf], movers[r].cuts, [np.inf]])
                    ok &= (z[r] >= cuts[k] - 1e-13) & (z[r] <= cuts[k + 1] + 1e-13)
            for i in np.flatnonzero(ok):
                c = cols[i]
                weights = {r: float(np.clip(w[j, c], 0, 1)) for j, r in enumerate(mixers)}
                rows = V[:, i]
                # confirmed by each mover's best turn against its own chance after a 1
                gain = max(movers[r].best(z[r, i]) - rows[r, 0] for r in range(L))
                if gain > 1e-12:
                    continue
                key = tuple(np.round(rows.ravel(), 11))
                if any(key == e[0] for e in found):
                    continue
                found.append((key, [int(choice[r, c]) for r in range(L)], weights, rows))
    return states, movers, found


def show(f: PigFile, scores) -> None:
    """Every equilibrium of the orbit of ``scores``, in words."""
    states, movers, found = equilibria(f, scores)
    print(
        f"orbit {' -> '.join(map(str, states))}: best policies along the chance after a 1: "
        + ", ".join(str(len(mv.stops)) for mv in movers)
    )
    print(f"{len(found)} equilibri{'um' if len(found) == 1 else 'a'}:")
    for _key, choice, weights, rows in found:
        for r, (mv, s) in enumerate(zip(movers, states)):
            k = choice[r]
            if r in weights:
                play = f"mixes '{mv.describe(k + 1)}' with weight {weights[r]:.9f} and '{mv.describe(k)}'"
            else:
                play = mv.describe(k)
            off = float(np.max(np.abs(rows[r] - f.values[f.row(s)])))
            print(f"  {s}: {play}; chances {np.array2string(rows[r], precision=9)}; the file's row is {off:.1e} away")


def survey(f: PigFile, orbits) -> None:
    """How many equilibria each of ``orbits`` has, and how far the file is from the one."""
    seen, several, worst = set(), [], 0.0
    for scores in orbits:
        key = min(scores[k:] + scores[:k] for k in range(f.N))
        if key in seen:
            continue
        seen.add(key)
        states, _movers, found = equilibria(f, scores)
        if len(found) != 1:
            several.append((scores, len(found)))
            print(f"{scores}: {len(found)} equilibria", flush=True)
            continue
        rows = found[0][3]
        worst = max(worst, max(float(np.max(np.abs(rows[r] - f.values[f.row(s)]))) for r, s in enumerate(states)))
    print(
        f"{len(seen)} orbits: {len(seen) - len(several)} have exactly one equilibrium, the file's rows within "
        f"{worst:.1e}; {len(several)} have another number"
    )


USAGE = """usage: python pig_orbit_equilibria.py FILE.npz SCORES     every equilibrium of one orbit (SCORES: 16,40,61)
       python pig_orbit_equilibria.py FILE.npz --mixed      how many each mixed state's orbit has
       python pig_orbit_equilibria.py FILE.npz --sample K [--seed S]   the same for K orbits drawn at random"""


def main(argv) -> None:
    if len(argv) < 2:
        raise SystemExit(USAGE)
    f = PigFile(argv[0])
    if argv[1] == "--mixed":
        rows = f.data["mixed"][:, 0].astype(np.int64)
        survey(f, [tuple(int(f.scores[(r // f.m ** (f.N - 1 - k)) % f.m]) for k in range(f.N)) for r in rows])
    elif argv[1] == "--sample":
        k = int(argv[2])
        seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else 0
        rng = np.random.default_rng(seed)
        survey(f, [tuple(int(x) for x in rng.integers(0, f.goal, f.N)) for _ in range(k)])
    else:
        scores = tuple(int(x) for x in argv[1].split(","))
        if len(scores) != f.N or not all(0 <= x < f.goal for x in scores):
            raise SystemExit(f"give {f.N} scores below {f.goal}, the mover's first")
        show(f, scores)


if __name__ == "__main__":
    main(sys.argv[1:])
