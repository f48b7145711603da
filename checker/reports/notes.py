"""The human-written part of a finding report: a front-matter file beside the model.

`models/<system>/<stem>.finding.md` sits beside `models/<system>/<stem>.toml`.
It is Markdown (so it reads well on its own), and not `.toml`, so the gate and
the tests that glob `models/**/*.toml` never take it for a model. It opens
with TOML between `+++` lines, then has level-2 sections:

    +++
    title = "A late send is admitted after the commit"   # the report's title
    system = "Apache Pulsar, PIP-473 as merged"          # for the index
    code = "apache/pulsar@ec708a828947"                  # the ONE commit the code was read at (per system)
    status = "found by the model; ..."                   # one line, for the index
    fix = "late-write-fixed.toml"                        # optional: the model of the fix
    files = ["apache/pulsar@442b4cd20c3e:pulsar-broker/src/.../MetadataPendingAckStore.java"]
                                                         # optional: other files read, each at its own commit
    fault = "publishPutOp"                               # optional: the action whose (last) step is the fault,
                                                         #   when the property only fails later
    same_as = "pas-restart-merged.toml"                  # optional: the same defect as that model's report:
                                                         #   no page of its own; that page names this model
    +++

    ## Impact                            (one paragraph, required)
    ## Where in the code                 (required: permalinks repo@commit:path#Lline)
    ## Known upstream?                   (required: issues and PRs searched, with links,
                                          or "none found" and the queries)
    ## Who can trigger it                (required: stock client and broker settings,
                                          or the non-default condition it needs)
    ## Why the upstream tests miss it    (required)
    ## What the model abstracts away     (required)
    ## The fix                           (optional: what the fix model changes)

`txncheck report` copies these sections into the generated page as written,
so regenerating a report never loses them.

Code is cited by permalink, `owner/repo@commit:path#L123` (or `#L12-L20`), every
one of them at the front matter's `code` commit, or, for a file `files` lists,
at the commit it names for that file (the search index keeps each file at the
commits that changed it, so not every file exists at `code`): `load_notes`
refuses a note whose permalinks into that repository name another commit, and
tests/test_findings.py checks that every report has some, at one commit per system. A release that the current code no longer has is cited by
its tag (`apache/kafka@3.9.0-rc3:path#L1`), which is not a commit and so is not
held to `code`. Everything else in the page (the
diagram, the steps, the replay, the fix's figures, the commands) is computed.
Without `fix`, the fix model is `<stem>-fixed.toml` (`-merged` replaced by
`-fixed`) when that file exists.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from ..itf import read_untrusted_text
from ..model import ModelError

SUFFIX = ".finding.md"
KEYS = {"title", "system", "code", "status", "fix", "files", "fault", "same_as"}
FILE = re.compile(r"(?P<repo>[\w.-]+/[\w.-]+)@(?P<commit>[0-9a-f]{12,40}):(?P<path>[\w./-]+)\Z")
REQUIRED_KEYS = ("title", "system", "code", "status")
SECTIONS = ("Impact", "Where in the code", "Known upstream?", "Who can trigger it", "Why the upstream tests miss it",
            "What the model abstracts away", "The fix")
REQUIRED_SECTIONS = SECTIONS[:6]
CODE = re.compile(r"(?P<repo>[\w.-]+/[\w.-]+)@(?P<commit>[0-9a-f]{12,40})\Z")
PERMALINK = re.compile(r"(?P<repo>[\w.-]+/[\w.-]+)@(?P<ref>[\w.-]+):(?P<path>[\w./-]+)#L(?P<line>\d+)(?:-L\d+)?")
HEX = re.compile(r"[0-9a-f]{7,40}\Z")


@dataclass(frozen=True)
class Permalink:
    repo: str
    ref: str
    path: str
    line: int

    @property
    def is_commit(self) -> bool:
        return bool(HEX.match(self.ref))


def permalinks(text: str) -> list[Permalink]:
    """Every `owner/repo@ref:path#Lline` in `text`."""
    return [Permalink(m["repo"], m["ref"], m["path"], int(m["line"])) for m in PERMALINK.finditer(text)]


def same_commit(a: str, b: str) -> bool:
    """Two abbreviations of one commit (one a prefix of the other)."""
    return a.startswith(b) or b.startswith(a)
MAX_BYTES = 256 * 1024


class NotesError(ModelError):
    """A bad front-matter file (exit 2); the message names the file, in one line."""


@dataclass(frozen=True)
class Notes:
    path: Path
    title: str
    system: str
    code: str
    status: str
    fix: str | None = None
    sections: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)   # path -> the commit it was read at (other than `code`)
    fault: str | None = None
    same_as: str | None = None

    def section(self, name: str) -> str:
        return self.sections.get(name, "")


def notes_path(model_path: str | Path) -> Path:
    p = Path(model_path)
    return p.with_name(p.stem + SUFFIX)


def load_notes(model_path: str | Path) -> Notes | None:
    """The notes beside a model file, or None when it has none."""
    path = notes_path(model_path)
    if not path.is_file():
        return None
    try:
        text = read_untrusted_text(path, MAX_BYTES, "finding notes")
    except ValueError as exc:
        raise NotesError(f"{path}: {exc}") from None
    return parse_notes(text, path)


def parse_notes(text: str, path: Path) -> Notes:
    def bad(msg: str) -> NoReturn:
        raise NotesError(f"{path}: {msg}")

    m = re.match(r"\+\+\+\n(.*?)\n\+\+\+\n(.*)\Z", text.replace("\r\n", "\n"), re.S)
    if not m:
        bad("expected TOML front matter between two '+++' lines at the top")
    try:
        head = tomllib.loads(m.group(1))
    except tomllib.TOMLDecodeError as exc:
        bad(f"front matter: {exc}")
    unknown = sorted(set(head) - KEYS)
    if unknown:
        bad(f"unknown key {unknown[0]!r} in the front matter (known: {', '.join(sorted(KEYS))})")
    for k in REQUIRED_KEYS:
        if not isinstance(head.get(k), str) or not head[k].strip():
            bad(f"the front matter needs {k} = \"...\" (non-empty text)")
    for key in ("fix", "same_as"):
        if key in head and (not isinstance(head[key], str) or not head[key].endswith(".toml")):
            bad(f"{key} must name a model file (.toml) beside this one")
    if "fault" in head and (not isinstance(head["fault"], str) or not head["fault"].isidentifier()):
        bad("fault must name an action")
    files = {}
    for entry in head.get("files", []) if isinstance(head.get("files", []), list) else [None]:
        f = FILE.match(entry.strip()) if isinstance(entry, str) else None
        if not f:
            bad(f"files: {entry!r} must be owner/repo@commit:path (a commit of 12 to 40 hex digits)")
        files[f["path"]] = f["commit"]
    sections: dict[str, str] = {}
    current = None
    for line in m.group(2).splitlines():
        h = re.match(r"## (.+?)\s*$", line)
        if h:
            current = h.group(1)
            if current not in SECTIONS:
                bad(f"unknown section '## {current}' (known: {', '.join(SECTIONS)})")
            if current in sections:
                bad(f"section '## {current}' appears twice")
            sections[current] = ""
        elif current is not None:
            sections[current] += line + "\n"
        elif line.strip():
            bad("text before the first '## ' section")
    sections = {k: v.strip() for k, v in sections.items()}
    for s in REQUIRED_SECTIONS if "same_as" not in head else ("Impact",):
        if not sections.get(s):
            bad(f"section '## {s}' is missing or empty")
    code = CODE.match(head["code"].strip())
    if not code:
        bad(f"code = {head['code']!r} must be owner/repo@commit (12 to 40 hex digits)")
    for link in permalinks("\n".join(sections.values())):
        want = files.get(link.path, code["commit"])
        if link.repo == code["repo"] and link.is_commit and not same_commit(link.ref, want):
            bad(f"permalink {link.repo}@{link.ref}:{link.path}#L{link.line} is not at the commit stated for its "
                f"file ({code['repo']}@{want}: `code`, or its entry in `files`)")
    return Notes(path, head["title"].strip(), head["system"].strip(), head["code"].strip(), " ".join(head["status"].split()),
                 head.get("fix"), sections, files, head.get("fault"), head.get("same_as"))


def fix_model_path(model_path: str | Path, notes: Notes | None) -> Path | None:
    """The model of the fix: the notes' `fix`, else the `-fixed` twin when it exists."""
    p = Path(model_path)
    if notes is not None and notes.fix:
        fix = p.with_name(notes.fix)
        if not fix.is_file():
            raise NotesError(f"{notes.path}: fix = {notes.fix!r}: no such model file beside it")
        return fix
    stem = p.stem[: -len("-merged")] if p.stem.endswith("-merged") else p.stem
    twin = p.with_name(f"{stem}-fixed.toml")
    return twin if twin.is_file() else None
