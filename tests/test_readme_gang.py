"""The README's "Gang scheduling" example is a recorded run: its code is tools/gang_example.py's
(between the markers) and its printed block is what the script prints, on a real server."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tools" / "gang_example.py"


def _readme_blocks() -> tuple[str, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Gang scheduling"):text.index("The messages and the")]
    code, out = re.findall(r"```(?:python)?\n(.*?)```", section, re.S)[:2]
    return code, out


def _script_block() -> str:
    src = SCRIPT.read_text(encoding="utf-8")
    body = src[src.index("# --- README begin\n"):src.index("    # --- README end")]
    lines = body.splitlines()[1:]
    return "".join(line[4:] + "\n" if line.strip() else "\n" for line in lines)


def test_the_readme_quotes_the_example_scripts_questions() -> None:
    assert _readme_blocks()[0] == _script_block()


def test_the_readme_shows_what_the_example_prints() -> None:
    run = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, check=True, timeout=120
    )
    assert run.stdout == _readme_blocks()[1]
    assert "minCount (3) cannot be satisfied" in run.stdout and "SCHEDULED" in run.stdout
