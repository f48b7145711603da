"""docs/tutorial.md's commands, run in order in a fresh folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

TUTORIAL = Path(__file__).resolve().parent.parent / "docs" / "tutorial.md"


def commands(text: str) -> list[tuple[str, int]]:
    out = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                cmd, _, code = line[2:].partition("# exit ")
                out.append((cmd.strip(), int(code) if code else 0))
    return out


def test_the_tutorial_has_its_steps():
    cmds = [c for c, _ in commands(TUTORIAL.read_text())]
    assert any(c.startswith("txncheck new") for c in cmds)
    assert any("check --all" in c for c in cmds) and any("--txncheck" in c for c in cmds)


def test_every_tutorial_command_runs(tmp_path):
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    for cmd, want in commands(TUTORIAL.read_text()):
        r = subprocess.run(cmd, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True)
        assert r.returncode == want, f"{cmd!r} exited {r.returncode}, want {want}\n{r.stdout}\n{r.stderr}"
        if cmd.startswith("txncheck show"):
            assert "Take" in r.stdout and "MutualExclusion" in r.stdout
        if cmd.startswith("python -m pytest"):
            assert "2 passed" in r.stdout
    assert (tmp_path / "report.xml").is_file()
