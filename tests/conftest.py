"""Test configuration: the ``slow`` and ``twin`` markers and a private table cache.

``slow`` marks the tests that solve whole games (seconds to minutes each with the
compiled kernel): ``pytest -m "not slow"`` is a quick run. The pure-Python twin of the
kernel would take many minutes on them, so with ``THOUSAND_PURE=1`` they are skipped.

``twin`` marks the tests whose numbers come from the kernel in use and are checked against
a computation that does not use it: exact fractions, published values, the reference
scorer, the turn engine, reference turns written apart from the kernel. CI runs them a
second time on the pure twin (``THOUSAND_PURE=1 pytest -m twin``), which holds the twin
to those same independent values. The tests that compare the two kernels directly
(tests/test_kernel_twin.py, and the twin checks in test_scoring, test_simulate, test_duel
and test_nplayer) build both backends themselves and run in the compiled run.
"""

import os
import tempfile

import pytest

PURE = os.environ.get("THOUSAND_PURE", "") not in ("", "0")


def pytest_configure(config):
    # tables solved by the tests go to a cache of this session's own (of each xdist worker's
    # own), so that neither the user's cache nor a THOUSAND_TABLES directory changes what
    # the tests find
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
    skip = pytest.mark.skip(reason="slow solve: compiled kernel only (THOUSAND_PURE=1)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of two worker processes and its client, one per test module that asks."""
    from thousand.solvers.cluster import connect

    c, cluster = connect("local:2")
    yield c
    c.close()
    cluster.close()
