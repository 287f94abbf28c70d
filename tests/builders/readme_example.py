"""A README example that is a recorded run: the code block quoted from a script (between its
`# --- README begin` / `# --- README end` markers) and the output block the script prints."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

__all__ = ["ROOT", "readme_blocks", "script_block", "script_output"]

ROOT = Path(__file__).resolve().parent.parent.parent


def readme_blocks(start: str, end: str) -> tuple[str, str]:
    """The first code block and the output block after it, in the README between `start`
    and `end`."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(start):text.index(end)]
    code, out = re.findall(r"```(?:python)?\n(.*?)```", section, re.S)[:2]
    return code, out


def script_block(script: Path) -> str:
    """The script's lines between the markers, dedented by one level."""
    src = script.read_text(encoding="utf-8")
    body = src[src.index("# --- README begin\n"):src.index("    # --- README end")]
    lines = body.splitlines()[1:]
    return "".join(line[4:] + "\n" if line.strip() else "\n" for line in lines)


def script_output(script: Path) -> str:
    run = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True, timeout=120
    )
    return run.stdout
