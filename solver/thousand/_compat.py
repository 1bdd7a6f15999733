"""The module paths of the flat layout before 0.2, for one release: ``import thousand.duel``
gives :mod:`thousand.solvers.duel` with a DeprecationWarning that names the new path.

A module that kept its name as a package (``thousand.rules``, ``thousand.engine``,
``thousand.kernel``, ``thousand.play``) offers its former names from the package itself and
needs nothing here. ``thousand.tables`` (a module before 0.2, a package in 0.2) is
``thousand.storage`` now, named for what it holds beside the data folder ``tables/``; its
old paths, the package's modules included, are served here. A module whose names were split among new
modules (:data:`MOVED` lists more than one) is served by a stand-in module that looks each
name up in them in order. CHANGELOG.md lists every move.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings

# old module (under thousand.) -> the new module(s) that hold its names
MOVED: dict[str, tuple[str, ...]] = {
    "errors": ("base.errors",),
    "i18n": ("base.i18n",),
    "choices": ("base.choices",),
    "scoring": ("rules.scoring",),
    "presets": ("rules.presets",),
    "poker": (),
    "poker.rules": ("rules.poker",),
    "_pure": ("kernel._pure",),
    "_sim_pure": ("kernel._sim_pure",),
    "_kernel": ("kernel._kernel",),
    "_sim": ("kernel._sim",),
    "game": ("engine.player",),
    "turn": ("engine.ends", "solvers.turn"),
    "states": ("engine.states",),
    "poker.turn": ("engine.poker",),
    "race": ("solvers.race",),
    "duel": ("solvers.duel",),
    "store": ("solvers.store",),
    "lastturn": ("solvers.lastturn",),
    "rate": ("solvers.rate",),
    "nplayer": ("solvers.nplayer",),
    "approx": ("solvers.approx",),
    "geometric": ("solvers.geometric", "storage.geometric"),
    "advisor": ("solvers.advice",),
    "poker.advisor": ("solvers.poker_advice",),
    "poker.game": ("solvers.poker", "storage.poker"),
    "solve": ("storage.solve", "base.progress"),
    "players": ("storage.players",),
    "oracle": ("analysis.oracle",),
    "bots": ("analysis.bots",),
    "exact": ("analysis.exact",),
    "montecarlo": ("analysis.montecarlo",),
    "blunders": ("analysis.blunders",),
    "evaluate": ("analysis.evaluate",),
    "simulate": ("analysis.simulate",),
    "seats": ("analysis.seats",),
    "chart": ("analysis.chart",),
    "poker.bots": ("analysis.poker_bots",),
    "poker.evaluate": ("analysis.poker_evaluate",),
    "poker.play": ("play.poker",),
    # 0.2's package of tables, renamed after 0.2
    "tables": ("storage",),
    "tables.files": ("storage.files",),
    "tables.solve": ("storage.solve",),
    "tables.players": ("storage.players",),
    "tables.geometric": ("storage.geometric",),
    "tables.poker": ("storage.poker",),
    "tables.cluster": ("storage.cluster",),
}


def _has_children(old: str) -> bool:
    """Whether old paths lie below ``old`` (then its stand-in is a package of them)."""
    return any(k.startswith(old + ".") for k in MOVED)


def _caller_level() -> int:
    """The warning's stack level of the code that imported (past the import machinery)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and (
        frame.f_code.co_filename.startswith("<frozen importlib") or frame.f_code.co_filename == __file__
    ):
        frame, level = frame.f_back, level + 1
    return level


class _Moved(importlib.abc.Loader):
    def __init__(self, old: str, new: tuple[str, ...]):
        self.old, self.new = old, new

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        name = f"thousand.{self.old}"
        targets = [f"thousand.{n}" for n in self.new]
        warnings.warn(
            f"{name} is now {' and '.join(targets) or 'spread over the layers'} "
            f"(CHANGELOG.md); the old path goes in the next release",
            DeprecationWarning,
            stacklevel=_caller_level(),
        )
        if len(targets) == 1 and not _has_children(self.old):
            # the very module, so that its identity (and monkeypatching it) is kept
            sys.modules[name] = importlib.import_module(targets[0])
            return
        modules = [importlib.import_module(t) for t in targets]

        def __getattr__(attr: str):
            for m in modules:
                if hasattr(m, attr):
                    return getattr(m, attr)
            raise AttributeError(f"module {name!r} has no attribute {attr!r}")

        module.__getattr__ = __getattr__
        module.__doc__ = f"Deprecated: the names of {', '.join(targets)}."
        if not targets or _has_children(self.old):
            # a package of old paths (thousand.poker, thousand.tables): its modules are served
            # here too, never found again as files under a new name
            module.__path__ = []


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("thousand."):
            return None
        old = fullname[len("thousand.") :]
        if old not in MOVED:
            return None
        package = not MOVED[old] or _has_children(old)
        return importlib.machinery.ModuleSpec(fullname, _Moved(old, MOVED[old]), is_package=package)


def install() -> None:
    """Serve the old paths (after every other finder: a real module always wins)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())


__all__ = ["MOVED", "install"]
