"""thousand.env: environments for bots that learn, PettingZoo and Gymnasium (``pip install
'thousand[rl]'``), and OpenSpiel's Pig.

May import every layer below it (base to play); nothing imports it but the user.

``thousand.env.env(rules=..., players=N)`` and ``thousand.env.raw_env`` are the PettingZoo
AEC environment of any dice ruleset (:mod:`thousand.env.aec`, PettingZoo's module
convention); importing this package registers the Gymnasium environment
``thousand/Duel-v0`` (:mod:`thousand.env.duel`), one agent against bots. Both observe and
act through :class:`thousand.analysis.observation.Encoding`, which
``thousand evaluate --bot policy:MODULE:ATTR`` uses too. docs/bots.md has the guide.
"""

from __future__ import annotations

from thousand.base.errors import ThousandError

__all__ = ["DuelEnv", "env", "raw_env"]

try:
    from .duel import DuelEnv, register
except ImportError as exc:  # gymnasium missing: the rest of thousand works without it
    _missing = exc
else:
    register()
    _missing = None


def __getattr__(name):
    if name in ("env", "raw_env"):
        try:
            from . import aec
        except ImportError as exc:
            raise ThousandError(
                f"the PettingZoo environment needs pettingzoo: pip install 'thousand[rl]' ({exc})"
            ) from None
        return getattr(aec, name)
    if name == "DuelEnv" and _missing is not None:
        raise ThousandError(f"the Gymnasium environment needs gymnasium: pip install 'thousand[rl]' ({_missing})")
    raise AttributeError(name)
