"""Bots: the rules of a decision, answers, loaders, and the JSON-lines protocol with
bots that misbehave (they are counted or stopped with one line, never a traceback)."""

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from thousand.analysis.bots import BotState, ProcessBot, coerce_action, fallback, load_bot
from thousand.analysis.evaluate import run_evaluation
from thousand.analysis.exact import exact_duel
from thousand.base.errors import BotError, ThousandError
from thousand.engine import TurnRules, TurnState
from thousand.rules import load_ruleset

HERE = Path(__file__).parent / "bots"
PY = sys.executable
PIG = load_ruleset("pig", ("goal=30",))


def state(rs, roll, t=0, me=None, opp=None):
    engine = TurnRules(rs)
    x = me or engine.moves.initial()
    return BotState.at(engine, TurnState(x, t, len(roll), roll), opp or x)


def test_legal_actions_pig_and_plain():
    st = state(PIG, (4,), t=5)
    assert [(a.keep, a.roll, a.then) for a in st.legal] == [((4,), False, "stop"), ((4,), True, "roll")]
    assert state(PIG, (1,), t=5).legal == ()
    plain = load_ruleset("plain")
    st = state(plain, (1, 3, 3, 4, 5))
    assert {(a.keep, a.roll) for a in st.legal} == {((1, 5), False), ((1, 5), True)}
    # all five dice scored: hot dice must be rolled again (must_roll), no stop
    st = state(plain, (1, 1, 1, 5, 5), t=0)
    assert [(a.roll, a.then) for a in st.legal] == [(True, "roll (compulsory)")]


def test_coerce_answers():
    st = state(PIG, (4,), t=5)
    stop, roll = st.legal
    assert coerce_action(st, "stop") == stop and coerce_action(st, "roll") == roll
    assert coerce_action(st, {"keep": [4], "then": "roll"}) == roll
    assert coerce_action(st, ([4], "stop")) == stop and coerce_action(st, ((4,), True)) == roll
    for bad, kind in (
        (42, "malformed"),
        ("jump", "malformed"),
        ({"keep": [4]}, "malformed"),
        ({"keep": [5], "then": "roll"}, "illegal"),
        ({"keep": "x", "then": "roll"}, "malformed"),
    ):
        with pytest.raises(BotError) as e:
            coerce_action(st, bad)
        assert e.value.kind == kind
    # where the rules force the continuation, "then" does not matter
    st = state(load_ruleset("plain"), (1, 1, 1, 5, 5))
    assert coerce_action(st, {"keep": [1, 1, 1, 5, 5], "then": "stop"}) == st.legal[0]
    assert fallback(state(PIG, (4,), t=5)) == stop


@pytest.mark.parametrize(
    "spec,msg",
    [
        ("nonsense", "unknown bot"),
        ("hold:x", "whole number"),
        ("no_such_module_xyz:bot", "cannot import"),
        (f"{HERE}/missing.py:x", "no such file"),
        (f"{HERE}/pybots.py:nothing", "no attribute"),
        (f"{HERE}/pybots.py:Broken", "creating the bot failed"),
        (f"{HERE}/pybots.py:not_a_bot", "no decide"),
        ("exec:", "empty"),
        ("exec:/no/such/program", "cannot start"),
    ],
)
def test_load_errors_are_one_line(spec, msg):
    with pytest.raises(BotError) as e:
        load_bot(spec, PIG)
    assert msg in str(e.value) and "\n" not in str(e.value)


def test_python_bots_and_counted_faults():
    eng = TurnRules(PIG)
    for name, kind in (("Raises", "raised"), ("Garbage", "malformed"), ("Illegal", "illegal")):
        bot = load_bot(f"{HERE}/pybots.py:{name}", PIG)
        st = state(PIG, (4,), t=5)
        assert bot.choose(st) == fallback(st)
        assert bot.faults.counts == {kind: 1}
    fn = load_bot(f"{HERE}/pybots.py:greedy", PIG)
    assert fn.choose(state(PIG, (4,), t=5)).roll
    # a bot that raises every time: the evaluation stops with one line once faults pile up
    bot = load_bot(f"{HERE}/pybots.py:Raises", PIG)
    with pytest.raises(BotError, match="faults, giving up"):
        exact_duel(eng, bot, load_bot("hold:10", PIG), None)


def _proc(mode, *args, timeout=0.3):
    return ProcessBot(
        f"{PY} {HERE}/misbehave.py {mode} {' '.join(args)}", PIG, "duel", timeout=timeout, start_timeout=2.0
    )


def test_process_bot_faults_and_cleanup():
    st = state(PIG, (4,), t=5)
    for mode, kind in (("garbage", "malformed"), ("illegal", "illegal")):
        bot = _proc(mode)
        assert bot.choose(st) == fallback(st) and bot.faults.counts == {kind: 1}
        proc = bot.proc
        bot.close()
        assert proc.poll() is not None
    ok = _proc("ok")
    assert ok.name == "misbehave-ok" and ok.choose(st).roll and not ok.faults.total
    ok.close()
    slow = _proc("slow")
    slow.choose(st)
    slow.choose(st)  # late: counted, the fallback played
    assert slow.faults.counts == {"late": 1}
    time.sleep(0.4)
    assert slow.choose(st).roll  # the late answer to the earlier request is skipped by its id
    slow.close()


def test_process_bot_hangs_dies_and_silence():
    st = state(PIG, (4,), t=5)
    bot = _proc("hang", timeout=0.2)
    t0 = time.monotonic()
    with pytest.raises(BotError, match="did not answer"):
        for _ in range(5):
            bot.choose(st)
    proc = bot.proc
    bot.close()
    assert time.monotonic() - t0 < 5 and proc.poll() is not None
    bot = _proc("die", "1")
    bot.choose(st)
    with pytest.raises(BotError, match=r"exited \(code 3\).*dying on purpose"):
        bot.choose(st)
    bot.close()
    with pytest.raises(BotError, match="handshake"):
        _proc("nohello")


def test_process_bot_in_an_evaluation_never_tracebacks():
    with pytest.raises(ThousandError, match="exited"):
        run_evaluation(PIG, f"exec:{PY} {HERE}/misbehave.py die 5", "hold:10", games=20, exact=False, progress=False)
    rep = run_evaluation(PIG, f"exec:{PY} {HERE}/misbehave.py garbage", "hold:10", games=4, exact=False, progress=False)
    assert rep["json"]["faults"]["misbehave-garbage"]["counts"]["malformed"] > 0


@pytest.mark.skipif(shutil.which("perl") is None, reason="perl is not installed")
def test_perl_bot_plays_like_hold():
    """The Perl example bot of docs/bots.md: its exact value equals the built-in hold:10's."""
    perl = run_evaluation(PIG, f"exec:perl {HERE}/hold.pl 10", "optimal", games=40, seed=5, progress=False)
    ref = run_evaluation(PIG, "hold:10", "optimal", games=0, progress=False)
    assert perl["json"]["bot"] == "perl-hold:10"
    assert "faults" not in perl["json"]
    assert perl["exact"].value_first == pytest.approx(ref["exact"].value_first, abs=1e-12)
    assert perl["exact"].value_second == pytest.approx(ref["exact"].value_second, abs=1e-12)


def test_python_bot_file_plays_like_hold():
    py = run_evaluation(PIG, f"{HERE}/pybots.py:Hold", "optimal", games=0, progress=False)
    ref = run_evaluation(PIG, "hold:10", "optimal", games=0, progress=False)
    assert py["exact"].value_first == pytest.approx(ref["exact"].value_first, abs=1e-12)


def test_process_bot_close_releases_its_files():
    def fds():
        return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0

    _proc("ok").close()  # warm up
    before = fds()
    for _ in range(3):
        bot = _proc("ok")
        assert bot.choose(state(PIG, (4,), t=5)).roll
        bot.close()
        bot.close()  # twice is harmless
    for _ in range(3):
        with pytest.raises(BotError):
            ProcessBot("/no/such/program", PIG, "duel")
    assert fds() == before
