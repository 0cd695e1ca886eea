"""Linters' results files: one parser per format, on output as the tools really write it
(eslint 9 ``-f json`` and its SARIF formatter, shellcheck 0.11 ``-f checkstyle`` were run
to make the samples; CodeQL / golangci-lint / hadolint follow their documented shapes)."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.analyzers import formats
from bot.analyzers.formats import FORMATS, detect, parse_results, read_results, split_spec
from bot.analyzers.paths import Roots, repo_relative
from bot.analyzers.report import ResultsError

DATA = Path(__file__).parents[1] / "data" / "analyzers"
ROOT = "/home/runner/work/app/app"


def sample(name: str, root: str = ROOT) -> bytes:
    return (DATA / name).read_text(encoding="utf-8").replace("{ROOT}", root).encode()


def only(data: bytes, fmt: str | None = None):
    found, reports = parse_results(data, fmt)
    assert len(reports) == 1
    return found, reports[0]


def test_eslint_sarif_keeps_rules_links_levels_and_absolute_uris() -> None:
    fmt, report = only(sample("eslint.sarif"))
    assert fmt == "sarif" and report.tool == "ESLint"
    first, second = report.findings
    assert (first.path, first.line, first.severity, first.rule) == (
        f"file://{ROOT}/web/app.js",
        4,
        "error",
        "no-unused-vars",
    )
    assert first.url == "https://eslint.org/docs/latest/rules/no-unused-vars"
    assert first.message == "'unused' is assigned a value but never used."
    assert (second.line, second.severity, second.rule) == (5, "warning", "eqeqeq")
    assert repo_relative(first.path, Roots(Path(ROOT))) == "web/app.js"


def test_codeql_sarif_base_ids_artifact_indexes_default_levels_and_suppressions() -> None:
    _, report = only(sample("codeql.sarif"))
    injection, unused = report.findings  # the suppressed result is not a finding
    roots = Roots(Path(ROOT))
    assert repo_relative(injection.path, roots) == "pkg/db.py"
    assert (injection.line, injection.end_line, injection.severity) == (12, 13, "error")
    assert injection.url and injection.url.startswith("https://codeql.github.com/")
    assert (repo_relative(unused.path, roots), unused.line, unused.severity) == (
        "pkg/db.py",
        1,
        "info",
    )  # level from the rule's defaultConfiguration
    named = {repo_relative(p, roots) for p in report.paths}
    assert named == {"pkg/db.py", "pkg/clean file.py"}  # artifacts: clean files are covered


def test_shellcheck_checkstyle() -> None:
    fmt, report = only(sample("shellcheck.xml"))
    assert fmt == "checkstyle" and report.tool == "shellcheck"
    (finding,) = report.findings
    assert (finding.path, finding.line, finding.severity, finding.rule) == (
        "scripts/deploy.sh",
        6,
        "info",
        "SC2086",
    )
    assert finding.url == "https://www.shellcheck.net/wiki/SC2086"


def test_eslint_json_lists_clean_files_and_maps_severity() -> None:
    doc = json.loads(sample("eslint.json"))
    doc.append({"filePath": f"{ROOT}/web/clean.js", "messages": [], "errorCount": 0})
    fmt, report = only(json.dumps(doc).encode())
    assert fmt == "eslint"
    assert [(f.line, f.severity, f.rule) for f in report.findings] == [
        (4, "error", "no-unused-vars"),
        (5, "warning", "eqeqeq"),
    ]
    assert report.findings[1].url == "https://eslint.org/docs/latest/rules/eqeqeq"
    assert report.paths == {f"{ROOT}/web/app.js", f"{ROOT}/web/clean.js"}


def test_eslint_json_with_metadata_takes_plugin_rule_links() -> None:
    results = [
        {
            "filePath": "/r/a.ts",
            "messages": [
                {
                    "ruleId": "@typescript-eslint/no-explicit-any",
                    "severity": 1,
                    "message": "Unexpected any. Specify a different type.",
                    "line": 3,
                    "column": 9,
                }
            ],
        }
    ]
    url = "https://typescript-eslint.io/rules/no-explicit-any"
    doc = {
        "results": results,
        "metadata": {"rulesMeta": {"@typescript-eslint/no-explicit-any": {"docs": {"url": url}}}},
    }
    fmt, report = only(json.dumps(doc).encode())
    assert fmt == "eslint" and report.findings[0].url == url


def test_rdjson_and_rdjsonl() -> None:
    fmt, report = only(sample("golangci.rdjson"))
    assert fmt == "rdjson" and report.tool == "golangci-lint"
    errcheck, revive = report.findings
    assert (errcheck.line, errcheck.severity, errcheck.rule) == (42, "error", "errcheck")
    assert errcheck.url == "https://golangci-lint.run/usage/linters/#errcheck"
    assert (revive.line, revive.end_line, revive.severity) == (50, 52, "warning")
    fmt, report = only(sample("hadolint.rdjsonl"))
    assert fmt == "rdjsonl" and report.tool == "hadolint"
    assert [(f.line, f.severity, f.rule) for f in report.findings] == [
        (3, "warning", "DL3008"),
        (5, "info", "DL3003"),
    ]


@pytest.mark.parametrize(
    "name, fmt",
    [
        ("eslint.sarif", "sarif"),
        ("codeql.sarif", "sarif"),
        ("shellcheck.xml", "checkstyle"),
        ("eslint.json", "eslint"),
        ("golangci.rdjson", "rdjson"),
        ("hadolint.rdjsonl", "rdjsonl"),
    ],
)
def test_the_format_is_detected_by_content_whatever_the_name(name: str, fmt: str) -> None:
    assert detect(sample(name), "results.txt") == fmt
    assert detect(codecs.BOM_UTF8 + sample(name), "") == fmt


def test_file_format_specs(tmp_path: Path) -> None:
    assert split_spec("out/eslint.json:eslint") == ("out/eslint.json", "eslint")
    assert split_spec("C:/out/x.sarif") == ("C:/out/x.sarif", None)
    assert split_spec("odd:name.json") == ("odd:name.json", None)
    path = tmp_path / "lint.txt"
    path.write_bytes(sample("shellcheck.xml"))
    assert read_results(path, None)[0] == "checkstyle"
    with pytest.raises(ResultsError, match="cannot be read: No such file"):
        read_results(tmp_path / "missing.sarif", None)


def test_utf16_with_bom_as_powershell_writes_it() -> None:
    data = sample("golangci.rdjson").decode().encode("utf-16")
    assert only(data)[0] == "rdjson"


@pytest.mark.parametrize(
    "data, fmt, message",
    [
        (b"{not json", None, "format not recognised"),
        (b"{not json", "sarif", "not valid JSON"),
        (b"\xff\xfe\xfa garbage \xc3", "eslint", "not UTF-8"),
        (b"[" * 100_000, "eslint", "nested too deeply|not valid JSON"),
        (b"<checkstyle><file name='a'><error line='1'", "checkstyle", "not well-formed XML"),
        (b"<html><body/></html>", "checkstyle", "root element is <html>"),
        (b'{"runs": 3}', "sarif", "no 'runs' list"),
        (b'{"x": 1}\nnot json\n', "rdjsonl", "line 2 is not JSON"),
    ],
)
def test_malformed_files_are_one_clear_error(data: bytes, fmt: str | None, message: str) -> None:
    with pytest.raises(ResultsError, match=message):
        parse_results(data, fmt)


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<checkstyle><file name="a.sh"><error line="1" severity="error" message="&lol9;"/></file>
</checkstyle>"""

EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE checkstyle [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<checkstyle><file name="a.sh"><error line="1" severity="error" message="&secret;"/></file>
</checkstyle>"""


@pytest.mark.parametrize(
    "data",
    [
        BILLION_LAUGHS,
        EXTERNAL,
        b'<?xml version="1.0"?><!DOCTYPE checkstyle SYSTEM '
        b'"http://127.0.0.1:9/x.dtd"><checkstyle/>',
    ],
)
def test_xml_entity_tricks_are_refused_before_any_expansion(data: bytes) -> None:
    with pytest.raises(ResultsError, match="declares a document type"):
        parse_results(data, "checkstyle")


def test_a_file_over_the_size_cap_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(formats, "MAX_BYTES", 1000)  # the real cap is 64 MiB
    path = tmp_path / "big.sarif"
    path.write_bytes(b" " * 2000 + sample("eslint.sarif"))
    with pytest.raises(ResultsError, match="bigger than"):
        read_results(path, None)


def test_empty_output_is_no_findings() -> None:
    assert parse_results(b"\n", "rdjsonl") == ("rdjsonl", [])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "runs",
                    "results",
                    "locations",
                    "physicalLocation",
                    "region",
                    "artifactLocation",
                    "uri",
                    "index",
                    "startLine",
                    "diagnostics",
                    "location",
                    "path",
                    "range",
                    "start",
                    "line",
                    "message",
                    "filePath",
                    "messages",
                    "severity",
                    "ruleId",
                    "ruleIndex",
                    "tool",
                    "driver",
                    "rules",
                    "id",
                    "artifacts",
                    "originalUriBaseIds",
                    "uriBaseId",
                    "code",
                    "value",
                    "url",
                    "level",
                    "suppressions",
                    "text",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@given(doc=json_values, fmt=st.sampled_from(["sarif", "rdjson", "rdjsonl", "eslint", None]))
def test_any_json_is_read_or_refused_with_a_results_error(doc: object, fmt: str | None) -> None:
    data = json.dumps(doc).encode()
    try:
        _, reports = parse_results(data, fmt)
    except ResultsError:
        return
    for report in reports:
        for finding in report.findings:
            assert finding.line is None or finding.line > 0
            assert finding.severity in ("info", "warning", "error")


@given(st.binary(max_size=300))
def test_any_bytes_as_checkstyle_are_read_or_refused(data: bytes) -> None:
    try:
        parse_results(b"<checkstyle>" + data, "checkstyle")
    except ResultsError:
        pass


@pytest.mark.parametrize(
    "raw, base, expected",
    [
        ("web/app.js", "", "web/app.js"),
        ("./web/app.js", "", "web/app.js"),
        ("app.js", "web", "web/app.js"),
        ("../scripts/x.sh", "web", "scripts/x.sh"),
        ("../../etc/passwd", "web", None),
        (f"{ROOT}/web/app.js", "web", "web/app.js"),
        (f"file://{ROOT}/web/a%20b.js", "", "web/a b.js"),
        (f"file://localhost{ROOT}/web/app.js", "", "web/app.js"),
        ("file://otherhost/web/app.js", "", None),
        ("/src/web/app.js", "", None),  # another root: never guessed onto web/app.js
        ("https://example.com/web/app.js", "", None),
        ("web\\win\\path.js", "", "web/win/path.js"),
        ("", "", None),
        (ROOT, "", None),
    ],
)
def test_paths_are_made_repository_relative_or_refused(
    raw: str, base: str, expected: str | None
) -> None:
    assert repo_relative(raw, Roots(Path(ROOT)), base) == expected


def test_a_symlinked_root_is_recognised_both_ways(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "web").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real)
    roots = Roots(link)
    assert repo_relative(f"{real}/web/a.js", roots) == "web/a.js"
    assert repo_relative(f"{link}/web/a.js", roots) == "web/a.js"


def test_the_registry_is_one_entry_per_format() -> None:
    assert sorted(FORMATS) == ["checkstyle", "eslint", "rdjson", "rdjsonl", "sarif"]


def test_every_format_has_a_parser_and_is_documented() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    for name in FORMATS:
        assert f"`{name}`" in readme, name


def test_semgrep_sarif_fix_on_the_line() -> None:
    from bot.analyzers.report import Edit, apply_fix

    _, report = only(sample("semgrep.sarif"))
    (finding,) = report.findings
    assert report.tool == "Semgrep OSS" and finding.severity == "warning"
    assert repo_relative(finding.path, Roots(Path(ROOT))) == "pkg/util.py"  # %SRCROOT%: root
    assert finding.fix == Edit(5, 12, 17, "x // 2")
    assert apply_fix("    return x / 2", finding.fix) == "    return x // 2"
    assert apply_fix("    return x / 2é", finding.fix) is None  # columns of non-ASCII text
    assert apply_fix("short", finding.fix) is None
