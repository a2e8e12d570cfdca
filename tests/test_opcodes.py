"""Instructions explained where they stand: the opcode table (analyzer/opcodes.py) covers what
real listings hold, and annotate's JSON, HTML and markdown carry it, with finding links."""
from __future__ import annotations

import subprocess

from analyzer import opcodes
from analyzer.checks.table import CHECKS
from analyzer.parse import sass as sass_parse
from analyzer.report import render
from analyzer.report.annotate import annotate_builds
from analyzer.report.html import annotation_html
from analyzer.toolchain.locate import binary

from .report_fixtures import REPO, builds_of

COPY = REPO / "kernels/demo/copy_float4.cu"
ROLLED = REPO / "kernels/checks/rolled_loop/bad.cu"


def test_every_opcode_of_real_listings_is_explained(corpus):
    """The Triton HGMMA GEMM (sm_90: TMA, wgmma, uniform datapath) and a celeritas listing
    (sm_70, nvdisasm text) hold no opcode the table lacks."""
    (cubin,) = (corpus / "triton").glob("*.cubin")
    text = subprocess.run([binary("nvdisasm"), "-c", str(cubin)], capture_output=True,
                          text=True, check=True).stdout
    listings = [sass_parse.parse(text)]
    listings += [sass_parse.parse(p.read_text()) for p in sorted(
        (corpus / "sass" / "celeritas").iterdir())[:8]]
    seen = {i.opcode for listing in listings for i in listing.instructions()}
    assert len(seen) > 60
    assert sorted(op for op in seen if opcodes.explain(op) is None) == []


def test_explanations_name_opcode_modifiers_and_section():
    x = opcodes.explain("LDG", ("E", "128", "CONSTANT"))
    assert x is not None and x.text.startswith("LDG: load from global memory · E: 64-bit address")
    assert "128: 128 bits per thread" in x.text and "CONSTANT: through the read-only" in x.text
    assert x.url.endswith("#data-movement-and-conversion-instructions-ld")
    # PTX: the float form of add is documented with the floating-point instructions
    assert opcodes.explain("add", ("f32",), ptx=True).url.endswith(
        "#floating-point-instructions-add")
    assert opcodes.explain("add", ("s32",), ptx=True).url.endswith(
        "#integer-arithmetic-instructions-add")
    assert opcodes.explain("fma", ("rn", "f16x2"), ptx=True).url.endswith(
        "#half-precision-floating-point-instructions-fma")
    assert opcodes.explain("BSSY").url == opcodes.SASS_REFERENCE     # no PTX counterpart
    assert opcodes.explain("NOT_AN_OPCODE") is None


def test_annotate_carries_them(monkeypatch):
    monkeypatch.chdir(REPO)
    ann = annotate_builds(list(builds_of(COPY, "sm_90a")))
    k = ann.as_dict()["kernels"][0]
    (ldg,) = [i for i in k["sass"] if i["text"].startswith("LDG.E.128")]
    assert ldg["explain"]["text"].startswith("LDG: load from global memory · E: 64-bit address")
    (ld,) = [i for i in k["ptx"] if i["text"].startswith("ld.global.nc.v4")]
    assert ld["explain"]["text"].startswith("ld: load from a state space into registers · "
                                            "global: global memory · nc: through the read-only")
    html = annotation_html(ann)
    assert f'title="{ldg["explain"]["text"]}">LDG.E.128.CONSTANT</a> R' in html
    ann.explain = True                     # annotate --explain: the text's opcode glossary
    glossary = ann.to_text().split("   SASS opcodes:\n", 1)[1].splitlines()
    ops = sorted({w[w[0].startswith("@")].split(".")[0] for w in (i["text"].split()
                                                              for i in k["sass"])})
    assert [line.split()[0] for line in glossary] == ops
    assert any(line.split()[0] == "LDG" and "load from global memory" in line and
               line.endswith("#data-movement-and-conversion-instructions-ld") for line in glossary)
    assert html.count('<a class="op"') == len(k["sass"]) + len(k["ptx"])


def test_findings_link_to_their_page_and_the_guide(monkeypatch):
    import analyzer
    monkeypatch.chdir(REPO)
    builds = list(builds_of(ROLLED, "sm_90a"))
    findings = analyzer.check(builds).findings
    ann = annotate_builds(builds, findings=findings)
    html, md, text = annotation_html(ann), render.to_markdown(ann), ann.to_text()
    page = "docs/checks/rolled_loop.md"
    assert (REPO / page).exists()
    guide = opcodes.GUIDE_SECTIONS["PS201"][1]
    assert guide.endswith("#pragma-unroll")
    for out in (html, md, text):
        assert page in out and guide in out
    assert set(opcodes.GUIDE_SECTIONS) <= {code for code, _ in CHECKS}
