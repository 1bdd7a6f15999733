"""docs/api.md runs: its examples are the public API's documentation, held to the code."""

import doctest
from pathlib import Path

import thousand

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def test_api_page_examples_run():
    res = doctest.testfile(str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert res.attempted > 20 and res.failed == 0


def test_public_names_are_documented():
    for name in thousand.__all__:
        if name.startswith("__") or name.isupper():
            continue
        obj = getattr(thousand, name)
        assert obj.__doc__ and obj.__doc__.strip(), name
    assert "solve" in thousand.__all__ and "Solution" in thousand.__all__
