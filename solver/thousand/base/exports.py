"""Names a package offers from its modules, imported on first use (PEP 562).

A package's ``__init__`` names where each of its public names lives instead of importing
them, so that importing one module of a package (a poker-dice answer, a ruleset check)
does not load the others, and an ``__init__`` adds no import to the layer graph.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

__all__ = ["lazy_names"]


def lazy_names(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``where[name]`` is the module (relative to
    the package, such as ``".ruleset"``) that defines ``name``; the value is imported on first
    access and kept in the package's namespace."""
    import sys

    def __getattr__(name: str):
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(where) | set(vars(sys.modules[package])))

    return __getattr__, __dir__
