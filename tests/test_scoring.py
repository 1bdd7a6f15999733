"""Scoring of single rolls: the worked examples of docs/rules.md section 1 and of the
Russian sources (seeds 000-002), Farkle's tables, and the roll classes of the
kernel checked against the reference scorer and against exact bust counts."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import pytest

from thousand.kernel import roll_classes
from thousand.rules import load_ruleset
from thousand.rules.scoring import RollScorer, parse_roll


def scorer(name: str, *overrides: str) -> RollScorer:
    return RollScorer(load_ruleset(name, overrides))


def best(sc: RollScorer, roll: str) -> tuple[int, int]:
    """(points, dice scored) of the best composition of a roll."""
    p, u, _ = sc.best(sc.counts(parse_roll(roll, sc.rs)))
    return p, u


def options(sc: RollScorer, roll: str) -> set[tuple[int, tuple[int, ...]]]:
    return set(sc.set_asides(parse_roll(roll, sc.rs)))


# --------------------------------------------------------------------------- classic table

CLASSIC_TABLE = {  # face: (three, four, five), docs/rules.md section 1 and every seed
    1: (100, 200, 1000),
    2: (20, 40, 200),
    3: (30, 60, 300),
    4: (40, 80, 400),
    5: (50, 100, 500),
    6: (60, 120, 600),
}


@pytest.mark.parametrize(
    "name", ["classic", "classic-nobarrel", "classic-open", "street", "kubiki", "admission", "plain"]
)
@pytest.mark.parametrize("face", range(1, 7))
def test_classic_table_of_kinds(name, face):
    sc = scorer(name)
    three, four, five = CLASSIC_TABLE[face]
    assert best(sc, ",".join([str(face)] * 3)) == (three, 3)
    assert best(sc, ",".join([str(face)] * 4)) == (four, 4)
    assert best(sc, ",".join([str(face)] * 5)) == (five, 5)


@pytest.mark.parametrize("name", ["classic", "street", "kubiki", "admission", "six-dice"])
def test_singles(name):
    sc = scorer(name)
    assert best(sc, "1") == (10, 1)
    assert best(sc, "5") == (5, 1)
    for f in "2346":
        assert best(sc, f) == (0, 0)


@pytest.mark.parametrize(
    "roll, points, used",
    [
        ("1,5,3,3,4", 15, (1, 5)),  # docs/rules.md / seed 000 «ВАРИАНТ №2», seed 002
        ("5,5,2", 10, (5, 5)),  # the second roll of the same example
        ("1,1,1,1,5", 205, (1, 1, 1, 1, 5)),
        ("1,2,3,4,5", 125, (1, 2, 3, 4, 5)),
        ("2,3,4,5,6", 250, (2, 3, 4, 5, 6)),
        ("4,4,4", 40, (4, 4, 4)),  # «три четверки дадут 40 очков»
        ("4,4,4,2,3", 40, (4, 4, 4)),
        ("1,1,1", 100, (1, 1, 1)),  # «три единицы 100»
        ("1,5,2,2,6", 15, (1, 5)),  # street: «выпало 1,5,2,2,6 – это 15 очков»
        ("1,2,4,5,6", 15, (1, 5)),  # «Кубики»: «1, 2, 4, 5 и 6 ... 15 очков»
        ("1,1,5", 25, (1, 1, 5)),  # «Кубики»: «1, 1 и 5 (итого 25 очков)»
        ("5,5,5,5,1", 110, (1, 5, 5, 5, 5)),
        ("1,1,1,5,5", 110, (1, 1, 1, 5, 5)),
        ("1,2,3,4,5", 125, (1, 2, 3, 4, 5)),  # the straight beats 1 + 5 = 15
        ("5,2,3,4,6", 250, (2, 3, 4, 5, 6)),
    ],
)
def test_classic_examples(roll, points, used):
    sc = scorer("classic")
    assert sc.set_asides(parse_roll(roll, sc.rs)) == [(points, used)]


@pytest.mark.parametrize("roll", ["2,3", "2,3,4,6", "6,6,4,4,2", "2", "3,3,6"])
def test_classic_busts(roll):
    sc = scorer("classic")
    assert sc.set_asides(parse_roll(roll, sc.rs)) == []
    assert best(sc, roll) == (0, 0)


def test_kinds_beat_their_singles():
    sc = scorer("classic")
    assert best(sc, "1,1,1,1,1") == (1000, 5)  # not 100 + 10 + 10
    assert best(sc, "5,5,5,5") == (100, 4)  # not 50 + 5
    assert best(sc, "5,5,5") == (50, 3)  # not 5 + 5 + 5
    assert best(sc, "1,1,1,1,5") == (205, 5)  # 200 + 5: every die scored


def test_tie_goes_to_the_composition_with_more_dice():
    from thousand.rules import from_mapping

    rs = from_mapping({"dice": 3, "goal": 100, "scoring": {"kinds": {"2": {"1": 20}, "3": {"1": 20}}}})
    sc = RollScorer(rs)
    assert best(sc, "1,1,1") == (20, 3)
    assert sc.set_asides((1, 1, 1)) == [(20, (1, 1, 1))]


def test_keep_all_offers_only_the_best_composition():
    sc = scorer("classic")
    assert sc.set_asides(parse_roll("1,5,5,2,3", sc.rs)) == [(20, (1, 5, 5))]


# --------------------------------------------------------------------------- keep any


def test_admission_keep_any_of_the_seed_example():
    # seed 002: first roll 1,5,3,3,4 -- with keep any the player may take 1, 5, or both
    sc = scorer("admission")
    assert options(sc, "1,5,3,3,4") == {(15, (1, 5)), (10, (1,)), (5, (5,))}
    assert sc.set_asides(parse_roll("1,5,3,3,4", sc.rs))[0] == (15, (1, 5))


def test_keep_any_lone_five_legal_lone_two_not():
    # seed 001: «2, 5, 3, 3, 5 и 6 ... можно оставить одну или две пятёрки»
    sc = scorer("six-dice")
    opts = options(sc, "2,5,3,3,5,6")
    assert opts == {(5, (5,)), (10, (5, 5))}
    assert all(2 not in dice for _, dice in opts)
    assert best(sc, "2,5,3,3,5,6") == (10, 2)


def test_keep_any_subsets_must_score_every_die():
    sc = scorer("six-dice")
    for _, dice in sc.set_asides(parse_roll("2,2,2,1,4,6", sc.rs)):
        p, u, _ = sc.best(sc.counts(dice))
        assert u == len(dice) and p > 0
    # two 2s alone score nothing, so they are never a legal set-aside
    assert all(dice != (2, 2) for _, dice in sc.set_asides(parse_roll("2,2,2,1,4,6", sc.rs)))


# --------------------------------------------------------------------------- six dice (seed 001)


def test_six_dice_three_twos_one_four_six():
    # «три двойки, 1, 4 и 6 ... запишите себе сразу 30 очков. Можно оставить на столе
    #  двойки (20 очков) ... оставить на столе единичку и бросить оставшиеся пять»
    sc = scorer("six-dice")
    opts = options(sc, "2,2,2,1,4,6")
    assert best(sc, "2,2,2,1,4,6") == (30, 4)
    assert (30, (1, 2, 2, 2)) in opts
    assert (20, (2, 2, 2)) in opts
    assert (10, (1,)) in opts
    assert opts == {(30, (1, 2, 2, 2)), (20, (2, 2, 2)), (10, (1,))}


def test_six_dice_second_roll_of_the_seed():
    # «выпали 6, 5, 1, 1 и 5 ... вы набрали 35 очков» (with the 5 kept before: 5 + 30)
    sc = scorer("six-dice")
    assert best(sc, "6,5,1,1,5") == (30, 4)
    assert 5 + best(sc, "6,5,1,1,5")[0] == 35
    opts = options(sc, "6,5,1,1,5")
    assert (10, (1,)) in opts  # «Можно, допустим, добавить единичку»
    assert (30, (1, 1, 5, 5)) in opts


def test_six_dice_four_ones():
    # «во второй барьер вы попали на 560 благодаря комбинации из четырёх единиц с 360»
    sc = scorer("six-dice")
    assert best(sc, "1,1,1,1") == (200, 4)
    assert 360 + best(sc, "1,1,1,1,3,4")[0] == 560


@pytest.mark.parametrize("face, points", [(2, 400), (3, 600), (4, 800), (5, 1000), (6, 1200)])
def test_six_dice_six_of_a_kind(face, points):
    sc = scorer("six-dice")
    roll = ",".join([str(face)] * 6)
    assert best(sc, roll) == (points, 6)
    assert not sc.is_instant_win(parse_roll(roll, sc.rs))


def test_six_dice_six_ones_win_at_once():
    sc = scorer("six-dice")
    assert sc.is_instant_win((1,) * 6)
    assert not sc.is_instant_win((1,) * 5 + (2,))
    rc = roll_classes(sc.rs, 6)
    inst = [k for k in range(len(rc)) if rc.instant[k]]
    assert len(inst) == 1 and int(rc.weight[inst[0]]) == 1
    assert rc.opt_ptr[inst[0] + 1] == rc.opt_ptr[inst[0]]  # no options: the game is won


def test_six_dice_has_no_straights():
    sc = scorer("six-dice")
    assert best(sc, "1,2,3,4,5,6") == (15, 2)
    assert best(sc, "2,3,4,5,6") == (5, 1)


# --------------------------------------------------------------------------- Farkle


@pytest.mark.parametrize(
    "roll, points",
    [
        ("1", 100),
        ("5", 50),
        ("1,1,1", 1000),
        ("2,2,2", 200),
        ("3,3,3", 300),
        ("4,4,4", 400),
        ("5,5,5", 500),
        ("6,6,6", 600),
        ("1,1,1,5,2,3", 1050),
        ("2,2,2,2,2,2", 400),
        ("1,1,1,1", 1100),
    ],
)
def test_farkle(roll, points):
    assert best(scorer("farkle"), roll)[0] == points


def test_farkle_has_no_pairs_or_straights():
    sc = scorer("farkle")
    assert sc.set_asides(parse_roll("2,2,3,3,4,4", sc.rs)) == []
    assert best(sc, "1,2,3,4,5,6") == (150, 2)


@pytest.mark.parametrize(
    "roll, points, used",
    [
        ("2,2,3,3,4,4", 1500, 6),  # three pairs
        ("2,2,2,2,3,3", 1500, 6),  # four of a kind + a pair counts as three pairs
        ("1,1,1,1,5,5", 1500, 6),  # ... and beats 1000 + 100 + 50 + 50
        ("1,2,3,4,5,6", 2500, 6),  # the straight
        ("2,2,2,2", 1000, 4),
        ("2,2,2,2,2", 2000, 5),
        ("2,2,2,2,2,2", 3000, 6),
        ("6,6,6,6,6,6", 3000, 6),
        ("1,1,1,1", 1100, 4),  # three 1s + a 1 beat four of a kind
        ("3,3,3,3,1", 1100, 5),
        ("2,2,3,3,4,6", 0, 0),
    ],
)
def test_farkle_cardgames(roll, points, used):
    # the values of domsleee/farkle's calc_score tests
    assert best(scorer("farkle-cardgames"), roll) == (points, used)


def test_pig():
    sc = scorer("pig")
    assert sc.set_asides((1,)) == []
    for f in range(2, 7):
        assert sc.set_asides((f,)) == [(f, (f,))]


# --------------------------------------------------------------------------- roll classes


@pytest.mark.twin
@pytest.mark.parametrize(
    "n, bust",
    [(1, Fraction(2, 3)), (2, Fraction(4, 9)), (3, Fraction(5, 18)), (4, Fraction(17, 108)), (5, Fraction(25, 324))],
)
def test_classic_bust_probabilities(n, bust):
    rc = roll_classes(load_ruleset("classic"), n)
    assert Fraction(rc.bust_weight, rc.denominator) == bust
    assert rc.denominator == 6**n


@pytest.mark.twin
@pytest.mark.parametrize("name", ["classic", "admission", "six-dice", "pig", "farkle", "farkle-cardgames"])
def test_class_weights_sum_to_all_rolls(name):
    rs = load_ruleset(name)
    for n in range(1, rs.dice + 1):
        rc = roll_classes(rs, n)
        assert int(rc.weight.sum()) == rs.faces**n
        assert all(int(w) > 0 for w in rc.weight)
        # every sorted roll appears once, and its class's weight is the sum of its orderings
        assert len({tuple(r) for r in rc.rolls.tolist()}) == len(rc.rolls)


def _class_options(rc, k: int) -> set[tuple[int, int]]:
    lo, hi = int(rc.opt_ptr[k]), int(rc.opt_ptr[k + 1])
    return {(int(p), int(u)) for p, u in zip(rc.opt_points[lo:hi], rc.opt_used[lo:hi])}


@pytest.mark.twin
@pytest.mark.parametrize(
    "name, overrides, top",
    [
        ("classic", (), 5),
        ("six-dice", ("keep=any",), 4),
        ("farkle-cardgames", (), 4),
        ("zilch", (), 6),  # six dice: the "nothing" pattern
    ],
)
def test_roll_classes_match_reference_scorer(name, overrides, top):
    """Brute force over every ordered roll: the class options are RollScorer's set-asides."""
    rs = load_ruleset(name, overrides)
    sc = RollScorer(rs)
    u = rs.unit
    for n in range(1, top + 1):
        rc = roll_classes(rs, n)
        index = {tuple(r): int(k) for r, k in zip(rc.rolls.tolist(), rc.roll_class.tolist())}
        seen: Counter = Counter()
        for roll in itertools.product(range(1, rs.faces + 1), repeat=n):
            k = index[sc.counts(roll)]
            seen[k] += 1
            want = {(p // u, len(dice)) for p, dice in sc.set_asides(roll)}
            assert all(p % u == 0 for p, _ in sc.set_asides(roll))
            assert _class_options(rc, k) == want, (roll, k)
            assert bool(rc.instant[k]) == sc.is_instant_win(roll)
        assert {k: int(w) for k, w in enumerate(rc.weight)} == dict(seen)


@pytest.mark.twin
def test_six_dice_six_dice_classes_match_reference_scorer():
    """Six dice of the six-dice game (sorted rolls, weighted by their orderings)."""
    from math import factorial

    rs = load_ruleset("six-dice")
    sc = RollScorer(rs)
    rc = roll_classes(rs, 6)
    total: Counter = Counter()
    for c, k in zip(rc.rolls.tolist(), rc.roll_class.tolist()):
        roll = tuple(f + 1 for f, m in enumerate(c) for _ in range(m))
        w = factorial(6)
        for m in c:
            w //= factorial(m)
        total[k] += w
        if sc.is_instant_win(roll):
            assert rc.instant[k]
            continue
        want = {(p // rs.unit, len(dice)) for p, dice in sc.set_asides(roll)}
        assert _class_options(rc, k) == want, roll
    assert {k: int(w) for k, w in enumerate(rc.weight)} == dict(total)
    assert sum(total.values()) == 6**6


def test_pure_and_compiled_kernels_agree():
    from thousand import kernel

    try:
        compiled = kernel.backend("compiled")
    except ImportError:
        pytest.skip("the compiled kernel is not built")
    for name in ("classic", "six-dice", "farkle-cardgames"):
        rs = load_ruleset(name)
        for n in range(1, rs.dice + 1):
            a, b = kernel.backend("pure").roll_classes(rs, n), compiled.roll_classes(rs, n)
            for x, y in zip(a.__dict__.values(), b.__dict__.values()):
                assert (x == y) if isinstance(x, int) else (x.tolist() == y.tolist())
