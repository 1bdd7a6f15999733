"""Messages in the user's language: English (the source strings) or Russian.

The mechanism is GNU gettext: every message the user reads is written in English
inside ``_()`` (or ``ngettext()`` where a number chooses the form), and the
Russian catalog ``locale/ru/LC_MESSAGES/thousand.po`` (compiled to ``thousand.mo``
beside it, with ``msgfmt``) maps each one to its translation, with the game's own
terms (болт, яма, бочка, самосвал). Messages are looked up when they are shown, so
the language can change at any time (the web page switches per request).

The language is, in this order: :func:`set_language` (the ``--lang`` option of
every command), ``THOUSAND_LANG``, then the locale (``LANGUAGE``, ``LC_ALL``,
``LC_MESSAGES``, ``LANG``, as gettext reads them); a language without a catalog
is English. Names that the program reads back (presets, ``--set`` keys, log
entries such as ``roll 1,5,5``, JSON fields) stay English in every language.
"""

from __future__ import annotations

import gettext
import os
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

__all__ = [
    "DOMAIN",
    "LANGUAGES",
    "LOCALE_DIR",
    "N_",
    "WORDS",
    "dice_count",
    "language",
    "ngettext",
    "set_language",
    "using",
]

DOMAIN = "thousand"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
LANGUAGES = ("en", "ru")

# the language chosen by set_language/using, per thread and task (a web server answers
# requests in several languages at once)
_chosen: ContextVar[str | None] = ContextVar("thousand_language", default=None)
_cache: dict[str, gettext.NullTranslations] = {}


def _translations(lang: str) -> gettext.NullTranslations:
    if lang not in _cache:
        _cache[lang] = (
            gettext.NullTranslations()
            if lang == "en"
            else gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang], fallback=True)
        )
    return _cache[lang]


def language() -> str:
    """The language messages are shown in now: ``"en"`` or ``"ru"``."""
    chosen = _chosen.get()
    if chosen is not None:
        return chosen
    env = os.environ.get("THOUSAND_LANG", "")
    if env:
        return _known(env)
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        val = os.environ.get(var, "")
        if val:
            # LANGUAGE may list several (ru:en); the first one with a catalog wins
            for item in val.split(":"):
                code = _known(item, None)
                if code:
                    return code
            return "en"
    return "en"


def _known(value: str, default: str | None = "en") -> str | None:
    code = value.split(".")[0].split("_")[0].split("-")[0].lower()
    return code if code in LANGUAGES else default


def set_language(lang: str | None) -> None:
    """Show messages in ``lang`` (``"en"``, ``"ru"``; ``None`` goes back to the
    environment's choice). Raises ValueError for a language without a catalog."""
    if lang is not None and lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}: one of {', '.join(LANGUAGES)}")
    _chosen.set(lang)


@contextmanager
def using(lang: str | None):
    """Messages in ``lang`` inside the ``with`` block (``None``: the environment's choice)."""
    if lang is not None and lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}: one of {', '.join(LANGUAGES)}")
    token = _chosen.set(lang)
    try:
        yield
    finally:
        _chosen.reset(token)


def _(message: str) -> str:
    """``message`` in the current language."""
    return _translations(language()).gettext(message)


def N_(message: str) -> str:
    """Mark ``message`` for the catalog without translating it (translated later by
    ``_(variable)``)."""
    return message


# words the code holds in variables and translates when shown (marked here for the catalog)
WORDS = (
    N_("roll"),
    N_("stop"),
    N_("win"),
    N_("bust"),
    N_("keep"),
    N_("dump"),
    N_("overshoot"),
    N_("first"),
    N_("second"),
)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of a message that the number ``n`` takes in the current language
    (Russian has three: 1 кубик, 2 кубика, 5 кубиков)."""
    return _translations(language()).ngettext(singular, plural, n)


def dice_count(n: int) -> str:
    """``n`` dice in words: "1 die", "3 dice"."""
    return ngettext("{n} die", "{n} dice", n).format(n=n)
