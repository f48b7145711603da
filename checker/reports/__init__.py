"""Reports: of the CI gate, JUnit XML (junit.py) and SARIF 2.1.0 (sarif.py), and
their validation (validate.py) against the vendored SARIF schema; and of a
finding, the Markdown and HTML bug report of one counterexample (finding.py,
finding_html.py), with the notes beside its model (notes.py), the recorded
figures of a findings folder (figures.py) and its index (index.py).

`sarif-2.1.0.schema.json` is the OASIS SARIF 2.1.0 (rtm.5) JSON schema, as
shipped in the npm package @microsoft/jest-sarif 1.0.0-beta.0 (MIT); it is
never fetched at run time."""
