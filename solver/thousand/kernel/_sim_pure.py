"""Pure-Python twin of the compiled game simulator (``ext/_sim.pyx``).

Same function, same arguments, same random numbers, so the same seed gives
the same games bit for bit; used under ``THOUSAND_PURE=1``, when the
extension is missing, and by the differential tests. Slow (a few hundred
times slower than the compiled loop): meant for tiny rulesets.

See :mod:`thousand.analysis.simulate` for the meaning of the arguments. Random numbers:
game ``g`` of a run seeded ``seed`` draws from its own xoshiro256** stream
whose state is four splitmix64 outputs started at ``seed + g * GAME_STRIDE``
(mod 2^64); a number below ``m`` is ``(r * m) >> 64`` for the next 64-bit
output ``r``. A roll of ``n`` dice is one such number below ``faces**n``: the
index of the ordered roll, mapped to its roll class by a lookup table.
"""

from __future__ import annotations

__all__ = [
    "BUST",
    "CONFIRM",
    "END",
    "FREE",
    "GAME_STRIDE",
    "HOLD",
    "IMPLEMENTATION",
    "M64",
    "MUST_ROLL",
    "OPTIMAL",
    "RANDOM",
    "WIN",
    "Rng",
    "run",
]

IMPLEMENTATION = "pure"

M64 = (1 << 64) - 1
GAME_STRIDE = 0xD1B54A32D192ED03
MUST_ROLL, FREE, CONFIRM = 0, 1, 2
OPTIMAL, HOLD, RANDOM = 0, 1, 2  # bot kinds: value tables (duel or race), hold at N points, random
BUST, END, WIN = 0, 1, 2


class Rng:
    """xoshiro256** seeded by splitmix64."""

    __slots__ = ("s0", "s1", "s2", "s3")

    def __init__(self, seed: int, game: int):
        x = (seed + game * GAME_STRIDE) & M64
        out = []
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & M64
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
            out.append(z ^ (z >> 31))
        self.s0, self.s1, self.s2, self.s3 = out

    def next(self) -> int:
        s0, s1, s2, s3 = self.s0, self.s1, self.s2, self.s3
        r = (s1 * 5) & M64
        r = (((r << 7) | (r >> 57)) & M64) * 9 & M64
        t = (s1 << 17) & M64
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = ((s3 << 45) | (s3 >> 19)) & M64
        self.s0, self.s1, self.s2, self.s3 = s0, s1, s2, s3
        return r

    def below(self, m: int) -> int:
        return (self.next() * m) >> 64


def run(rolls, lookup, plans, unit, start0, start1, bots, race, games, seed, game0, max_turns, threads):
    """Play ``games`` games (numbered ``game0``...) of the two ``bots`` (each with ``kind``,
    ``param``, ``dec``, ``doff``, ``val``, ``voff``, ``blind``: see
    :func:`thousand.analysis.simulate._bot_policy`) on the roll classes ``rolls`` (a kernel
    ``Rolls``), the roll lookup ``lookup = (lut, lut_off, lut_size)`` and the turn ends
    ``plans`` (a kernel ``Plans``); returns ``(wins0, wins1, unfinished, sum_turns,
    sum_sq_turns)`` where the turns are counted over finished games (both players'
    turns in a duel)."""
    sim = _Simulator(rolls, lookup, plans, unit, bots)
    wins = [0, 0]
    unfinished = sum_turns = sum_sq = 0
    for g in range(game0, game0 + games):
        winner, turns = sim.game(Rng(seed, g), start0, start1, race, max_turns)
        if winner < 0:
            unfinished += 1
        else:
            wins[winner] += 1
            sum_turns += turns
            sum_sq += turns * turns
    return wins[0], wins[1], unfinished, sum_turns, sum_sq


class _Turn:
    """Where one turn stands: the points ``t`` so far, ``n`` dice to roll, whether the player
    decides to bank before the next roll (``decide``), and whether a hot-dice roll must
    confirm the turn (``confirming``); ``want_stop``: a random bot's choice to bank."""

    __slots__ = ("t", "n", "decide", "confirming", "want_stop")

    def __init__(self, n: int):
        self.t, self.n, self.decide, self.confirming, self.want_stop = 0, n, False, False, False


class _Simulator:
    """The compiled simulator's loops on Python lists (the arrays' ``tolist()``: a list is
    read far faster than a numpy array element by element)."""

    def __init__(self, rolls, lookup, plans, unit, bots):
        lut, lut_off, lut_size = lookup
        self.unit = unit
        self.N, self.hot_mode = rolls.dice, rolls.hot_mode
        self.W = self.N + 2
        self.lut, self.lut_off, self.lut_size = lut.tolist(), lut_off.tolist(), lut_size.tolist()
        self.inst = rolls.cls_instant.tolist()
        self.optp, self.optpts, self.optused = (
            rolls.opt_ptr.tolist(),
            rolls.opt_points.tolist(),
            rolls.opt_used.tolist(),
        )
        self.ptr, self.sok, self.fok = plans.ptr.tolist(), plans.stop_ok.tolist(), plans.forced_ok.tolist()
        self.nxt, self.after = plans.next.tolist(), plans.after.tolist()
        self.climbed, self.bust, self.score = plans.climbed.tolist(), plans.bust.tolist(), plans.score.tolist()
        self.overtaken, self.pushed = plans.overtaken.tolist(), plans.pushed.tolist()
        self.on_barrel = plans.on_barrel.tolist()
        self.kinds, self.params = [int(b.kind) for b in bots], [int(b.param) for b in bots]
        self.decs, self.doffs = [b.dec.tolist() for b in bots], [b.doff.tolist() for b in bots]
        self.vals, self.voffs = [b.val.tolist() for b in bots], [b.voff.tolist() for b in bots]
        self.blinds = [b.blind for b in bots]

    def game(self, rng, start0: int, start1: int, race: bool, max_turns: int) -> tuple[int, int]:
        """One game: (the winner, or -1 if unfinished after ``max_turns``; the turns played)."""
        p = [start0, start1]
        mover = turns = 0
        while turns < max_turns:
            turns += 1
            x, y = p[mover], p[1 - mover]
            what, row = self.turn(mover, x, y, rng)
            if what == WIN:
                return mover, turns
            if what == BUST:
                x = self.bust[x]
            else:
                if self.nxt[row] == -1:
                    return mover, turns
                if not race:
                    y = self.opponent_after(x, y, row)
                x = self.nxt[row]
            if race:
                p[0] = x
            else:
                p[mover], p[1 - mover] = x, y
                mover = 1 - mover
        return -1, turns

    def opponent_after(self, x: int, y: int, row: int) -> int:
        """The opponent ``y`` after the mover at ``x`` banks by plan row ``row``: pushed off
        the barrel by a climb, then overtaken by a pass."""
        if self.climbed[row] and self.on_barrel[y]:
            y = self.pushed[y]
        if self.score[x] < self.score[y] < self.after[row]:
            y = self.overtaken[y]
        return y

    def turn(self, b: int, x: int, y: int, rng):
        """One turn of bot ``b`` in state ``x`` against ``y``: (BUST|END|WIN, plan row)."""
        prow = self.ptr[x]
        T = self.ptr[x + 1] - prow - 1
        dbase = vbase = 0
        if self.kinds[b] == OPTIMAL:
            dbase = self.doffs[b][x] + (0 if self.blinds[b] else y * (T + 2))
            vbase = self.voffs[b][x] + (0 if self.blinds[b] else y * (T + 2) * self.W)
        s = _Turn(self.N)
        while True:
            if s.decide and self.sok[prow + min(s.t, T)] and self.banks(b, s, prow, T, dbase):
                return END, prow + min(s.t, T)
            c = self.lut[self.lut_off[s.n] + rng.below(self.lut_size[s.n])]
            if self.inst[c]:
                return WIN, 0
            o0, o1 = self.optp[c], self.optp[c + 1]
            if o0 == o1:
                return BUST, 0
            j = self.set_aside(b, s, prow, T, vbase, o0, o1, rng)
            s.t += self.optpts[j]
            left = s.n - self.optused[j]
            k = min(s.t, T)
            if self.fok[prow + k] or (s.confirming and self.sok[prow + k]):
                return END, prow + k
            s.confirming = False
            if left == 0:
                s.n = self.N
                s.decide = self.hot_mode == FREE
                s.confirming = self.hot_mode == CONFIRM
            else:
                s.n, s.decide = left, True

    def banks(self, b: int, s: _Turn, prow: int, T: int, dbase: int) -> bool:
        """Whether bot ``b`` banks now, where banking is allowed."""
        kind = self.kinds[b]
        if kind == OPTIMAL:
            return (self.decs[b][dbase + min(s.t, T + 1)] >> s.n) & 1 == 1
        if kind == HOLD:
            return s.t * self.unit >= self.params[b] or self.nxt[prow + min(s.t, T)] == -1
        return s.want_stop

    def set_aside(self, b: int, s: _Turn, prow: int, T: int, vbase: int, o0: int, o1: int, rng) -> int:
        """The option (of ``o0`` to ``o1``) bot ``b`` sets aside after a roll."""
        kind = self.kinds[b]
        if kind == RANDOM:
            return self.random_option(s, prow, T, o0, o1, rng)
        if o1 - o0 == 1:
            return o0
        if kind == OPTIMAL:
            return self.best_option(b, s, prow, T, vbase, o0, o1)
        # the greedy bots: the most points, then the fewest dice used
        j, bp, bu = o0, -1, 0
        for o in range(o0, o1):
            if self.optpts[o] > bp or (self.optpts[o] == bp and self.optused[o] < bu):
                bp, bu, j = self.optpts[o], self.optused[o], o
        return j

    def best_option(self, b: int, s: _Turn, prow: int, T: int, vbase: int, o0: int, o1: int) -> int:
        """The optimal bot's option: the highest value where it leads (the first of equals)."""
        val, W, N = self.vals[b], self.W, self.N
        best, j = None, o0
        for o in range(o0, o1):
            t1 = s.t + self.optpts[o]
            r = vbase + min(t1, T + 1) * W
            if s.confirming and self.sok[prow + min(t1, T)]:
                a = val[r]
            else:
                left = s.n - self.optused[o]
                a = val[r + (left if left else N + 1)]
            if best is None or a > best:
                best, j = a, o
        return j

    def random_option(self, s: _Turn, prow: int, T: int, o0: int, o1: int, rng) -> int:
        """Uniform over the legal actions: each set-aside, then roll, or stop where allowed
        (the choice to stop is kept in ``s.want_stop``)."""

        def stops(o):
            k1 = min(s.t + self.optpts[o], T)
            if self.fok[prow + k1] or (s.confirming and self.sok[prow + k1]):
                return 0
            if s.n == self.optused[o] and self.hot_mode != FREE:
                return 0
            return self.sok[prow + k1]

        cnt = sum(1 + stops(o) for o in range(o0, o1))
        pick = rng.below(cnt) if cnt > 1 else 0
        for o in range(o0, o1):
            a = 1 + stops(o)
            if pick < a:
                s.want_stop = pick == 1
                return o
            pick -= a
        return o0
