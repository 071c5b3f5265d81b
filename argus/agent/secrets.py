"""Configured secrets, masked wherever they would be written: one mechanism for every output.

Whoever reads a secret (a MongoDB URI, ``ARGUS_DATABASE_URL``, an LLM API key, a webhook URL or
HMAC key) registers it here; logs, reports (error, notes, trace), stored runs, alerts, HTTP
bodies and the command line's messages pass their text through ``redact``. Matching is on the
secret's value, whatever its shape (``shortkey-SECRET9`` as well as ``sk-…``), as written, as
JSON escapes it and as a URL escapes it, so an endpoint echoing a key back is masked too.

Connection strings are also taken apart without a parser (a malformed one is exactly the one
to fear): the text between the scheme and the last ``@`` and every query option value that
names a secret are registered, besides the whole string.

The registry is process-global, like logging: a secret seen once stays masked for the life of
the process. Values shorter than ``MIN_LENGTH`` are not registered (they would mask ordinary
words and numbers); they never appear anyway, as connection strings are never echoed.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any
from urllib.parse import quote, quote_plus, unquote

from pydantic import BaseModel

__all__ = ["MASK", "MIN_LENGTH", "SECRETS", "SecretRegistry"]

MASK = "***"
MIN_LENGTH = 4

# authMechanismProperties=AWS_SESSION_TOKEN:..., password=..., sslClientCertificateKeyPassword=...
_SECRET_OPTION = re.compile(r"(password|secret|token|key|authmechanismproperties)", re.I)
# A password written inline in any URL-shaped text (``mongodb://user:pw@host``, or ``mongodb:/user:pw@host``
# once a path has collapsed its slashes), registered or not: a connection string pasted where a path or a
# value goes reaches an error message or a report without anyone registering it.
_INLINE_CREDENTIALS = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*:/+[^\s:/@'\"`]*:)[^\s'\"`]+@")


class SecretRegistry:
    """Secret values to mask; thread-safe, append-only."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: frozenset[str] = frozenset()
        self._pattern: re.Pattern[str] | None = None

    def __bool__(self) -> bool:
        return bool(self._values)

    def register(self, *values: str | None) -> None:
        """Mask each value (and its JSON- and URL-escaped spellings) from now on."""
        forms: set[str] = set()
        for value in values:
            if not value or len(value.strip()) < MIN_LENGTH:
                continue
            value = value.strip()
            forms.update({value, json.dumps(value)[1:-1], quote(value, safe=""), quote_plus(value)})
            decoded = unquote(value)
            if decoded != value:
                forms.add(decoded)
        new = {f for f in forms if len(f) >= MIN_LENGTH} - self._values
        if not new:
            return
        with self._lock:
            self._values = self._values | new
            # longest first, so a URI is masked whole before its password is
            alternatives = sorted(self._values, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(v) for v in alternatives))

    def register_connection_string(self, text: str | None) -> None:
        """Register a connection string, its user-info and password, and its secret options,
        taken apart by hand: it may be malformed (``mongodb:/u:p@h``, an unescaped ``@``)."""
        if not text:
            return
        text = text.strip()
        parts = [text]
        rest = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*:/*", "", text)  # the scheme, however mistyped
        head, _, query = rest.partition("?")
        if "@" in head:
            userinfo = head.rsplit("@", 1)[0]
            parts.append(userinfo)
            _user, sep, password = userinfo.partition(":")
            if sep:
                parts.append(password)
        for option in re.split(r"[&;]", query):
            name, sep, value = option.partition("=")
            if sep and _SECRET_OPTION.search(name):
                parts.append(value)
                parts += [item.partition(":")[2] for item in value.split(",")]
        for conninfo in re.finditer(r"\b(password|sslpassword)\s*=\s*('(?:[^'\\]|\\.)*'|\S+)", text, re.I):
            parts.append(conninfo.group(2).strip("'"))
        self.register(*parts)

    def redact(self, text: str) -> str:
        """``text`` with every registered secret, and every password written inline in a URL, replaced by
        ``***``."""
        if not text:
            return text
        pattern = self._pattern
        if pattern is not None:
            text = pattern.sub(MASK, text)
        if "@" in text:
            text = _INLINE_CREDENTIALS.sub(rf"\g<1>{MASK}@", text)
        return text

    def scrub(self, value: Any) -> Any:
        """``value`` (strings, lists, dicts, pydantic models) with every secret masked; the same
        object when nothing needed masking."""
        return _scrubbed(value, self.redact)[0]


def _scrubbed(value: Any, redact: Any) -> tuple[Any, bool]:
    """The value with secrets masked, and whether anything changed (unchanged parts are shared)."""
    if isinstance(value, str):
        new = redact(value)
        return (new, True) if new != value else (value, False)
    if isinstance(value, list | tuple):
        pairs = [_scrubbed(v, redact) for v in value]
        return ([v for v, _ in pairs], True) if any(c for _, c in pairs) else (value, False)
    if isinstance(value, dict):
        items = {k: _scrubbed(v, redact) for k, v in value.items()}
        return ({k: v for k, (v, _) in items.items()}, True) if any(c for _, c in items.values()) else (value, False)
    if isinstance(value, BaseModel):
        updates = {}
        for name in type(value).model_fields:
            new, changed = _scrubbed(getattr(value, name), redact)
            if changed:
                updates[name] = new
        return (value.model_copy(update=updates), True) if updates else (value, False)
    return value, False


SECRETS = SecretRegistry()
