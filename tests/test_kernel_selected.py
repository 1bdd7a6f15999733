"""The kernel in use is the one asked for: CI must not test the pure twin twice by accident."""

import os

import pytest

from thousand import kernel

# the kernel in use against independent computations: run on the
# pure twin too (tests/conftest.py)
pytestmark = pytest.mark.twin


def test_selected_kernel():
    pure = os.environ.get("THOUSAND_PURE", "") not in ("", "0")
    if pure:
        assert kernel.IMPLEMENTATION == "pure"
    elif os.environ.get("CI"):
        # CI installs the package, which builds the extension: it must load
        assert kernel.IMPLEMENTATION == "compiled"
    else:
        pytest.skip(f"local run with the {kernel.IMPLEMENTATION} kernel")
