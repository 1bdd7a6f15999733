"""``python -m thousand.cli``: the ``thousand`` command."""

from . import main

main()
