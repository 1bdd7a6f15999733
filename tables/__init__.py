"""Solved tables shipped with thousand (installed as the package ``thousand_tables``).

One folder per ruleset hash and objective; see solver/tables.py for the format.
"""
