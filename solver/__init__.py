"""thousand: the exact optimal-play solver for the dice game 1000 and its family."""

__version__ = "0.1.0"
