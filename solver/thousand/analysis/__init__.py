"""thousand.analysis: bots and what they cost -- the table's value of an action, built-in and
external bots, exact and Monte Carlo evaluation, blunders, the reports of ``thousand
evaluate``, the compiled game simulator's front, and the strategy charts.

May import every layer below it: base, rules, kernel, engine, solvers, tables.
"""
