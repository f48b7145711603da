"""The examples in README.md and docs/*.md run as tests, through Sybil
(the repository's conftest.py installs `collect_file` as pytest's hook).

pytest collects the Markdown files named in `testpaths` (pyproject.toml);
docs/findings/ is generated and has its own test (tests/test_findings.py).
Each document runs in order in a fresh folder where the repository's inputs
(models/, counterexamples/, examples/, bench/, .venv) are linked, so that
outputs such as out/ and traces never land in the working tree.

By language of a fenced block:

- `console`: each `$ ` line runs in bash; the lines up to the next `$ ` are
  its expected output. `...` on a line of its own stands for any lines,
  inside a line for any text. Times (`0.31s`), rates (`states/s`), memory
  (`MiB`) and runs of spaces are compared loosely. A command exits 0 unless
  it ends in `# exit N`; `$?` is the previous command's exit code.
- `sh`: each line runs and must exit 0; its output is not shown, so it is not compared.
- `toml`: parses; a file with `spec` and `[expect]` loads as a model file.
- `python`: runs in the document's namespace; a `test_*(txncheck)` function
  it defines is then called with the pytest plugin's `txncheck` fixture.
- `mermaid`: equals the output of the last `txncheck ...` command quoted in
  backticks before the block.
- `yaml` (a CI workflow) cannot run here and must be skipped.

A block that cannot run here carries `<!-- skip: next "reason" -->`, or
`<!-- skip: next if(zookeeper_missing, reason="...") -->`; the reason shows
in pytest's skip summary. tests/test_docs.py checks that every
fenced block has one of these languages, so none is left out unseen.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from sybil import Sybil
from sybil.parsers.markdown import CodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parent.parent
LINKED = ("models", "counterexamples", "examples", "bench")
TIMEOUT = 300  # seconds: a guard against a hung command, not a measurement


def _setup(namespace: dict) -> None:
    cwd = Path(tempfile.mkdtemp(prefix="txncheck-docs-"))
    for name in LINKED:
        (cwd / name).symlink_to(ROOT / name)
    (cwd / ".venv").symlink_to(Path(sys.prefix))
    namespace["cwd"] = cwd
    namespace["rc"] = 0
    namespace["zookeeper_missing"] = _zookeeper_missing()


def _zookeeper_missing() -> bool:
    from txncheck.reference.zkserver import ZooKeeperMissing, find_server

    try:
        find_server()
    except ZooKeeperMissing:
        return True
    return False


def _teardown(namespace: dict) -> None:
    shutil.rmtree(namespace["cwd"], ignore_errors=True)


def _env() -> dict:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(COLUMNS="120", TERM="dumb", NO_COLOR="1")
    env.pop("PYTEST_ADDOPTS", None)
    return env


def _run(namespace: dict, command: str) -> subprocess.CompletedProcess:
    # `(exit N);` restores the previous command's exit code for `echo $?`
    return subprocess.run(["bash", "-c", f"(exit {namespace['rc']}); {command}"], cwd=namespace["cwd"],
                          env=_env(), capture_output=True, text=True, timeout=TIMEOUT)


_LOOSE = [
    (re.compile(r"\d+(\.\d+)?s\b"), "<secs>"),                   # 0.31s, 7s
    (re.compile(r"[\d,]+ states/s"), "<rate> states/s"),
    (re.compile(r"[\d,]+ MiB"), "<mem> MiB"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),      # a private server's port
    (re.compile(r"[ \t]+"), " "),
]


def _loose(text: str, cwd: Path | None = None) -> list[str]:
    if cwd is not None:   # paths: the document's folder and the linked inputs are relative
        for base in (cwd, ROOT):
            text = text.replace(str(base) + "/", "").replace(str(base), ".")
    out = []
    for line in text.splitlines():
        for pattern, repl in _LOOSE:
            line = pattern.sub(repl, line)
        out.append(line.strip())
    while out and not out[-1]:
        out.pop()
    return out


def _matches(want: list[str], got: list[str]) -> bool:
    parts = []
    for line in want:
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*".join(map(re.escape, line.split("..."))) + r"\n")
    return re.fullmatch("".join(parts), "".join(x + "\n" for x in got), re.S) is not None


def evaluate_console(example) -> str | None:
    ns = example.namespace
    steps: list[tuple[str, list[str]]] = []
    for line in example.parsed.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
        elif line.strip():
            return f"output before the first $ line: {line!r}"
    for command, expected in steps:
        want_rc = 0
        m = re.search(r"#\s*exit (\d+)\s*$", command)
        if m:
            want_rc = int(m.group(1))
        r = _run(ns, command)
        ns["rc"] = r.returncode
        got = _loose(r.stdout + r.stderr, ns["cwd"])
        want = _loose("\n".join(expected))
        if r.returncode != want_rc or not _matches(want, got):
            return (f"$ {command}\nexit {r.returncode} (want {want_rc})\n--- want\n" + "\n".join(want)
                    + "\n--- got\n" + "\n".join(got))
    return None


def evaluate_sh(example) -> str | None:
    for command in example.parsed.splitlines():
        if not command.strip() or command.lstrip().startswith("#"):
            continue
        r = _run(example.namespace, command)
        if r.returncode != 0:
            return f"$ {command}\nexit {r.returncode}\n{r.stdout}{r.stderr}"
    return None


def evaluate_toml(example) -> str | None:
    text = example.parsed
    data = tomllib.loads(text)   # a TOMLDecodeError fails the example
    if "spec" in data and "expect" in data:
        from txncheck.checker.model import load_model

        path = Path(example.namespace["cwd"]) / "example-model.toml"
        path.write_text(text)
        load_model(path)
    return None


def evaluate_python(example) -> str | None:
    ns = example.namespace
    before = set(ns)
    here = os.getcwd()
    os.chdir(ns["cwd"])
    try:
        exec(compile(example.parsed, example.path, "exec"), ns)
        new_tests = [name for name in set(ns) - before if name.startswith("test_") and callable(ns[name])]
        if new_tests:
            from txncheck.checker.pytest_plugin import Txncheck

            for name in sorted(new_tests):
                ns[name](Txncheck(Path(ns["cwd"]) / "traces"))
    finally:
        os.chdir(here)
    return None


def evaluate_mermaid(example) -> str | None:
    before = example.document.text[:example.start]
    commands = re.findall(r"`(txncheck [^`]+)`", before)
    if not commands:
        return "no `txncheck ...` command quoted before the diagram"
    r = _run(example.namespace, commands[-1])
    if r.returncode != 0 or r.stdout.strip() != example.parsed.strip():
        return f"$ {commands[-1]}\nexit {r.returncode}\n--- got\n{r.stdout}{r.stderr}"
    return None


def evaluate_unrunnable(example) -> str | None:
    return "a block in this language cannot run here: mark it <!-- skip: next \"reason\" -->"


_EVALUATORS = {"console": evaluate_console, "sh": evaluate_sh, "toml": evaluate_toml,
               "python": evaluate_python, "mermaid": evaluate_mermaid, "yaml": evaluate_unrunnable}

LANGUAGES = tuple(_EVALUATORS)
DOCUMENTS = ["README.md", "docs/*.md", "docs/adr/*.md"]

collect_file = Sybil(
    parsers=[SkipParser(), *(CodeBlockParser(lang, fn) for lang, fn in _EVALUATORS.items())],
    patterns=DOCUMENTS,
    excludes=["docs/findings/*"],
    setup=_setup,
    teardown=_teardown,
    path=str(ROOT),
).pytest()
