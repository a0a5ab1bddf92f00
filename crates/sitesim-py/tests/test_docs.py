"""The Python API page of the docs (docs/reference/python.md) is what the installed package's
docstrings say: scripts/python-api.py generates it, and this test fails until the committed page
is regenerated after a docstring or signature changes."""

import importlib.util

from _cli import ROOT


def test_the_python_api_page_is_current():
    spec = importlib.util.spec_from_file_location("python_api", ROOT / "scripts" / "python-api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = (ROOT / "docs" / "reference" / "python.md").read_text(encoding="utf-8")
    assert module.page() == committed, (
        "docs/reference/python.md is stale: run "
        "`python scripts/python-api.py > docs/reference/python.md` and commit it"
    )
