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

A block that needs something this folder lacks carries
`<!-- setup: next NAME -->`, and runs with the setup of that name (SETUPS):

- `zookeeper`: a private ZooKeeper server runs for the block, and the
  address `127.0.0.1:2181` in its commands is replaced by the server's
  (the block is skipped, with the reason, where ZooKeeper is not installed);
- `broken-pending-ack`: the block's commands run with
  tests/docs_patches/broken_pending_ack/ on PYTHONPATH, whose sitecustomize
  breaks the reference implementation as the text before the block says.

A Markdown table that a command before it wrote to a file carries
`<!-- table: FILE -->` (FILE relative to the document's folder): its
`Model: ...` and `|` lines equal that file's, but for the `seconds` column.

A block that cannot run here carries `<!-- skip: next "reason" -->`, or
`<!-- skip: next if(zookeeper_missing, reason="...") -->`; the reason shows
in pytest's skip summary, and says what checks the block instead
(tests/test_docs_skipped.py checks the skipped blocks' commands and output
against the code). tests/test_docs.py checks that every
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
import unittest
from contextlib import contextmanager
from pathlib import Path

from sybil import Region, Sybil
from sybil.parsers.markdown import CodeBlockParser, SkipParser
from sybil.parsers.markdown.lexers import DirectiveInHTMLCommentLexer

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


def _env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(COLUMNS="120", TERM="dumb", NO_COLOR="1")
    env.pop("PYTEST_ADDOPTS", None)
    env.update(extra or {})
    return env


def _run(namespace: dict, command: str) -> subprocess.CompletedProcess:
    setup = namespace.get("active_setup") or {}
    for old, new in setup.get("replace", {}).items():
        command = command.replace(old, new)
    # `(exit N);` restores the previous command's exit code for `echo $?`
    return subprocess.run(["bash", "-c", f"(exit {namespace['rc']}); {command}"], cwd=namespace["cwd"],
                          env=_env(setup.get("env")), capture_output=True, text=True, timeout=TIMEOUT)


# -- setups: `<!-- setup: next NAME -->` before a block ---------------------------------

@contextmanager
def _zookeeper_setup():
    if _zookeeper_missing():
        raise unittest.SkipTest("ZooKeeper is not installed (scripts/install.sh installs it)")
    from txncheck.reference.zkserver import ZooKeeperServer

    with ZooKeeperServer() as zk:   # stopped, and its folder removed, when the block ends
        yield {"replace": {"127.0.0.1:2181": zk.hosts}}


@contextmanager
def _broken_pending_ack_setup():
    yield {"env": {"PYTHONPATH": str(ROOT / "tests" / "docs_patches" / "broken_pending_ack")}}


SETUPS = {"zookeeper": _zookeeper_setup, "broken-pending-ack": _broken_pending_ack_setup}


def _set_next_setup(example) -> None:
    example.namespace["next_setup"] = example.parsed


def parse_setups(document):
    for lexed in DirectiveInHTMLCommentLexer("setup")(document):
        m = re.fullmatch(r"next ([\w-]+)", (lexed.lexemes["arguments"] or "").strip())
        if m is None or m.group(1) not in SETUPS:
            raise ValueError(f"{document.path}: <!-- setup: next NAME --> takes one of {sorted(SETUPS)}, "
                             f"not {lexed.lexemes['arguments']!r}")
        yield Region(lexed.start, lexed.end, m.group(1), _set_next_setup)


def _table_rows(lines: list[str]) -> list[str]:
    """The `Model:` and table lines, the `seconds` column blanked (a time)."""
    rows, header, seconds = [], True, None
    for line in lines:
        if line.startswith("Model: "):
            rows.append(line)
            header = True
        elif line.startswith("|"):
            cells = line.split("|")
            if header:   # the column names, then the alignment row
                seconds = [c.strip() for c in cells].index("seconds") if "seconds" in line else None
                header = False
            elif not line.startswith("|-") and seconds is not None:
                cells[seconds] = " * "
            rows.append("|".join(cells))
    return rows


def evaluate_table(example) -> str | None:
    """The table that follows the directive, against the file it names."""
    ns = example.namespace
    path = Path(ns["cwd"]) / example.parsed
    if not path.is_file():
        return f"{example.parsed}: no such file (a command before the table writes it)"
    shown = []
    text = example.document.text
    for line in text[text.index("-->", example.start) + 3:].lstrip("\n").splitlines():
        if line and not line.startswith(("|", "Model: ")):
            break
        shown.append(line)
    want = _loose("\n".join(_table_rows(shown)))
    got = _loose("\n".join(_table_rows(path.read_text().splitlines())), ns["cwd"])
    if not want or want != got:
        return f"{example.parsed}\n--- want\n" + "\n".join(want) + "\n--- got\n" + "\n".join(got)
    return None


def parse_tables(document):
    for lexed in DirectiveInHTMLCommentLexer("table")(document):
        yield Region(lexed.start, lexed.end, (lexed.lexemes["arguments"] or "").strip(), evaluate_table)


def _with_setup(evaluate):
    """Runs a block under the setup named just before it, if any."""
    def run(example) -> str | None:
        name = example.namespace.pop("next_setup", None)
        if name is None:
            return evaluate(example)
        with SETUPS[name]() as setup:
            example.namespace["active_setup"] = setup
            try:
                return evaluate(example)
            finally:
                example.namespace["active_setup"] = None
    return run


_LOOSE = [
    (re.compile(r"\d+(\.\d+)?s\b"), "<secs>"),                   # 0.31s, 7s
    (re.compile(r"[\d,]+ states/s"), "<rate> states/s"),
    (re.compile(r"[\d,.]+ CPU s\b"), "<cpu> CPU s"),
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


_EVALUATORS = {lang: _with_setup(fn) for lang, fn in {
    "console": evaluate_console, "sh": evaluate_sh, "toml": evaluate_toml,
    "python": evaluate_python, "mermaid": evaluate_mermaid, "yaml": evaluate_unrunnable}.items()}

LANGUAGES = tuple(_EVALUATORS)
DOCUMENTS = ["README.md", "docs/*.md", "docs/adr/*.md"]

collect_file = Sybil(
    parsers=[SkipParser(), parse_setups, parse_tables, *(CodeBlockParser(lang, fn) for lang, fn in _EVALUATORS.items())],
    patterns=DOCUMENTS,
    excludes=["docs/findings/*"],
    setup=_setup,
    teardown=_teardown,
    path=str(ROOT),
).pytest()
