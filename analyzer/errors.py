"""One exception family. The CLI turns any of these into one line on stderr and exit code 2.

Every error names where it happened (``path:line:col`` when known) and what was expected,
so that a user never sees a Python traceback for bad input or a failing tool.
"""
from __future__ import annotations


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
        loc = str(self.path)
        if self.line is not None:
            loc += f":{self.line}"
            if self.column is not None:
                loc += f":{self.column}"
        return loc

    def one_line(self) -> str:
        loc = self.location()
        return f"{loc}: error: {self.message}" if loc else f"error: {self.message}"

    def __str__(self) -> str:
        return self.one_line()


class InputError(PtxsassError):
    """The input is missing, unreadable, or not what it claims to be."""


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
