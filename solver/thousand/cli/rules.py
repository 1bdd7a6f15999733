"""`thousand rules list|show|check`: the presets, a ruleset resolved in full, a ruleset file checked."""

from __future__ import annotations

import json

import click

from thousand.rules.ruleset import load_ruleset, preset_names

from .group import Group
from .options import (
    emit,
    json_option,
    rules_argument,
    ruleset_of,
    set_option,
)

__all__ = ["rules", "rules_check", "rules_list", "rules_show"]


@click.group(cls=Group)
def rules() -> None:
    """List, show and check rulesets."""


@rules.command("list")
@json_option
def rules_list(as_json: bool) -> None:
    """Every preset with a one-line summary."""
    items = []
    for name in preset_names():
        rs = load_ruleset(name)
        items.append({"name": name, "summary": rs.summary, "hash": rs.hash, "game": getattr(rs, "game", "1000")})
    width = max(len(i["name"]) for i in items)
    emit({"presets": items}, as_json, "\n".join(f"{i['name']:<{width}}  {i['summary']}" for i in items))


@rules.command("show")
@rules_argument
@set_option
@json_option
def rules_show(rules: str, overrides: tuple[str, ...], as_json: bool) -> None:
    """The fully resolved ruleset as TOML (it loads back to the same hash)."""
    rs = ruleset_of(rules, overrides, poker=True)
    unit = getattr(rs, "unit", None)
    if as_json:
        click.echo(json.dumps({"name": rs.name, "hash": rs.hash, "unit": unit, "ruleset": rs.to_mapping()}))
        return
    click.echo(f"# ruleset hash {rs.hash}" + (f", unit {unit} points" if unit else ", poker dice"))
    click.echo(rs.to_toml(), nl=False)


@rules.command("check")
@rules_argument
@set_option
@json_option
def rules_check(rules: str, overrides: tuple[str, ...], as_json: bool) -> None:
    """Check a ruleset (a TOML file or a preset with overrides): one line, its hash."""
    rs = ruleset_of(rules, overrides, poker=True)
    unit = getattr(rs, "unit", None)
    emit(
        {"ok": True, "name": rs.name, "hash": rs.hash, "unit": unit},
        as_json,
        f"{rules}: a valid ruleset ({rs.name}, hash {rs.hash}, " + (f"unit {unit} points)" if unit else "poker dice)"),
    )
