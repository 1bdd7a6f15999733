"""Reading what nobody vouches for, and writing what must not be lost.

Input from a file, a request body, a bot or the command line is parsed here with a bound
on how deeply it may nest (the formats of this program are flat: a save file is two
levels deep, a ruleset three), so that ``[[[[...]]]]`` of any depth is one clear error
and never a ``RecursionError`` from the parser; and it is quoted back cut short, so that
an error line stays one readable line whatever was typed.

A file that is acknowledged to the user (a saved game, a token) is written durably:
to a temporary file beside it, flushed and fsync'ed, renamed into place, and the folder
fsync'ed, so that a kill or a power cut at any moment leaves the old file or the new one,
never a torn one, and an answer given after :func:`write_durably` returned is never lost.
"""

from __future__ import annotations

import contextlib
import json
import os
import tomllib
from pathlib import Path

from thousand.base.errors import ThousandError
from thousand.base.i18n import _

__all__ = [
    "MAX_DEPTH",
    "InputError",
    "cut",
    "ensure_private_folder",
    "load_json",
    "load_toml",
    "nesting_depth",
    "output_file",
    "write_durably",
]

MAX_DEPTH = 32  # the deepest nesting any input of this program may have
QUOTE = 80  # characters of a user's input quoted back in an error line


class InputError(ThousandError, ValueError):
    """Input that cannot be parsed, or nests deeper than :data:`MAX_DEPTH`; one line."""


def cut(text: object, limit: int = QUOTE) -> str:
    """``text`` as one line of at most about ``limit`` characters: whitespace runs become one
    space, and a longer text keeps its start and end around ``…(N characters)…``."""
    one = " ".join(str(text).split())
    if len(one) <= limit:
        return one
    head, tail = one[: limit * 2 // 3], one[-(limit // 4) :]
    return f"{head}…({len(one)} characters)…{tail}"


def nesting_depth(text: str, toml: bool = False) -> int:
    """The deepest bracket nesting of JSON (or, with ``toml``, TOML) text outside its strings
    and comments, counted without recursion: what :func:`load_json` and :func:`load_toml`
    bound by :data:`MAX_DEPTH` before any parser runs."""
    return _depth(text, "\"'", "#") if toml else _depth(text, '"')


def _depth(text: str, quotes: str, comment: str | None = None) -> int:
    """The deepest bracket nesting in ``text`` outside its strings (and comments), found
    without recursion: an upper bound of what a parser would build. ``quotes``: the string
    delimiters (a backslash escapes inside ``"``); ``comment``: what starts a line comment."""
    depth = deepest = 0
    quote = None
    escaped = in_comment = False
    for ch in text:
        if in_comment:
            in_comment = ch != "\n"
        elif quote is not None:
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in quotes:
            quote = ch
        elif ch == comment:
            in_comment = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def load_json(text: str | bytes, what: str = "the input") -> object:
    """``json.loads`` of input nobody vouches for: :class:`InputError` (one line) for text
    that is not JSON or nests deeper than :data:`MAX_DEPTH`."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(_("{0} is not UTF-8 text").format(what)) from None
    if nesting_depth(text) > MAX_DEPTH:
        raise InputError(_("{0} nests deeper than {1} levels").format(what, MAX_DEPTH))
    try:
        return json.loads(text)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise InputError(_("{0} nests deeper than {1} levels").format(what, MAX_DEPTH)) from None
    except ValueError as exc:
        raise InputError(_("{0} is not JSON ({1})").format(what, cut(exc, 60))) from None


def load_toml(text: str, what: str = "the input") -> dict:
    """``tomllib.loads`` of input nobody vouches for: :class:`InputError` (one line) for text
    that is not TOML or nests deeper than :data:`MAX_DEPTH`."""
    if nesting_depth(text, toml=True) > MAX_DEPTH:
        raise InputError(_("{0} nests deeper than {1} levels").format(what, MAX_DEPTH))
    try:
        return tomllib.loads(text)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise InputError(_("{0} nests deeper than {1} levels").format(what, MAX_DEPTH)) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(_("{0} is not valid TOML: {1}").format(what, cut(exc, 100))) from None


def _fsync_folder(folder: Path) -> None:
    # a rename is durable once the folder's entry is; some file systems cannot open a folder
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_durably(path: Path, data: str | bytes, mode: int = 0o600) -> None:
    """Write ``data`` to ``path`` so that it survives a kill or a power cut the moment this
    returns (the module's docstring): a temporary file of permissions ``mode`` beside it,
    flushed, fsync'ed, renamed into place, the folder fsync'ed. The folder must exist
    (:class:`OSError` otherwise); a failure leaves the old file as it was."""
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)  # O_CREAT's mode is masked by the umask, and an old file kept its own
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_folder(path.parent)


def ensure_private_folder(folder: Path) -> Path:
    """Create ``folder`` (and its parents) if needed and make it this user's alone (0700):
    the program's own state folders (saved games, tokens), never a folder the user named
    for an output file."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if folder.stat().st_mode & 0o077:
        os.chmod(folder, 0o700)
    return folder


def output_file(path: str | os.PathLike, what: str = "output") -> Path:
    """The path of a file the user asked to be written, checked before any work: its folder
    must exist (no folder is created on the user's behalf) and the path must not be a folder.
    :class:`InputError` (one line) otherwise."""
    p = Path(path)
    folder = p.parent
    if p.is_dir():
        raise InputError(_("{0} {1} is a folder, not a file").format(what, cut(path)))
    if not folder.is_dir():
        raise InputError(_("{0} {1}: the folder {2} does not exist").format(what, cut(path), cut(folder)))
    return p
