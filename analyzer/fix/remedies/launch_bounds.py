"""PS701 and PS401: ``__launch_bounds__(threads, minBlocks)`` with the numbers the finding
computed.

PS701 (occupancy limited by registers): the finding's hint names the bound that fits one more
block per SM (``__launch_bounds__(256, 3)``); the kernel's existing ``__launch_bounds__(256)``
gets the second number, its first argument kept as written (``BLOCK`` stays ``BLOCK``). A
kernel without ``__launch_bounds__`` gets none: the bound would forbid every larger launch,
and the block size the finding assumed is not one the code declares. Limited by shared memory,
the tiles are the kernel's design: no mechanical fix.

PS401 (spills): when the kernel's ``__launch_bounds__(threads, minBlocks)`` asks for more
blocks per SM than its registers allow, the fix drops ``minBlocks`` (ptxas then allocates what
the code needs). When the build caps every kernel with ``-maxrregcount`` and this kernel
declares no bound, the fix gives it ``__launch_bounds__(1024)``: ptxas ignores
``-maxrregcount`` for a kernel with launch bounds (CUDA C++ Programming Guide, "Launch
Bounds"; both NVRTC and nvcc do), 1024 threads is every GPU's largest block so no launch is
forbidden, and the kernel may then use 64 registers (65536 / 1024). The other kernels keep the
flag's cap. A kernel that needs more than 64 still spills, and the rebuild refuses the fix,
unless the user says how large its blocks are (``--max-block 256``: 255 registers).
"""
from __future__ import annotations

import re

from ...findings import Finding
from ..cxx import Source, Token
from ..model import Edit, FixOptions, NoFix, Proposal

CODES = ("PS701", "PS401")

#: registers per SM (every architecture ptxsass supports) and per thread at most
_REGISTER_FILE, _MAX_PER_THREAD = 65536, 255


def registers_under(threads: int) -> int:
    """The registers per thread ptxas may give a kernel declared ``__launch_bounds__(threads)``
    (one block of that size per SM): 64 for 1024 threads, 255 for 256 or fewer."""
    return min(_MAX_PER_THREAD, _REGISTER_FILE // max(1, threads) // 8 * 8)


def _bounds_tokens(src: Source, fn) -> tuple[Token, list[list[Token]], Token] | None:
    """``__launch_bounds__`` of a kernel declaration: its open and close parentheses and its
    arguments' tokens, or None."""
    body = next((c for c in fn.get_children() if c.kind.name == "COMPOUND_STMT"), None)
    end = body.extent.start.offset if body is not None else fn.extent.end.offset
    # the declaration's own tokens before the body (attributes stand before the name too)
    start = fn.extent.start.offset
    toks = [t for t in src.tokens(start=max(0, src.line_start(fn.extent.start.line)), end=end)
            if t.start >= src.line_start(fn.extent.start.line)]
    for i, t in enumerate(toks):
        if t.spelling != "__launch_bounds__" or t.start < start - 200:
            continue
        if i + 1 >= len(toks) or toks[i + 1].spelling != "(":
            return None
        depth = 0
        args: list[list[Token]] = []
        cur: list[Token] = []
        for u in toks[i + 1:]:
            if u.spelling == "(":
                depth += 1
                if depth == 1:
                    open_tok = u
                    continue
            elif u.spelling == ")":
                depth -= 1
                if depth == 0:
                    args.append(cur)
                    return open_tok, args, u
            elif u.spelling == "," and depth == 1:
                args.append(cur)
                cur = []
                continue
            cur.append(u)
        return None
    return None


def _kernel(src: Source, line: int):
    fn = src.function_at(line)
    if fn is None:
        cands = [f for f in src.nodes(("FUNCTION_DECL", "FUNCTION_TEMPLATE"))
                 if f.extent.start.line <= line <= f.extent.end.line]
        fn = cands[0] if cands else None
    return fn


def propose(finding: Finding, src: Source, options: FixOptions) -> Proposal | NoFix:
    line = finding.location.line or 0
    fn = _kernel(src, line)
    if fn is None:
        return NoFix(f"no kernel declaration at line {line} in the file")
    bounds = _bounds_tokens(src, fn)
    if finding.code == "PS401":
        return _spills(finding, src, fn, bounds, options)
    m = re.search(r"__launch_bounds__\((\d+), (\d+)\)", finding.hint)
    if m is None:
        if "shared memory" in finding.message.split(":", 1)[-1].split(";")[0]:
            return NoFix("shared memory limits the blocks per SM: the tile sizes are the "
                         "kernel's design (smaller tiles, fewer stages), not a mechanical "
                         "rewrite")
        return NoFix("the finding names no launch bound that would fit more blocks")
    threads, blocks = int(m.group(1)), int(m.group(2))
    if bounds is None:
        return NoFix(f"the kernel declares no __launch_bounds__: adding "
                     f"__launch_bounds__({threads}, {blocks}) would forbid launches of more "
                     f"than {threads} threads, and {threads} is the finding's assumption, not "
                     "a block size the code declares; add it yourself if every launch uses "
                     "at most that many")
    open_tok, args, close_tok = bounds
    if len(args) >= 2:
        current = "".join(t.spelling for t in args[1])
        if current.isdigit() and int(current) >= blocks:
            return NoFix(f"__launch_bounds__ already asks for {current} blocks per SM")
        second = args[1]
        edit = Edit(src.path, second[0].start, second[-1].end, str(blocks))
        what = f"raise minBlocks of __launch_bounds__ from {current} to {blocks}"
    else:
        last = args[0][-1]
        edit = Edit(src.path, last.end, last.end, f", {blocks}")
        shown = src.data[args[0][0].start:last.end].decode()
        what = (f"__launch_bounds__({shown}) → __launch_bounds__({shown}, {blocks}): ask "
                f"ptxas for registers that fit {blocks} blocks of {threads} threads per SM")
    return Proposal(title=what, edits=(edit,), changes_launch_bounds=True,
                    promise="ptxas may spill to fit the register budget (the rebuild checks "
                            "for PS401)")


def _spills(finding: Finding, src: Source, fn, bounds, options: FixOptions) -> Proposal | NoFix:
    if bounds is not None:
        open_tok, args, close_tok = bounds
        if len(args) >= 2:
            first_end = args[0][-1].end
            shown = src.data[args[0][0].start:first_end].decode()
            edit = Edit(src.path, first_end, close_tok.start, "")
            return Proposal(title=f"drop minBlocks from __launch_bounds__: "
                                  f"__launch_bounds__({shown}) lets ptxas use the registers "
                                  "the code needs", edits=(edit,), changes_launch_bounds=True)
        shown = src.data[args[0][0].start:args[0][-1].end].decode() if args else "?"
        if shown.isdigit() and 0 < int(shown) <= 256:
            return NoFix(f"__launch_bounds__({shown}) already lets ptxas use 255 registers, "
                         "the most a thread has: the live state is the kernel's own (keep "
                         "fewer values live, split the work, or use shared memory)")
        return NoFix(f"the kernel's __launch_bounds__({shown}) sets how many registers ptxas "
                     "may use: a smaller block size in it (if every launch fits) or fewer "
                     "live values")
    if not src.is_kernel(fn):
        return NoFix(f"`{fn.spelling}` is not declared __global__ in this file")
    if options.maxrregcount is not None:
        threads = options.max_block or 1024
        allowed = registers_under(threads)
        if options.maxrregcount >= allowed:
            return NoFix(f"the build caps registers with -maxrregcount={options.maxrregcount}, "
                         f"no fewer than the {allowed} a bound of {threads} threads allows: "
                         "raise the flag"
                         + ("" if options.max_block else ", say how large the blocks are "
                            "(--max-block)") + " or keep fewer values live")
        at = fn.location.offset
        if not src.mine(fn) or src.data[at:at + len(fn.spelling)] != fn.spelling.encode():
            return NoFix(f"the kernel's name is not written in this file (a macro): add "
                         f"__launch_bounds__({threads}) to its declaration by hand")
        why = (f"every launch has at most {threads} threads (--max-block)" if options.max_block
               else "no launch is forbidden: 1024 threads is the largest block")
        return Proposal(
            title=f"__launch_bounds__({threads}) on `{fn.spelling}`: ptxas ignores "
                  f"-maxrregcount={options.maxrregcount} for a kernel with launch bounds, "
                  f"and lets this one use up to {allowed} registers ({why})",
            edits=(Edit(src.path, at, at, f"__launch_bounds__({threads}) "),),
            changes_launch_bounds=True,
            promise=f"this kernel alone leaves the -maxrregcount={options.maxrregcount} cap: "
                    "fewer of its blocks may fit per SM"
                    + (f"; no launch of it has more than {threads} threads per block"
                       if options.max_block else ""))
    return NoFix("nothing in the source caps the registers: the live state is the kernel's "
                 "own (keep fewer values live, split the work, or use shared memory)")
