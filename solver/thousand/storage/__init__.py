"""thousand.storage: solved tables on disk and the one entry point that solves or loads them
-- :func:`~thousand.storage.solve.solve` and :class:`~thousand.storage.solve.Solution`, the
N-player tables, the geometric approximation's and poker dice's tables.

May import every layer below it: base, rules, kernel, engine, solvers. The names of the
former module ``thousand.storage`` are offered here (:mod:`thousand.storage.files`).
"""

from thousand.base.exports import lazy_names

_WHERE = {
    "ARRAYS": ".files",
    "FIXED32": ".files",
    "FIXED32_BOUND": ".files",
    "FIXED32_SCALE": ".files",
    "MODEL_VERSION": ".files",
    "PLAYERS": ".files",
    "POKER_FIELDS": ".files",
    "StoredTable": ".files",
    "TABLE_FORMAT": ".files",
    "TABLE_NAME": ".files",
    "Table": ".files",
    "VALUE_RANGE": ".files",
    "file_sha256": ".files",
    "find_table": ".files",
    "folder_name": ".files",
    "load_table": ".files",
    "save_table": ".files",
    "search_path": ".files",
    "shipped_tables": ".files",
    "state_fields": ".files",
    "stored_tables": ".files",
    "user_cache": ".files",
    "write_target": ".files",
}
__getattr__, __dir__ = lazy_names(__name__, _WHERE)
__all__ = sorted(_WHERE)
