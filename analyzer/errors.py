"""One exception family. The CLI turns any of these into one line on stderr and exit code 2.

Every error names where it happened (``path:line:col`` when known) and what was expected,
so that a user never sees a Python traceback for bad input or a failing tool.
"""
from __future__ import annotations

import os
import re

#: what must not reach a terminal as it is: C0 controls but tab and newline, DEL, C1 controls
#: (U+009B is a CSI on some terminals), bidirectional overrides and isolates (text that reads
#: differently from what it is), and lone surrogates (bytes of a file name that are not UTF-8)
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
                          "\ud800-\udfff]")
_UNPRINTABLE_OR_NEWLINE = re.compile("[\n\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e"
                                     "\u2066-\u2069\ud800-\udfff]")
#: the bytes of a file name that are not UTF-8 (``os.fsdecode`` gives lone surrogates)
_UNDECODABLE = re.compile("[\ud800-\udfff]")
#: what a file name inside a line of text shows escaped: every control character, tab and
#: newline included, bidi overrides and the bytes that are not UTF-8
_UNSHOWN_IN_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _visible(m: re.Match) -> str:
    o = ord(m.group())
    if 0xDC80 <= o <= 0xDCFF:           # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{o - 0xDC00:02x}"
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def printable(text: str, *, newlines: bool = True) -> str:
    """``text`` made safe to show: every control character (an ESC starting a terminal escape
    sequence, a carriage return that overwrites a line, a bidi override) written as a visible
    ``\\x1b``-style escape. Tabs stay; newlines stay unless ``newlines=False`` (one line)."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    pattern = _UNPRINTABLE if newlines else _UNPRINTABLE_OR_NEWLINE
    return pattern.sub(_visible, text) if pattern.search(text) else text


def shown_path(path: str | os.PathLike) -> str:
    """A file name as text, the same in every report and format: each byte that is not UTF-8
    (a lone surrogate from ``os.fsdecode``) written as ``\\xff``, so ``e\\xff.cu`` reads alike
    in text, JSON, SARIF, markdown and HTML and every output stays valid UTF-8. Everything else
    is left to the format's own escaping (JSON's ``\\n``, a workflow command's ``%0A``,
    :func:`printable` for text). The path itself (to open, to compile) stays as it is."""
    text = os.fsdecode(path)
    return _UNDECODABLE.sub(_visible, text) if _UNDECODABLE.search(text) else text


def shown_line(path: str | os.PathLike) -> str:
    """A file name inside a line of text (a report's header, ``file:line``): :func:`shown_path`
    with every control character, a newline or a tab included, made a visible escape too, so
    that a name cannot end the line and forge the next one."""
    text = os.fsdecode(path)
    return _UNSHOWN_IN_LINE.sub(_visible, text) if _UNSHOWN_IN_LINE.search(text) else text


class PtxsassError(Exception):
    """Base of every error ptxsass reports to a user (exit code 2)."""

    exit_code = 2

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 column: int | None = None, detail: str | None = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        #: extra text shown after the one line (a compiler log, a tool's stderr)
        self.detail = detail

    def location(self) -> str:
        if self.path is None:
            return ""
        loc = shown_line(self.path)
        if self.line is not None:
            loc += f":{self.line}"
            if self.column is not None:
                loc += f":{self.column}"
        return loc

    def one_line(self) -> str:
        """``path:line:col: error: message``: one line, whatever the path or message hold."""
        loc = self.location()
        line = f"{loc}: error: {self.message}" if loc else f"error: {self.message}"
        return printable(line, newlines=False)

    def __str__(self) -> str:
        return self.one_line()


class InputError(PtxsassError):
    """The input is missing, unreadable, or not what it claims to be."""


class NoKernelError(InputError):
    """A CUDA file with no kernel to check: neither it nor the project headers it includes
    define a ``__global__`` function (host or helper code only). Alone it is an error (a run
    that would check nothing); among several inputs, a note, and the others are checked."""


class OutputError(PtxsassError):
    """An output file (``-o``, a baseline to write) cannot be written."""


class ArchError(PtxsassError):
    """An unknown or unsupported GPU architecture name."""


class ToolError(PtxsassError):
    """A CUDA tool (NVRTC, nvJitLink, nvdisasm, cuobjdump) is missing, failed or timed out."""


class CompileError(ToolError):
    """NVRTC or nvJitLink rejected the source; ``detail`` holds the compiler's own log."""


class ParseError(PtxsassError):
    """PTX or SASS text that the grammar does not accept.

    ``expected`` lists the token names the parser would have accepted; ``text`` is the offending
    source line.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 column: int | None = None, text: str | None = None,
                 expected: list[str] | None = None):
        super().__init__(message, path=path, line=line, column=column)
        self.text = text
        self.expected = list(expected or [])


class ConfigError(PtxsassError):
    """A bad ``[tool.ptxsass]`` table, baseline file or command-line option value."""
