"""YAML syntax errors in words, at the line where the mistake is.

PyYAML reports where its scanner gave up (``problem_mark``), which for an unclosed quote or bracket
is the end of the file and for a key without ':' the line after; where it says what it was reading
(``context_mark``: the quote, the bracket, the key), that is the line the user must fix. Its own
text (``expected <block end>, but found '?'``) names parser tokens, not mistakes, so each known
problem is said as the mistake it comes from; an unknown one keeps the parser's words.
"""

from __future__ import annotations

import yaml

__all__ = ["describe_syntax_error"]


def describe_syntax_error(exc: yaml.MarkedYAMLError) -> tuple[int, str]:
    """The 1-based line of the mistake and what it is, for ``file:line: not valid YAML: ...``."""
    problem = exc.problem or exc.context or "not valid YAML"
    context = exc.context or ""
    at = exc.problem_mark or exc.context_mark
    line = at.line + 1 if at else 1
    opened = exc.context_mark.line + 1 if exc.context_mark else line
    if problem == "could not find expected ':'":
        return opened, "no ':' after the key on this line (write `key: value`)"
    if "quoted scalar" in context:
        return opened, "the quote opened here is never closed"
    if "flow sequence" in context or "flow mapping" in context:
        bracket = "[" if "sequence" in context else "{"
        return opened, (f"the '{bracket}' opened here is never closed (or an item in it lacks a ',' before line "
                        f"{line})")
    if "'\\t'" in problem or "\t" in problem:
        return line, "a tab in the indentation: YAML indents with spaces only"
    if problem == "mapping values are not allowed here":
        return line, "a ':' where a value was expected: quote a value that holds ': ', or give the key above its ':'"
    if problem.startswith("expected <block end>, but found '?'"):
        return line, "'?' starts a complex key in YAML: quote the text (\"? ...\") or remove the '?'"
    if problem.startswith("expected <block end>"):
        return line, (f"this line is indented differently from the lines above it (the block began at line "
                      f"{opened}): indent it as its siblings are")
    return line, problem
