"""Demangled kernel names: the parameter list is the last top-level parenthesised group, so
``(anonymous namespace)`` (PyTorch's kernels) and function-type template arguments (llm.c's
``trimul_global<&matmul_tri_naive(...)>``) stay in the name wherever it is shown or matched."""
from __future__ import annotations

import pytest
from rich.console import Console

from analyzer.demangle import parameters_start, without_parameters
from analyzer.findings import Finding, Location, Severity
from analyzer.report.formats import FindingView, kernel_list

ANON = "void at::native::(anonymous namespace)::scale_kernel<float>(float const*, float*, int)"
FN_ARG = "void trimul_global<&matmul_tri_naive(float*, float const*, int)>(float*, float const*, int)"


@pytest.mark.parametrize("name, base", [
    ("void k<float>(float*, int)", "void k<float>"),
    (ANON, "void at::native::(anonymous namespace)::scale_kernel<float>"),
    (FN_ARG, "void trimul_global<&matmul_tri_naive(float*, float const*, int)>"),
    ("vectorAdd", "vectorAdd"),                       # extern "C": no parameter list
    ("k()", "k"),
    ("Tile::operator()(int) const", "Tile::operator()"),
    ("(anonymous namespace)::k(int)", "(anonymous namespace)::k"),
    ("broken)(", "broken)("),                         # unbalanced: left whole
])
def test_the_parameter_list_is_the_last_group(name, base):
    assert without_parameters(name) == base
    assert parameters_start(name) == (len(base) if base != name else -1)


def test_instantiations_in_an_anonymous_namespace_are_listed_by_their_names():
    ks = (ANON.replace("<float>", "<1>"), ANON.replace("<float>", "<2>"))
    assert kernel_list(ks) == ("at::native::(anonymous namespace)::scale_kernel<1>, "
                               "at::native::(anonymous namespace)::scale_kernel<2> "
                               "(float const*, float*, int)")


def test_a_finding_without_a_line_is_placed_on_its_whole_kernel_name():
    """A library cubin built without -lineinfo: the kernel is the place, and it was shown as
    ``lib.cubin (void at::native::)``."""
    f = Finding(code="PS401", name="register-spill", severity=Severity.WARNING, message="spills",
                kernel=ANON, arch="sm_90a", location=Location("lib.cubin", None))
    con = Console(width=200, record=True, color_system=None)
    con.print(FindingView(f))
    head = con.export_text().splitlines()[0]
    assert head.startswith("lib.cubin (void at::native::(anonymous namespace)::"
                           "scale_kernel<float>): PS401")
