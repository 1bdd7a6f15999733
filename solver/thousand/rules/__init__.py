"""thousand.rules: the rules of every game -- :class:`Ruleset` (TOML presets and files,
``--set`` overrides, validation, the content hash), scoring a roll, poker dice's rules.

May import thousand.base only. The names of the former module ``thousand.rules`` are
offered here (:mod:`thousand.rules.ruleset`, :mod:`thousand.rules.text`).
"""

from thousand.base.exports import lazy_names

_WHERE = {
    "BARREL_KINDS": ".ruleset",
    "Barrel": ".ruleset",
    "Bolts": ".ruleset",
    "COMPOSE_MODES": ".ruleset",
    "EXEMPT_STATUSES": ".ruleset",
    "FALL_TO": ".ruleset",
    "FORMAT": ".ruleset",
    "HOT_DICE_MODES": ".ruleset",
    "KEEP_MODES": ".ruleset",
    "MAX_GOAL_UNITS": ".ruleset",
    "PUSH_OFF": ".ruleset",
    "Pit": ".ruleset",
    "Ruleset": ".ruleset",
    "Scoring": ".ruleset",
    "from_mapping": ".ruleset",
    "load_ruleset": ".ruleset",
    "preset_names": ".ruleset",
    "ruleset_from_mapping": ".ruleset",
    "LATER_KEYS": ".text",
    "content_hash": ".text",
    "dump_toml": ".text",
}
__getattr__, __dir__ = lazy_names(__name__, _WHERE)
__all__ = sorted(_WHERE)
