"""Validate the gate's reports, for CI:

    python -m txncheck.checker.reports.validate --junit out.xml --sarif out.sarif

The JUnit file must parse as XML with a <testsuites> (or <testsuite>) root
whose test cases all have a name and a classname; the SARIF file must
validate against the vendored SARIF 2.1.0 JSON schema (jsonschema). Prints
one line per file; exit 0 when both are valid, 1 otherwise, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

SCHEMA = Path(__file__).with_name("sarif-2.1.0.schema.json")


def sarif_schema() -> dict:
    return json.loads(SCHEMA.read_text(encoding="utf-8"))


def check_junit(path: str | Path) -> str | None:
    """None when the file is valid JUnit XML, else the one-line problem."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        return f"not parseable XML ({exc})"
    if root.tag not in ("testsuites", "testsuite"):
        return f"root element is <{root.tag}>, not <testsuites> or <testsuite>"
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    for suite in suites:
        for tc in suite.findall("testcase"):
            if not tc.get("name") or not tc.get("classname"):
                return f"a testcase in suite {suite.get('name')!r} lacks name or classname"
        for attr in ("tests", "failures", "errors", "skipped"):
            if (value := suite.get(attr)) is not None and not value.isdigit():
                return f"suite {suite.get('name')!r} has a non-numeric {attr}"
        if (tests := suite.get("tests")) is not None and int(tests) != len(suite.findall("testcase")):
            return f"suite {suite.get('name')!r} says tests={suite.get('tests')} but has {len(suite.findall('testcase'))}"
    return None


def check_sarif(path: str | Path) -> str | None:
    """None when the file validates against the SARIF 2.1.0 schema, else the one-line problem."""
    import jsonschema

    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return f"not readable JSON ({exc})"
    validator = jsonschema.Draft4Validator(sarif_schema())
    err = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if err is not None:
        at = "/".join(str(p) for p in err.absolute_path) or "top level"
        return f"invalid SARIF 2.1.0 at {at}: {err.message}"
    if doc.get("version") != "2.1.0":
        return "version is not 2.1.0"
    return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m txncheck.checker.reports.validate",
                                description="Validate txncheck's JUnit XML and SARIF 2.1.0 reports.")
    p.add_argument("--junit", metavar="FILE", action="append", default=[], help="a JUnit XML report")
    p.add_argument("--sarif", metavar="FILE", action="append", default=[], help="a SARIF report")
    args = p.parse_args(argv)
    if not args.junit and not args.sarif:
        p.print_usage(sys.stderr)
        return 2
    bad = 0
    for kind, files, check in (("JUnit XML", args.junit, check_junit), ("SARIF 2.1.0", args.sarif, check_sarif)):
        for f in files:
            problem = check(f)
            if problem is None:
                print(f"{f}: valid {kind}")
            else:
                print(f"{f}: {problem}", file=sys.stderr)
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
