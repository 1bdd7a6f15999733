"""Test configuration: the ``heavy`` marker.

Tests marked ``heavy`` solve whole games; the pure-Python twin of the kernel
would take many minutes on them, so they run with the compiled kernel only.
The twin is held to the compiled kernel by tests/test_kernel_twin.py and by
the small solves that run in both modes.
"""

import os

import pytest

PURE = os.environ.get("THOUSAND_PURE", "") not in ("", "0")


def pytest_configure(config):
    config.addinivalue_line("markers", "heavy: solves a whole game; skipped with THOUSAND_PURE=1")


def pytest_collection_modifyitems(config, items):
    if not PURE:
        return
    skip = pytest.mark.skip(reason="heavy solve: compiled kernel only (THOUSAND_PURE=1)")
    for item in items:
        if "heavy" in item.keywords:
            item.add_marker(skip)
