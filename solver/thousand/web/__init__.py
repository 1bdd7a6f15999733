"""thousand.web: ``thousand serve``, the advisor and scorekeeper as a web page for a phone at
the table (:mod:`.app`: the application and its JSON API; :mod:`.store`: the saved games;
:mod:`.jobs`: tables solved in the background). Needs the ``web`` extra.

May import every layer below it (base to play); only the command line imports it.
"""
