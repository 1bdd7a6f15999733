"""Rulesets: the eleven presets of docs/rules.md section 8, the TOML round trip, the
hash, overrides, validation, and the game-level examples of the sources played
through :class:`thousand.engine.player.Moves` on each preset."""

from __future__ import annotations

import pytest

from thousand.base.errors import RulesetError
from thousand.engine.player import WIN, Moves, PlayerState
from thousand.rules import Ruleset, from_mapping, load_ruleset, preset_names

PRESETS = [
    "classic",
    "classic-nobarrel",
    "classic-open",
    "street",
    "kubiki",
    "admission",
    "six-dice",
    "plain",
    "pig",
    "farkle",
    "farkle-cardgames",
    "zilch",
    "poker",
]


def rs_(name: str, *overrides: str) -> Ruleset:
    return load_ruleset(name, overrides)


# --------------------------------------------------------------------------- presets


def test_preset_names_are_the_thirteen_of_rules_md():
    assert preset_names() == PRESETS
    assert preset_names("1000") == PRESETS[:-1] and preset_names("poker") == ["poker"]


@pytest.mark.parametrize("name", PRESETS)
def test_preset_loads(name):
    rs = rs_(name)
    assert rs.name == name
    assert rs.summary and "\n" not in rs.summary
    assert isinstance(rs.hash, str) and len(rs.hash) == 16


@pytest.mark.parametrize(
    "name, source",
    [
        ("classic", "000"),
        ("classic-nobarrel", "000"),
        ("classic-open", "000"),
        ("street", "000"),
        ("kubiki", "000"),
        ("admission", "002"),
        ("six-dice", "001"),
        ("pig", "Neller"),
        ("farkle", "Neller"),
        ("farkle-cardgames", "cardgames.io"),
        ("zilch", "Busche"),
        ("poker", "000"),
    ],
)
def test_summary_names_the_source(name, source):
    assert source in rs_(name).summary


def test_hashes_of_presets_are_distinct():
    hashes = [rs_(n).hash for n in PRESETS]
    assert len(set(hashes)) == len(hashes)


@pytest.mark.parametrize("name", PRESETS)
def test_to_toml_loads_back(name, tmp_path):
    rs = rs_(name)
    path = tmp_path / f"{name}-copy.toml"
    path.write_text(rs.to_toml(), encoding="utf-8")
    back = load_ruleset(str(path))
    assert back == rs
    assert back.hash == rs.hash
    assert back.to_toml() == rs.to_toml()
    assert load_ruleset(rs) == rs


@pytest.mark.parametrize(
    "name, overrides",
    [
        ("classic", ("keep=any", "bolts.penalty=50")),
        ("six-dice", ("goal=1005",)),
        ("plain", ("goal=500", "dump=[335]")),
        ("kubiki", ('barrel.kind="none"', "barrel.threshold=0", 'barrel.push_off="none"', "barrel.push_off_penalty=0")),
    ],
)
def test_overridden_to_toml_loads_back(name, overrides, tmp_path):
    rs = rs_(name, *overrides)
    path = tmp_path / "x.toml"
    path.write_text(rs.to_toml(), encoding="utf-8")
    back = load_ruleset(str(path))
    assert back == rs and back.hash == rs.hash


def test_units():
    assert rs_("classic").unit == 5
    assert rs_("six-dice").unit == 5
    assert rs_("pig").unit == 1
    assert rs_("farkle").unit == 50
    assert rs_("farkle-cardgames").unit == 50


# --------------------------------------------------------------------------- section 8, key by key

CLASSIC_SCORING = rs_("plain").scoring


def test_classic():
    rs = rs_("classic")
    assert (rs.dice, rs.faces, rs.keep, rs.hot_dice, rs.goal) == (5, 6, "all", "must_roll", 1000)
    assert rs.scoring == CLASSIC_SCORING
    assert rs.open_min == 50 and rs.floor == 0
    assert [(p.low, p.exit) for p in rs.pits] == [(200, 300), (600, 700)]
    assert rs.pit_attempts == 0
    assert rs.dump == (555,) and not rs.dump_mid_turn
    assert rs.overtake == 50
    b = rs.bolts
    assert (b.limit, b.penalty, b.consecutive) == (3, 100, False)
    assert set(b.exempt) == {"unopened", "pit", "barrel"}
    a = rs.barrel
    assert (a.kind, a.threshold, a.attempts, a.fall_penalty, a.fall_to, a.max_falls) == (
        "points",
        880,
        3,
        100,
        "penalty",
        3,
    )
    assert a.push_off == "fall" and a.overshoots == 0
    assert not rs.equal_turns


def _without(rs: Ruleset, *fields: str) -> dict:
    m = rs.to_mapping()
    for f in ("name", "summary") + fields:
        m.pop(f)
    return m


def test_classic_nobarrel_is_classic_without_barrel():
    rs, c = rs_("classic-nobarrel"), rs_("classic")
    assert rs.barrel.kind == "none"
    assert rs.barrel == type(rs.barrel)()
    assert _without(rs, "barrel") == _without(c, "barrel")


def test_classic_open():
    rs, c = rs_("classic-open"), rs_("classic")
    a = rs.barrel
    assert (a.kind, a.threshold, a.overshoots, a.fall_penalty, a.max_falls, a.attempts) == ("exact", 0, 6, 100, 1, 0)
    assert a.push_off == "none"
    assert _without(rs, "barrel") == _without(c, "barrel")
    assert not rs.on_barrel(990)  # no band: only exactness matters


def test_street():
    rs = rs_("street")
    assert rs.scoring == CLASSIC_SCORING and rs.keep == "all" and rs.hot_dice == "must_roll"
    assert rs.open_min == 50 and rs.floor == -200
    assert [(p.low, p.exit) for p in rs.pits] == [(200, 300), (600, 700), (900, 1000)]
    assert rs.dump == (555,) and rs.dump_mid_turn
    assert rs.overtake == 50
    assert (rs.bolts.limit, rs.bolts.penalty, rs.bolts.consecutive, rs.bolts.exempt) == (3, 50, True, ())
    assert rs.barrel.kind == "none"


def test_kubiki():
    rs = rs_("kubiki")
    assert rs.scoring == CLASSIC_SCORING and rs.keep == "all" and rs.hot_dice == "must_roll"
    assert rs.open_min == 50 and rs.floor == 0 and rs.pits == ()
    assert rs.dump == (555,) and rs.dump_mid_turn and rs.overtake == 50
    assert (rs.bolts.limit, rs.bolts.penalty) == (3, 50)
    a = rs.barrel
    assert (a.kind, a.threshold, a.push_off, a.push_off_penalty) == ("region", 900, "penalty", 50)
    assert rs.on_barrel(900) and rs.on_barrel(995) and not rs.on_barrel(895)


def test_admission():
    rs = rs_("admission")
    assert rs.scoring == CLASSIC_SCORING
    assert (rs.dice, rs.keep, rs.hot_dice, rs.open_min, rs.goal) == (5, "any", "confirm", 75, 1000)
    assert rs.pits == () and rs.dump == () and rs.overtake == 0 and rs.bolts.limit == 0
    a = rs.barrel
    assert (a.kind, a.threshold, a.attempts, a.max_falls, a.push_off) == ("points", 850, 0, 0, "open_min")


def test_six_dice():
    rs = rs_("six-dice")
    sc = rs.scoring
    assert (rs.dice, rs.keep, rs.hot_dice, rs.goal, rs.open_min) == (6, "any", "must_roll", 1000, 0)
    assert sc.singles == CLASSIC_SCORING.singles
    assert {k for k in sc.kinds if k[0] <= 5} == set(CLASSIC_SCORING.kinds)
    six = {f: p for c, f, p in sc.kinds if c == 6}
    assert {f: p for f, p in six.items() if f > 1} == {2: 400, 3: 600, 4: 800, 5: 1000, 6: 1200}
    assert sc.straights == () and sc.patterns == ()
    assert sc.instant_win == ((1, 6),)
    assert [(p.low, p.exit) for p in rs.pits] == [(200, 305), (500, 605)]
    assert rs.pit_attempts == 3
    a = rs.barrel
    assert (a.kind, a.threshold, a.attempts, a.fall_to, a.max_falls) == ("points", 880, 3, "entry", 3)
    b = rs.bolts
    assert (b.limit, b.penalty, b.consecutive, set(b.exempt)) == (3, 50, True, {"pit", "barrel"})
    assert rs.equal_turns
    assert rs.dump == () and rs.overtake == 0


def test_farkle():
    rs = rs_("farkle")
    assert (rs.dice, rs.keep, rs.hot_dice, rs.goal) == (6, "any", "free", 10000)
    assert dict(rs.scoring.singles) == {1: 100, 5: 50}
    assert {(f, p) for c, f, p in rs.scoring.kinds} == {(1, 1000), (2, 200), (3, 300), (4, 400), (5, 500), (6, 600)}
    assert all(c == 3 for c, _, _ in rs.scoring.kinds)
    assert rs.scoring.straights == () and rs.scoring.patterns == ()
    assert rs.open_min == 0 and rs.pits == () and rs.bolts.limit == 0 and rs.barrel.kind == "none"


def test_farkle_cardgames():
    rs, f = rs_("farkle-cardgames"), rs_("farkle")
    sc = rs.scoring
    assert sc.singles == f.scoring.singles
    assert {k for k in sc.kinds if k[0] == 3} == set(f.scoring.kinds)
    for count, pts in ((4, 1000), (5, 2000), (6, 3000)):
        assert {(fc, p) for c, fc, p in sc.kinds if c == count} == {(x, pts) for x in range(1, 7)}
    assert sc.patterns == ((2, 3, False, 1500),)
    assert sc.straights == (((1, 2, 3, 4, 5, 6), 2500),)
    assert _without(rs, "scoring") == _without(f, "scoring")


def test_pig_and_plain():
    pig = rs_("pig")
    assert (pig.dice, pig.hot_dice, pig.goal) == (1, "free", 100)
    assert dict(pig.scoring.singles) == {2: 2, 3: 3, 4: 4, 5: 5, 6: 6}
    plain = rs_("plain")
    assert plain.open_min == 0 and plain.pits == () and plain.barrel.kind == "none"


# --------------------------------------------------------------------------- overrides and the hash


def test_override_keep_any():
    rs, base = rs_("classic", "keep=any"), rs_("classic")
    assert rs.keep == "any" and rs.hash != base.hash


def test_override_goal():
    rs, base = rs_("plain", "goal=500"), rs_("plain")
    assert rs.goal == 500 and rs.hash != base.hash
    assert Moves(rs).bank(PlayerState(450), 50) == WIN
    assert Moves(base).bank(PlayerState(450), 50) != WIN


def test_override_bolts_penalty():
    rs, base = rs_("classic", "bolts.penalty=50"), rs_("classic")
    assert rs.bolts.penalty == 50 and rs.hash != base.hash
    x = PlayerState(400, bolts=2)
    assert Moves(rs).zero(x).score == 350
    assert Moves(base).zero(x).score == 300


def test_override_dotted_and_toml_values():
    rs = rs_(
        "classic",
        'barrel.kind="none"',
        "barrel.threshold=0",
        "barrel.attempts=0",
        "barrel.fall_penalty=0",
        "barrel.max_falls=0",
        "barrel.push_off=none",
    )
    assert rs == load_ruleset("classic-nobarrel", ["name=classic", f"summary={rs_('classic').summary}"])
    assert rs.hash == rs_("classic-nobarrel").hash
    assert rs_("classic", "pits=[]").pits == ()
    assert rs_("classic", "dump=[555, 775]").dump == (555, 775)


def test_hash_ignores_name_and_summary():
    a = rs_("classic")
    b = rs_("classic", "name=other", 'summary="another summary"')
    assert (b.name, b.summary) == ("other", "another summary")
    assert a != b and a.hash == b.hash


def test_hash_is_stable_across_loads():
    assert rs_("six-dice").hash == rs_("six-dice").hash
    assert rs_("six-dice", "goal=1000").hash == rs_("six-dice").hash


# --------------------------------------------------------------------------- validation

BAD = [
    (("classic", "colour=red"), "unknown key"),
    (("classic", "barrel.height=3"), "unknown key"),
    (("classic", "goal=abc"), "goal must be int"),
    (("classic", 'dice="5"'), "dice must be int"),
    (("classic", "bolts.consecutive=1"), "bolts.consecutive must be bool"),
    (("classic", "pits=[{low=200, exit=300}, {low=250, exit=350}]"), "overlap"),
    (("classic", "unit=10"), "not a multiple of the unit 10"),
    (("classic-open", "goal=1003"), "cannot be reached exactly"),
    (("classic", "barrel.kind=none"), "barrel.kind is none"),
    (("plain", "barrel.threshold=880"), "barrel.kind is none"),
    (("admission", "goal=800"), "barrel.threshold"),
    (("classic", "goal=500"), "above the goal 500"),
    (("classic", "barrel.threshold=1200"), "barrel.threshold"),
    (("classic-nobarrel", "barrel.fall_to=entry"), "barrel.kind is none"),
    (("classic-open", "barrel.fall_to=entry"), "only to a points barrel"),
    (("kubiki", "barrel.fall_to=entry"), "only to a points barrel"),
    (("classic-open", "barrel.attempts=3"), "not barrel.attempts"),
    (("kubiki", "barrel.fall_penalty=100"), "a region barrel has no attempts or falls"),
    (("classic", "barrel.attempts=0", "barrel.push_off=none"), "barrel.attempts is 0"),
    (("classic", "keep"), "key=value"),
    (("classic", "=5"), "key=value"),
    (("classic", "goal.x=1"), "not a table"),
    (("classic", "keep=some"), "keep must be one of"),
    (("classic", 'bolts.exempt=["asleep"]'), "bolts.exempt"),
    (("nosuchpreset",), "unknown ruleset"),
    (("/nonexistent/rules.toml",), "unknown ruleset"),
]


@pytest.mark.parametrize("args, message", BAD)
def test_bad_rulesets(args, message):
    spec, *overrides = args
    with pytest.raises(RulesetError) as exc:
        load_ruleset(spec, overrides)
    text = str(exc.value)
    assert message in text
    assert "\n" not in text


def test_points_barrel_without_attempt_limit_still_falls_by_push_off():
    # unlimited attempts, but climbing the barrel still knocks the others off (a fall)
    rs = rs_("classic", "barrel.attempts=0")
    m = Moves(rs)
    x = PlayerState(880)
    for _ in range(5):
        x = m.zero(x)
    assert x.score == 880
    o = m.affect_opponent(PlayerState(880), 800, 880, True)
    assert o.score == 780 and o.falls == 1


def test_invalid_toml_file(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text("dice = 5\ngoal = = 1000\n", encoding="utf-8")
    with pytest.raises(RulesetError, match="not valid TOML"):
        load_ruleset(str(p))


def test_missing_keys():
    with pytest.raises(RulesetError, match="missing key 'dice'"):
        from_mapping({"goal": 100, "scoring": {"singles": {"1": 1}}})
    with pytest.raises(RulesetError, match="scores nothing"):
        from_mapping({"dice": 1, "goal": 100})


# --------------------------------------------------------------------------- the sources' examples


def test_classic_pit_example():
    # «если игрок имеет 225 очков ... он обязан набрать не менее 300 минус 225, т.е 75»
    m = Moves(rs_("classic"))
    assert not m.can_bank(PlayerState(225), 70)
    assert m.can_bank(PlayerState(225), 75)
    assert m.bank(PlayerState(225), 75).score == 300


def test_classic_opening():
    m = Moves(rs_("classic"))
    x = m.initial()
    assert not x.opened
    assert not m.can_bank(x, 45) and m.can_bank(x, 50)
    y = m.bank(x, 50)
    assert y.opened and y.score == 50
    assert m.can_bank(y, 5)


def test_street_pit_example():
    # «У игрока 195 очков. 1) ... выпало 60 ... на бочке 255 очков. Потом ему надо будет
    #  накидать 45 очков»; «2) Ему выпало 10 очков ... накидывать 95 очков»
    m = Moves(rs_("street"))
    assert m.can_bank(PlayerState(195), 60) and m.bank(PlayerState(195), 60).score == 255
    assert not m.can_bank(PlayerState(255), 40) and m.can_bank(PlayerState(255), 45)
    assert m.bank(PlayerState(195), 10).score == 205
    assert not m.can_bank(PlayerState(205), 90) and m.can_bank(PlayerState(205), 95)
    # the last «бочка» 900-1000 is the finish
    assert not m.can_bank(PlayerState(925), 70)
    assert m.bank(PlayerState(925), 75) == WIN


def test_street_dump_mid_turn_example():
    # «У игрока 530 очков ... выпадает 25 очков. Игроку сразу пишут 555 приравнивая к нулю
    #  без права кидать дальше кубики»
    m = Moves(rs_("street"))
    x = PlayerState(530)
    assert m.mid_turn(x, 25) == "dump"
    y = m.mid_turn_end(x, 25, "dump")
    assert y.score == 0 and y.opened


def test_classic_dump_at_bank():
    m = Moves(rs_("classic"))
    x = PlayerState(530)
    assert m.mid_turn(x, 25) is None
    y = m.bank(x, 25)
    assert y.score == 0 and y.opened
    # ... and on a penalty: overtaken at 605, the opponent lands on 555 -> 0
    assert m.affect_opponent(PlayerState(605), 600, 650, False).score == 0
    # ... and a bolt penalty from 655 (outside the pits when nothing is exempt)
    m2 = Moves(rs_("classic", "bolts.exempt=[]"))
    assert m2.zero(PlayerState(655, bolts=2)).score == 0


def test_overtaking_example():
    # «у одного игрока 550 очков. У второго 500. Второй ... записывает 70 очков, то с первого
    #  списывают 50 очков»
    for name in ("classic", "street", "kubiki"):
        m = Moves(rs_(name))
        assert m.affect_opponent(PlayerState(550), 500, 570, False).score == 500
        assert m.affect_opponent(PlayerState(550), 500, 550, False).score == 550  # equal: no
    assert Moves(rs_("six-dice")).affect_opponent(PlayerState(550), 500, 570, False).score == 550


def test_street_bolts_before_opening():
    # «При входе в игру с игрока за 3 болта будет сниматься по 50 очков (-50, -100,…)»
    m = Moves(rs_("street"))
    x = m.initial()
    for expected in (-50, -100, -150, -200, -200):
        for _ in range(3):
            x = m.zero(x)
        assert x.score == expected and not x.opened
    # a bank in between resets the count (three in a row)
    y = m.zero(m.zero(PlayerState(100)))
    assert y.bolts == 2
    y = m.bank(y, 10)
    assert y.bolts == 0


def test_kubiki_no_minus_before_opening():
    m = Moves(rs_("kubiki"))
    x = m.initial()
    for _ in range(3):
        x = m.zero(x)
    assert x.score == 0 and not x.opened
    y = PlayerState(300, bolts=2)
    assert m.zero(y).score == 250


def test_classic_bolts_exempt():
    m = Moves(rs_("classic"))
    assert m.zero(PlayerState(100, bolts=2)).score == 0
    assert m.zero(PlayerState(250, bolts=2)).bolts == 2  # in a pit: no bolt
    assert m.zero(PlayerState(0, opened=False)).bolts == 0  # unopened: no bolt
    assert m.zero(PlayerState(880, bolts=2)).bolts == 2  # on the barrel: no bolt


def test_classic_barrel():
    m = Moves(rs_("classic"))
    assert m.bank(PlayerState(850), 100).score == 880  # cap
    x = PlayerState(880)
    assert not m.can_bank(x, 115) and m.bank(x, 120) == WIN
    for _ in range(2):
        x = m.zero(x)
    assert x.score == 880 and x.barrel_tries == 2
    x = m.zero(x)
    assert x.score == 780 and x.falls == 1
    # push-off: climbing the barrel knocks the other player off (a fall)
    o = m.affect_opponent(PlayerState(880, falls=1), 800, 880, True)
    assert o.score == 780 and o.falls == 2
    o = m.affect_opponent(PlayerState(880, falls=2), 800, 880, True)
    assert o.score == 0 and o.falls == 0  # the 3rd fall: 0


def test_classic_open_overshoot():
    # «Если ... набирает сумму большую 1000 (при этом он может даже еще не открыть игру!)»
    m = Moves(rs_("classic-open"))
    assert m.mid_turn(PlayerState(950), 55) == "overshoot"
    assert m.mid_turn(PlayerState(0, opened=False), 1005) == "overshoot"
    assert m.mid_turn(PlayerState(950), 50) is None
    assert m.bank(PlayerState(950), 50) == WIN
    x = PlayerState(950)
    for k in range(1, 6):
        x = m.mid_turn_end(x, 55, "overshoot")
        assert x.score == 950 and x.overshoots == k and x.bolts == 0
    x = m.mid_turn_end(x, 55, "overshoot")
    assert x.score == 0  # max_falls 1: to 0


def test_kubiki_region_barrel_and_push_off():
    # «после последнего броска вы набираете 925 очков, то для победы вам обязательно нужно
    #  набрать 75 и более очков»; «Если кто-то влез на бочку следом за вами, то вы слетаете
    #  на 50 очков»
    m = Moves(rs_("kubiki"))
    assert not m.can_bank(PlayerState(925), 70)
    assert m.bank(PlayerState(925), 75) == WIN
    assert m.bank(PlayerState(850), 75).score == 925  # no cap
    o = m.affect_opponent(PlayerState(990), 880, 905, True)
    assert o.score == 940
    assert m.zero(PlayerState(925, bolts=2)).score == 875  # failures are bolts


def test_admission_barrel_and_push_off():
    # «игроку, достигшему ... более 850 очков, записывают все равно только 850»; «вы автоматически
    #  слетаете со своей бочки и оказываетесь на позиции допуска»
    m = Moves(rs_("admission"))
    assert m.bank(PlayerState(800), 75).score == 850
    x = PlayerState(850)
    assert not m.can_bank(x, 145) and m.bank(x, 150) == WIN
    for _ in range(10):
        x = m.zero(x)
    assert x.score == 850  # no attempt limit
    assert m.affect_opponent(PlayerState(850), 700, 850, True).score == 75
    assert not m.can_bank(m.initial(), 70) and m.can_bank(m.initial(), 75)


def test_six_dice_barriers():
    # «Набрав, скажем, 245 очков, уже в следующей значащей попытке надо добраться минимум до 305»
    m = Moves(rs_("six-dice"))
    assert not m.can_bank(PlayerState(245), 55) and m.can_bank(PlayerState(245), 60)
    # «во второй барьер вы попали на 560 ... с предыдущих 360. Не набрав несчастные 45 очков
    #  ..., вы опуститесь обратно на 360»
    x = m.bank(PlayerState(360), 200)
    assert x.score == 560 and x.pit_entry == 360
    assert not m.can_bank(x, 40) and m.can_bank(x, 45)
    x = m.zero(x)
    x = m.zero(x)
    assert x.score == 560 and x.pit_tries == 2
    x = m.zero(x)
    assert x.score == 360
    # no bolts inside a barrier
    assert x.bolts == 0


def test_six_dice_barrel():
    # «если у вас, допустим, 840 очков и ... бросили четыре единицы, в таблицу вам запишут
    #  ровно 880»; «трижды побываете на бочке и не выиграете. Падение ... до нуля»
    m = Moves(rs_("six-dice"))
    x = m.bank(PlayerState(840), 200)
    assert x.score == 880 and x.barrel_entry == 840
    for fall in (1, 2):
        for _ in range(3):
            x = m.zero(x)
        assert x.score == 840 and x.falls == fall
        x = m.bank(x, 40)
        assert x.score == 880
    for _ in range(3):
        x = m.zero(x)
    assert x.score == 0 and x.falls == 0
    assert m.bank(PlayerState(880), 120) == WIN
    assert not m.can_bank(PlayerState(880), 115)


def test_six_dice_bolts_in_a_row():
    # «за три нулевые попытки подряд списывается 50 очков»
    m = Moves(rs_("six-dice"))
    x = PlayerState(100)
    for _ in range(3):
        x = m.zero(x)
    assert x.score == 50 and x.bolts == 0


def test_six_dice_barrier_entered_from_above_by_a_penalty():
    # docs/rules.md section 6: pushed into the barrier by a penalty, the player drops to just below it
    m = Moves(rs_("six-dice"))
    x = PlayerState(620)
    for _ in range(3):
        x = m.zero(x)
    # the entry from above is kept as min(620, low - unit) = 495: the roll-back's target,
    # one state for every entry from above (docs/rules.md section 6)
    assert x.score == 570 and x.pit_entry == 495
    for _ in range(3):
        x = m.zero(x)
    assert x.score == 495
