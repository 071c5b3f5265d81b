"""A small Dockerfile reader for static checks where Docker is not available.

It follows the Dockerfile reference for what the checks need: parser directives, comments,
backslash line continuations, known instructions only, exec-form JSON, stages (``FROM ... AS``),
``ARG``/``ENV`` substitution and ``.dockerignore`` patterns (last match wins, ``!`` re-includes).
"""

from __future__ import annotations

import glob
import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

__all__ = ["Dockerfile", "Instruction", "Stage", "dockerignore_excludes", "parse_dockerfile"]

KEYWORDS = {"FROM", "RUN", "CMD", "LABEL", "MAINTAINER", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME",
            "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"}
_DIRECTIVE = re.compile(r"^#\s*([a-zA-Z]+)\s*=\s*(.+?)\s*$")
_VAR = re.compile(r"\$(?:\{(\w+)(?::[-+][^}]*)?\}|(\w+))")


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str
    line: int

    def flags(self) -> tuple[dict[str, str], str]:
        """``--name=value`` flags at the start of the arguments, and the rest."""
        flags, rest = {}, self.args
        while match := re.match(r"--([\w-]+)(?:=(\S*))?\s+", rest):
            flags[match[1]] = match[2] or ""
            rest = rest[match.end():]
        return flags, rest

    def healthcheck_command(self) -> list[str] | None:
        """The exec-form command of ``HEALTHCHECK [flags] CMD [...]`` (None for NONE or shell form)."""
        _, rest = self.flags()
        if not rest.startswith("CMD "):
            return None
        return Instruction("CMD", rest[4:], self.line).exec_form()

    def copies(self, root: Path, workdir: str) -> list[tuple[str, PurePosixPath]]:
        """(file in the build context, where it lands in the image) for COPY/ADD from the context."""
        _, rest = self.flags()
        words = json.loads(rest) if rest.startswith("[") else rest.split()
        *sources, dest = words
        target = PurePosixPath(workdir, dest)
        into_dir = dest.endswith("/") or len(sources) > 1 or any(c in s for s in sources for c in "*?[")
        out = []
        for source in sources:
            for match in sorted(glob.glob(source, root_dir=root)):
                path = root / match
                if path.is_dir():
                    out += [(str(f.relative_to(root)), target / f.relative_to(path).as_posix())
                            for f in sorted(path.rglob("*")) if f.is_file()]
                else:
                    out.append((match, target / path.name if into_dir else target))
        return out

    def exec_form(self) -> list[str] | None:
        """The JSON array of an exec-form instruction, None for shell form."""
        text = self.args.strip()
        if not text.startswith("["):
            return None
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"line {self.line}: {self.keyword} looks like exec form but is not JSON: {exc}") from None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"line {self.line}: {self.keyword} exec form must be a JSON array of strings")
        return value


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def last(self, keyword: str) -> Instruction | None:
        found = [i for i in self.instructions if i.keyword == keyword]
        return found[-1] if found else None

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]

    def env(self, args: dict[str, str]) -> dict[str, str]:
        """ENV values in order, each with ``$VAR``/``${VAR}`` of earlier ENV and ARG values substituted."""
        values: dict[str, str] = {}
        for ins in self.all("ENV"):
            words = shlex.split(ins.args)
            pairs = [w.split("=", 1) for w in words] if "=" in words[0] else [[words[0], " ".join(words[1:])]]
            for key, value in pairs:
                values[key] = substitute(value, {**args, **values})
        return values


@dataclass
class Dockerfile:
    directives: dict[str, str]
    global_args: dict[str, str]
    stages: list[Stage]

    @property
    def final(self) -> Stage:
        return self.stages[-1]

    def stage(self, name: str) -> Stage | None:
        return next((s for s in self.stages if s.name == name), None)


def substitute(text: str, values: dict[str, str]) -> str:
    return _VAR.sub(lambda m: values.get(m[1] or m[2], m[0]), text)


def _logical_lines(text: str) -> tuple[dict[str, str], list[tuple[int, str]]]:
    directives: dict[str, str] = {}
    lines = text.splitlines()
    index = 0
    while index < len(lines) and (match := _DIRECTIVE.match(lines[index])):  # directives come first
        directives[match[1].lower()] = match[2]
        index += 1
    out: list[tuple[int, str]] = []
    buffer, start = "", 0
    for number, raw in enumerate(lines[index:], index + 1):
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and buffer):
            continue  # comments and blank lines may sit inside a continuation
        if not stripped:
            continue
        if not buffer:
            start = number
        if stripped.endswith("\\"):
            buffer += stripped[:-1] + " "
            continue
        out.append((start, buffer + stripped))
        buffer = ""
    if buffer:
        raise ValueError(f"line {start}: the file ends inside a line continuation")
    return directives, out


def parse_dockerfile(text: str) -> Dockerfile:
    """Parse ``text``; raise ValueError naming the line for anything Docker would reject."""
    directives, lines = _logical_lines(text)
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for number, line in lines:
        keyword, _, args = line.partition(" ")
        keyword, args = keyword.upper(), args.strip()
        if keyword not in KEYWORDS:
            raise ValueError(f"line {number}: unknown instruction {keyword!r}")
        if "<<" in args and keyword in ("RUN", "COPY", "ADD"):
            raise ValueError(f"line {number}: heredocs are not supported by this reader")
        if not args and keyword not in ("CMD", "ENTRYPOINT"):
            raise ValueError(f"line {number}: {keyword} needs arguments")
        ins = Instruction(keyword, args, number)
        if keyword == "FROM":
            _, rest = ins.flags()
            words = rest.split()
            if len(words) not in (1, 3) or (len(words) == 3 and words[1].upper() != "AS"):
                raise ValueError(f"line {number}: FROM takes an image and an optional 'AS name'")
            stages.append(Stage(substitute(words[0], global_args), words[2] if len(words) == 3 else None))
            continue
        if not stages:
            if keyword != "ARG":
                raise ValueError(f"line {number}: only ARG may come before the first FROM, not {keyword}")
            name, _, default = args.partition("=")
            global_args[name.strip()] = default.strip()
            continue
        if keyword in ("CMD", "ENTRYPOINT", "RUN", "SHELL", "VOLUME"):
            ins.exec_form()  # validates JSON when it is exec form
        stages[-1].instructions.append(ins)
    if not stages:
        raise ValueError("no FROM instruction")
    return Dockerfile(directives, global_args, stages)


def _pattern(rule: str) -> re.Pattern[str]:
    out = ""
    i = 0
    while i < len(rule):
        if rule.startswith("**", i):
            out += ".*"
            i += 2
            if rule.startswith("/", i):
                out, i = out[:-2] + "(?:.*/)?", i + 1
        elif rule[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif rule[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(rule[i]), i + 1
    return re.compile(out + "(?:/.*)?$")  # a directory's rule covers what is inside it


def dockerignore_excludes(rules_text: str, path: str) -> bool:
    """Whether ``.dockerignore`` keeps ``path`` (relative, with /) out of the build context."""
    excluded = False
    for raw in rules_text.splitlines():
        rule = raw.strip()
        if not rule or rule.startswith("#"):
            continue
        negate = rule.startswith("!")
        rule = rule.lstrip("!").strip().strip("/")
        if _pattern(rule).match(path):
            excluded = not negate
    return excluded
