"""The names a user chooses among (objectives, chart kinds, the exact-evaluation budget),
kept apart from the modules that implement them so that the command line can offer them
without importing the solvers (a poker-dice answer should not wait for the 1000 kernel)."""

from .objectives import CHOSEN as OBJECTIVES  # the registry's names: thousand.base.objectives

__all__ = ["ADVICE_MODES", "CHART_KINDS", "EXACT_BUDGET", "OBJECTIVES", "REVIEW_OBJECTIVES", "SEATS"]

CHART_KINDS = ("stop", "win", "rules")
ADVICE_MODES = ("auto", "duel", "race")  # where the scorekeeper's and the review's values come from
REVIEW_OBJECTIVES = ("win", "turn")  # what a reviewed decision gives up: win probability, or points
EXACT_BUDGET = 1_500_000  # decision states the exact evaluation may ask a bot about

# a player's place in each round (equal_turns), as the CLI names it
SEATS = ("first", "second", "third", "fourth", "fifth", "sixth")
