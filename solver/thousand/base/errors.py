"""Errors a user can cause; the CLI prints each as one line and exits with code 2."""

__all__ = ["BotError", "Refused", "RulesetError", "StateError", "TableError", "ThousandError"]


class ThousandError(Exception):
    """Bad input: a ruleset, a game state, a table, a bot. The message is one line."""


class RulesetError(ThousandError, ValueError):
    """A ruleset that cannot be loaded or is inconsistent."""


class StateError(ThousandError, ValueError):
    """A game state the rules cannot produce, or a roll that cannot be."""


class Refused(StateError):
    """A move the rules do not allow now (stop before opening, a set-aside that does not
    score, ...); the message is the reason."""


class TableError(ThousandError):
    """A stored table that is missing, corrupt or made for other rules."""


class BotError(ThousandError):
    """A bot that cannot be loaded or started, or that misbehaves beyond what is counted."""
