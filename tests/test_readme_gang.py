"""The README's "Gang scheduling" example is a recorded run: its code is tools/gang_example.py's
(between the markers) and its printed block is what the script prints, on a real server."""

from __future__ import annotations

from tests.builders.readme_example import ROOT, readme_blocks, script_block, script_output

SCRIPT = ROOT / "tools" / "gang_example.py"
SECTION = ("## Gang scheduling", "The messages and the")


def test_the_readme_quotes_the_example_scripts_questions() -> None:
    assert readme_blocks(*SECTION)[0] == script_block(SCRIPT)


def test_the_readme_shows_what_the_example_prints() -> None:
    out = script_output(SCRIPT)
    assert out == readme_blocks(*SECTION)[1]
    assert "minCount (3) cannot be satisfied" in out and "SCHEDULED" in out
