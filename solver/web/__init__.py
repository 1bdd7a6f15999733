"""``thousand serve``: the advisor and scorekeeper as a web page for a phone at the table
(:mod:`thousand.web.app`: the application and its JSON API; :mod:`thousand.web.store`:
the saved games; :mod:`thousand.web.jobs`: tables solved in the background). Needs the
``web`` extra: ``pip install -e '.[web]'``."""
