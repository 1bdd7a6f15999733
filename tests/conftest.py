"""Test configuration: the ``heavy`` marker and a private table cache.

Tests marked ``heavy`` solve whole games; the pure-Python twin of the kernel
would take many minutes on them, so they run with the compiled kernel only.
The twin is held to the compiled kernel by tests/test_kernel_twin.py and by
the small solves that run in both modes.
"""

import os
import tempfile

import pytest

PURE = os.environ.get("THOUSAND_PURE", "") not in ("", "0")


def pytest_configure(config):
    config.addinivalue_line("markers", "heavy: solves a whole game; skipped with THOUSAND_PURE=1")
    # tables solved by the tests go to a cache of this session's own, so that neither the
    # user's cache nor a THOUSAND_TABLES directory changes what the tests find
    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="thousand-tests-")
    # and the scorekeeper's autosaves to a folder of their own
    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="thousand-tests-state-")
    os.environ.pop("THOUSAND_TABLES", None)
    # the tests read English messages whatever the machine's locale (tests/test_i18n.py
    # switches to Russian where it checks the catalog)
    os.environ["THOUSAND_LANG"] = "en"


def pytest_collection_modifyitems(config, items):
    if not PURE:
        return
    skip = pytest.mark.skip(reason="heavy solve: compiled kernel only (THOUSAND_PURE=1)")
    for item in items:
        if "heavy" in item.keywords:
            item.add_marker(skip)
