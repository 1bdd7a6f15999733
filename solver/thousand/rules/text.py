"""The text of a ruleset: reading its mapping, its canonical TOML and its content hash
(the table's key).

Shared by every kind of ruleset (the 1000 family and poker dice), so that both write and
hash their mappings the same way.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from thousand.base.errors import RulesetError
from thousand.base.i18n import _

__all__ = ["LATER_KEYS", "MappingReader", "content_hash", "dump_toml"]


class MappingReader:
    """Reads one table of a ruleset mapping, complaining about unknown keys and wrong types."""

    def __init__(self, table: Any, where: str):
        if not isinstance(table, dict):
            raise RulesetError(_("{0} must be a table").format(where or "ruleset"))
        self.table, self.where, self.used = table, where, set()

    def _name(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def get(self, key: str, kind: type | tuple, default: Any = None, required: bool = False):
        self.used.add(key)
        if key not in self.table:
            if required:
                raise RulesetError(_("missing key {0!r}").format(self._name(key)))
            return default
        v = self.table[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        ok = isinstance(v, kinds) and not (isinstance(v, bool) and bool not in kinds)
        if not ok:
            names = "/".join(k.__name__ for k in kinds)
            raise RulesetError(_("{0} must be {1}, got {2!r}").format(self._name(key), names, v))
        return v

    def choice(self, key: str, options: tuple[str, ...], default: str) -> str:
        v = self.get(key, str, default)
        if v not in options:
            raise RulesetError(_("{0} must be one of {1}, got {2!r}").format(self._name(key), ", ".join(options), v))
        return v

    def sub(self, key: str) -> MappingReader:
        return MappingReader(self.get(key, dict, {}), self._name(key))

    def done(self) -> None:
        extra = sorted(set(self.table) - self.used)
        if extra:
            raise RulesetError(_("unknown key {0!r}").format(self._name(extra[0])))


# keys added after format 1, hashed only when they differ from their default, so that every
# earlier ruleset keeps its hash (and its stored tables)
LATER_KEYS = {("min_bank",): 0, ("scoring", "nothing"): 0, ("compose",): "best"}


def content_hash(mapping: Mapping[str, Any], fmt: int) -> str:
    """16 hex digits of the SHA-256 of a ruleset mapping without its name and summary, with
    the layout version ``fmt``: equal rules, equal hash, whatever they are called."""
    m = {k: (dict(v) if isinstance(v, dict) else v) for k, v in mapping.items() if k not in ("name", "summary")}
    for path, default in LATER_KEYS.items():
        node = m
        for p in path[:-1]:
            node = node.get(p, {})
        if node.get(path[-1], default) == default:
            node.pop(path[-1], None)
    m["format"] = fmt
    blob = json.dumps(m, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- TOML writer


def _toml_scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_scalar(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_scalar(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {v!r} as TOML")


def _toml_key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() and k.isascii() else json.dumps(k)


def dump_toml(mapping: Mapping[str, Any], prefix: str = "") -> str:
    """Write a mapping of scalars, lists, tables and arrays of tables as TOML."""
    lines, tables, arrays = [], [], []
    for k, v in mapping.items():
        if isinstance(v, dict) and not prefix.endswith("kinds") and k != "singles":
            tables.append((k, v))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            arrays.append((k, v))
        else:
            lines.append(f"{_toml_key(k)} = {_toml_scalar(v)}")
    out = "\n".join(lines) + ("\n" if lines else "")
    for k, v in tables:
        name = f"{prefix}.{_toml_key(k)}" if prefix else _toml_key(k)
        out += f"\n[{name}]\n" + dump_toml(v, name)
    for k, v in arrays:
        name = f"{prefix}.{_toml_key(k)}" if prefix else _toml_key(k)
        for item in v:
            out += f"\n[[{name}]]\n" + "\n".join(f"{_toml_key(a)} = {_toml_scalar(b)}" for a, b in item.items()) + "\n"
    return out
