"""What the page needs to keep score with the server away.

The page's scorekeeper (``static/rules.js``) applies the rules of a game; the rules
themselves come from here, with every state of a game: :func:`page_rules` is the
ruleset's parameters and its scoring groups exactly as the Python engine reads them
(:func:`thousand.rules.scoring.scoring_groups` expands straights and patterns, so that
expansion is never written twice). An offline phone's entries go back to the server as the
whole log (``POST /api/games/{id}/sync``) with :func:`log_digest` of the log they follow;
the server takes them only if its game is still at that log.
"""

from __future__ import annotations

from thousand.rules.ruleset import Ruleset
from thousand.rules.scoring import scoring_groups

__all__ = ["log_digest", "page_rules"]


def page_rules(rs: Ruleset) -> dict:
    """The parameters of ``rs`` that ``rules.js`` reads (see its ``Moves`` and ``Turns``)."""
    m = rs.to_mapping()
    g = scoring_groups(rs)
    return {
        "hash": rs.hash,
        "dice": rs.dice,
        "faces": rs.faces,
        "unit": rs.unit,
        "goal": rs.goal,
        "keep": rs.keep,
        "compose": rs.compose,
        "hot_dice": rs.hot_dice,
        "open_min": rs.open_min,
        "min_bank": rs.min_bank,
        "floor": rs.floor,
        "pits": m["pits"],
        "pit_attempts": rs.pit_attempts,
        "dump": list(rs.dump),
        "dump_mid_turn": rs.dump_mid_turn,
        "overtake": rs.overtake,
        "equal_turns": rs.equal_turns,
        "bolts": m["bolts"],
        "barrel": m["barrel"],
        "nothing": rs.scoring.nothing,
        "groups": [[[int(v) for v in row], int(p)] for row, p in zip(g.counts, g.points)],
        "instant": [[int(v) for v in row] for row in g.instant],
    }


def log_digest(log: list[str]) -> str:
    """32-bit FNV-1a of the entries joined by newlines, as 8 hex digits (``rules.js``'s
    ``logDigest``; entries are ASCII, the low byte of each character is the byte)."""
    h = 0x811C9DC5
    for ch in "\n".join(log):
        h = ((h ^ (ord(ch) & 0xFF)) * 0x01000193) & 0xFFFFFFFF
    return f"{h:08x}"
