"""Solved tables shipped with thousand (installed as the subpackage ``thousand.shipped_tables``).

One folder per ruleset hash and objective; see solver/thousand/storage/files.py for the format.
"""
