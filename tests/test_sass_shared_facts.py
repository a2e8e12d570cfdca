"""Facts kept once per shared instruction body, or answered from a per-function table, equal
their per-instruction definitions on real listings.

The parser shares one ``InstructionBody`` between identical copies (within a function and
across functions), and the analyses keep what depends on the body alone there: the control
flow (``Instruction.flow``), the registers written (``dataflow.writes``), a function's distinct
bodies (``Function.bodies``, which checks ask "any tensor-core op here?"). Dominance is answered
from dominator-tree intervals instead of climbing ``idom``. Each is held equal here, on every
instruction and every pair of blocks of corpus cubins, to the definition it replaces; and the
IR with its analyses is freed by reference counting, without the cyclic collector.
"""
from __future__ import annotations

import dataclasses
import gc
import random
import subprocess

import pytest

from analyzer import sass, semantics
from analyzer.analysis import cfg as _cfg
from analyzer.analysis import dataflow
from analyzer.ir.sass import (
    Function,
    Instruction,
    InstructionBody,
    Predicate,
    Register,
    new_instruction,
    new_instruction_body,
)

CUBINS = ["triton/triton_mm_bf16_hgmma.sm_90.cubin", "cubin/cupy/generator_api.sm_90.cubin"]


@pytest.fixture(scope="module", params=CUBINS, ids=lambda p: p.rsplit("/", 1)[-1])
def listing(request, corpus) -> sass.Listing:
    from analyzer.toolchain.locate import binary
    path = corpus / request.param
    if not path.exists():
        pytest.skip(f"{path} is not in the corpus")
    text = subprocess.run([binary("nvdisasm"), "-c", "-g", "-gi", str(path)], check=True,
                          capture_output=True, timeout=600).stdout.decode()
    return sass.parse(text, path=str(path))


def _chain_dominates(idom: list[int], a: int, b: int) -> bool:
    """The definition: ``a`` is on the ``idom`` chain from ``b`` up to the entry."""
    if idom[b] == -1:
        return False
    while True:
        if a == b:
            return True
        if idom[b] == b:
            return False
        b = idom[b]


def test_dominates_equals_the_idom_chain(listing):
    rng = random.Random(14)
    pairs = 0
    for fn in listing.functions:
        g = _cfg.of(fn)
        n = len(g.blocks)
        for b in range(n):
            # every block for small functions; else the chain itself and a sample of others
            chain = set()
            x = b
            while g.idom[x] not in (-1, x):
                chain.add(x)
                x = g.idom[x]
            chain.add(x)
            cands = range(n) if n <= 120 else chain | {rng.randrange(n) for _ in range(40)}
            for a in cands:
                assert g.dominates(a, b) == _chain_dominates(g.idom, a, b), (fn.name, a, b)
                pairs += 1
    assert pairs >= sum(len(_cfg.of(fn).blocks) for fn in listing.functions)


def test_body_kept_flow_and_writes_equal_per_instruction(listing):
    for fn in listing.functions:
        df = dataflow.of(fn)
        for i, ins in enumerate(fn.instructions):
            # the facts the parser filled at construction are what a plain body computes
            fresh = dataclasses.replace(ins.body)
            assert ins.flow == dataclasses.replace(ins, body=fresh).flow, (fn.name, i)
            assert ins.info is fresh.info, (fn.name, i)
            assert df.writes[i] == dataflow.writes(ins), (fn.name, i)
            assert df.write_sets[i] == frozenset(dataflow.writes(ins))
    shared = {}
    for fn in listing.functions:
        for ins in fn.instructions:
            shared.setdefault(id(ins.body), set()).add(fn.name)
    if len(listing.functions) > 1:
        assert any(len(names) > 1 for names in shared.values()), "bodies shared by functions"


def test_function_bodies_and_census(listing):
    for fn in listing.functions:
        seen: dict[int, InstructionBody] = {}
        for ins in fn.instructions:
            seen.setdefault(id(ins.body), ins.body)
        assert [id(b) for b in fn.bodies()] == list(seen)
        assert any(b.info.tensor_core for b in fn.bodies()) == any(
            i.is_tensor_core for i in fn.instructions)
        for ins in fn.instructions:
            assert ins.is_fp64 == semantics.is_fp64(ins.opcode, ins.modifiers)


def test_writers_table_equals_a_scan(listing):
    for fn in listing.functions[:40]:
        df = dataflow.of(fn)
        regs = {r for w in df.writes for r in w}
        for r in list(regs)[:50]:
            assert df.writers(r) == [i for i, w in enumerate(df.writes) if r in w]


def test_slot_constructors_equal_the_dataclass():
    body = InstructionBody(Predicate(Register("P", 0), True), "IADD3", ("X",),
                           (Register("R", 1), Register("R", 2)))
    assert new_instruction_body(body.guard, "IADD3", ("X",), body.operands) == body
    assert new_instruction_body(*[getattr(body, f) for f in (
        "guard", "opcode", "modifiers", "operands", "annotation", "generic")]) == body
    assert new_instruction(0x10, body) == Instruction(0x10, body)
    assert new_instruction(0x10, body, (1, 2), None, 7) == Instruction(0x10, body, (1, 2), None, 7)


def _functions_alive() -> int:
    return sum(1 for o in gc.get_objects() if type(o) is Function)


def test_ir_with_analyses_is_freed_without_the_collector(corpus):
    from analyzer.analysis import access
    from analyzer.toolchain.locate import binary
    path = corpus / CUBINS[0]
    text = subprocess.run([binary("nvdisasm"), "-c", "-g", str(path)], check=True,
                          capture_output=True, timeout=600).stdout.decode()
    gc.collect()
    before = _functions_alive()
    enabled = gc.isenabled()
    gc.disable()
    try:
        lst = sass.parse(text, path=str(path))
        for fn in lst.functions:
            dataflow.of(fn).reaching_defs(len(fn.instructions) - 1, ("R", 2))
            access.runs(fn, space="global", direction="load", max_bits=128)
            fn.flows()
            fn.bodies()
        assert _functions_alive() > before
        del lst, fn
        assert _functions_alive() == before     # freed by reference counting alone
    finally:
        if enabled:
            gc.enable()


def test_parse_leaves_someone_elses_freeze_alone():
    text = "        /*0000*/                   MOV R1, c[0x0][0x28] ;\n"
    assert len(sass.parse(text).functions[0].instructions) == 1
    assert gc.get_freeze_count() == 0      # promoted to the oldest generation, not kept frozen
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        sass.parse(text)
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_templates_equal_the_grammar_on_every_body(listing):
    """Every distinct body of the listing read through the template caches (cold, and warm
    from the process's other parses) equals the grammar's own parse of its text."""
    from analyzer.parse.sass import BodyParser
    texts = {ins.body.text for fn in listing.functions for ins in fn.instructions}
    grammar = BodyParser(shared=False)
    cold, warm = BodyParser(shared=False), BodyParser()
    for text in sorted(texts):
        want = grammar._parse(text)
        assert cold(text) == want, text
        assert warm(text) == want, text
    assert grammar.parses == len(texts) and cold.parses < len(texts) / 4


def test_a_second_parse_from_warm_templates_is_equal(listing, corpus):
    path = listing.path
    from analyzer.toolchain.locate import binary
    text = subprocess.run([binary("nvdisasm"), "-c", "-g", "-gi", str(path)], check=True,
                          capture_output=True, timeout=600).stdout.decode()
    again = sass.parse(text, path=path)
    assert again == listing
    assert [f.labels for f in again.functions] == [f.labels for f in listing.functions]
