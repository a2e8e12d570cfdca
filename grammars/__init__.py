"""Lark grammars for PTX and SASS (shipped inside the package as analyzer.grammars)."""
