"""thousand.base: what every layer shares -- the errors a user can cause, the language of
every message, the names a user chooses among, progress lines, the version.

Imports nothing of thousand: every other layer may import it.
"""
