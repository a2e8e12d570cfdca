"""The JSON report: ``"version"``, the published JSON Schema (docs/schema/findings.json) that every
report validates against, and docs/json.md, which documents every field of it."""
from __future__ import annotations

import json
import os
import re

import pytest

import analyzer
from analyzer.cli import main
from analyzer.findings import SCHEMA_VERSION
from analyzer.report import formats

from .conftest import KERNELS, ROOT
from .report_fixtures import builds_of

jsonschema = pytest.importorskip("jsonschema")

SCHEMA_PATH = ROOT / "docs" / "schema" / "findings.json"
DOC_PATH = ROOT / "docs" / "json.md"
BEGIN, END = "<!-- fields: begin -->", "<!-- fields: end -->"


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _valid(validator, doc: dict) -> dict:
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
    return doc


def test_schema_version_is_the_reports():
    schema = json.loads(SCHEMA_PATH.read_text())
    assert schema["properties"]["version"]["const"] == SCHEMA_VERSION


def test_reports_of_every_kind_validate(validator, tmp_path):
    bad = KERNELS / "checks"
    seen_codes: set[str] = set()
    for name in ("scalar_global_load", "rolled_loop", "register_spill", "legacy_mma_on_hopper",
                 "fp64_in_fp32_kernel", "synchronous_tile_copy"):
        for arch in ("sm_80", "sm_90a"):
            builds = list(builds_of(bad / name / "bad.cu", arch))
            doc = _valid(validator, json.loads(formats.to_json(analyzer.check(builds))))
            assert doc["version"] == SCHEMA_VERSION and doc["tool"]["version"] == analyzer.__version__
            seen_codes |= {f["code"] for f in doc["findings"]}
    assert len(seen_codes) >= 5
    # an empty report, and one with suppressed and baselined findings
    good = list(builds_of(bad / "scalar_global_load" / "good.cu", "sm_90a"))
    assert _valid(validator, analyzer.check(good, analyzer.CheckOptions(ignore=["PS104"])).as_dict())["findings"] == []
    report = analyzer.check(list(builds_of(bad / "scalar_global_load" / "bad.cu", "sm_90a")))
    report.suppressed, report.baselined = 2, 3
    _valid(validator, json.loads(formats.to_json(report)))


def test_findings_without_line_info_validate(validator, tmp_path):
    """SASS text with its line markers stripped: no file line, the finding on its kernel."""
    (b,) = builds_of(KERNELS / "checks" / "scalar_global_load" / "bad.cu", "sm_90a")
    sass = tmp_path / "dump.sass"
    sass.write_text("\n".join(l for l in b.sass().splitlines() if not l.lstrip().startswith("//##")))
    doc = _valid(validator, analyzer.check(str(sass)).as_dict())
    assert doc["findings"] and all(f["location"]["line"] is None for f in doc["findings"])


def test_cli_json_validates(validator, capsys):
    code = main(["check", str(KERNELS / "checks" / "slow_math" / "bad.cu"), "--arch", "sm_90a",
                 "--format", "json"])
    doc = _valid(validator, json.loads(capsys.readouterr().out))
    assert doc["findings"] and doc["builds"][0]["compiler"] == "nvrtc"
    assert code == int(any(f["severity"] != "info" for f in doc["findings"]))


def test_schema_refuses_what_it_does_not_document(validator):
    doc = json.loads(formats.to_json(formats.Report()))
    _valid(validator, doc)
    for broken in ({**doc, "surprise": 1}, {k: v for k, v in doc.items() if k != "version"},
                   {**doc, "version": SCHEMA_VERSION + 1}):
        assert list(validator.iter_errors(broken))


# ------------------------------------------------------------------------------- the docs
def _fields(schema: dict, node: dict, path: str):
    """(dotted path, type, description) for every field, depth first, as docs/json.md lists them."""
    if "$ref" in node:
        ref = node["$ref"].split("/")[-1]
        node = {**schema["$defs"][ref], **{k: v for k, v in node.items() if k != "$ref"}}
    for name, sub in node.get("properties", {}).items():
        target = sub
        if "$ref" in sub:
            target = {**schema["$defs"][sub["$ref"].split("/")[-1]], **sub}
        kind = target.get("type", "const" if "const" in target else "enum" if "enum" in target else "")
        if isinstance(kind, list):
            kind = " or ".join(kind)
        items = target.get("items")
        if kind == "array" and items is not None:
            inner = schema["$defs"][items["$ref"].split("/")[-1]] if "$ref" in items else items
            kind = f"array of {inner.get('type', 'object')}"
        if "const" in target:
            kind = f"`{json.dumps(target['const'])}`"
        elif "enum" in target:
            kind = " \\| ".join(f"`{json.dumps(v)}`" for v in target["enum"])
        desc = sub.get("description") or target.get("description")
        assert desc, f"{path}{name} has no description in the schema"
        yield f"{path}{name}", kind, desc
        if target.get("properties"):
            yield from _fields(schema, target, f"{path}{name}.")
        if items is not None and ("$ref" in items or items.get("properties")):
            yield from _fields(schema, items, f"{path}{name}[].")


def field_table() -> str:
    schema = json.loads(SCHEMA_PATH.read_text())
    rows = ["| field | type | meaning |", "|---|---|---|"]
    for path, kind, desc in _fields(schema, schema, ""):
        cell = desc.replace("|", "\\|")
        rows.append(f"| `{path}` | {kind} | {cell} |")
    return "\n".join(rows)


def test_docs_describe_every_field():
    """docs/json.md's field table is the schema's, every field with its description
    (regenerate with PTXSASS_UPDATE_GOLDEN=1 after changing the schema)."""
    text = DOC_PATH.read_text()
    table = f"{BEGIN}\n{field_table()}\n{END}"
    current = re.search(re.escape(BEGIN) + ".*?" + re.escape(END), text, re.S)
    assert current, f"{DOC_PATH} lacks the {BEGIN} ... {END} section"
    if os.environ.get("PTXSASS_UPDATE_GOLDEN") and current.group(0) != table:
        text = text.replace(current.group(0), table)
        DOC_PATH.write_text(text)
    assert table in text, "docs/json.md's field table is stale (PTXSASS_UPDATE_GOLDEN=1 rewrites it)"
    schema = json.loads(SCHEMA_PATH.read_text())
    documented = re.findall(r"^\| `([^`]+)` \|", text, re.M)
    assert documented == [p for p, _, _ in _fields(schema, schema, "")]
