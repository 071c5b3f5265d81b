"""The incidents part of the daemon's HTTP server.

- ``GET /incidents`` (``?status=open&status=acknowledged&collection=shop.orders&limit=50``) and
  ``GET /incidents/ID``: the same JSON as ``argus incidents --format json`` and ``argus incident
  show ID --format json``, without authentication, like ``/runs/ID``.
- ``POST /incidents/ID/ack|resolve|expected|false-positive`` with an optional JSON body
  ``{"owner": "...", "note": "..."}``: only with ``Authorization: Bearer TOKEN``, the token of
  ``ARGUS_INCIDENT_TOKEN`` or ``ARGUS_INCIDENT_TOKEN_FILE`` compared in constant time. Without a
  configured token the server has no POST routes at all.

Answers are (status, JSON body, extra headers); the server writes them. Nothing here echoes the
token or a request header.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qs

import structlog
from pydantic import SecretStr

from argus.agent.clock import Clock
from argus.agent.errors import ArgusError
from argus.daemon.alerts.cli import split_collection
from argus.daemon.incidents.cli import NOTE_MAX, OWNER_MAX, check_text, parse_id
from argus.daemon.incidents.errors import IncidentError
from argus.daemon.incidents.models import ACTIVE, Incident
from argus.daemon.store.errors import NotFound, StoreError
from argus.daemon.store.incidents import Action, IncidentBook

__all__ = ["ACTIONS", "BODY_MAX", "Answer", "IncidentApi"]

log = structlog.get_logger("argus.http")

Answer = tuple[int, Any, dict[str, str]]
ACTIONS: dict[str, Action] = {"ack": "acknowledged", "resolve": "resolved", "expected": "expected",
                              "false-positive": "false_positive"}
BODY_MAX = 16_384
_STATUSES = ("open", "acknowledged", "resolved", "expected", "false_positive")
_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="argus"'}


class IncidentApi:
    def __init__(self, *, book: Callable[[], IncidentBook], clock: Clock,
                 token: Callable[[], SecretStr | None] | None = None,
                 changed: Callable[[], None] | None = None) -> None:
        """``book`` gives the incidents of the open store (the server listens before the store opens);
        ``token`` reads the configured bearer token (None: status changes are off); ``changed`` runs
        after a status change (the daemon queues its notice and wakes the sender)."""
        self._books, self._clock, self._token, self._changed = book, clock, token, changed

    @property
    def _book(self) -> IncidentBook:
        return self._books()

    @property
    def writable(self) -> bool:
        return self._token is not None

    # --- reading -------------------------------------------------------------------------------

    def get(self, path: str, query: str) -> Answer | None:
        """The answer for ``path``, or None when it is no incidents path."""
        if path != "/incidents" and not path.startswith("/incidents/"):
            return None
        try:
            if path in ("/incidents", "/incidents/"):
                return self._list(parse_qs(query, keep_blank_values=True))
            number = parse_id(path.removeprefix("/incidents/"))
            return 200, _shown(self._book.get(number)).model_dump(mode="json"), {}
        except (ValueError, NotFound):
            return 404, {"error": "no such incident"}, {}
        except StoreError as exc:
            log.warning("incidents_unavailable", error=str(exc))
            return 503, {"error": "the history database cannot answer now"}, {}

    def _list(self, query: Mapping[str, list[str]]) -> Answer:
        unknown = sorted(set(query) - {"status", "collection", "limit"})
        if unknown:
            return 400, {"error": f"unknown parameter {unknown[0]!r} (known: status, collection, limit)"}, {}
        wanted = [s for value in query.get("status", []) for s in value.split(",") if s]
        bad = [s for s in wanted if s not in (*_STATUSES, "active", "all")]
        if bad:
            return 400, {"error": f"status {bad[0]!r} is not one of {', '.join(_STATUSES)}, active, all"}, {}
        statuses: list[str] | None = sorted({x for s in wanted or ["active"]
                                             for x in (ACTIVE if s == "active" else [s])})
        if "all" in wanted:
            statuses = None
        limit_text = (query.get("limit") or ["100"])[-1]
        if not limit_text.isdigit() or not 1 <= int(limit_text) <= 1000:
            return 400, {"error": "limit must be a number from 1 to 1000"}, {}
        collection = query["collection"][-1] if query.get("collection") else None
        connection, database, name = split_collection(collection) if collection else (None, None, None)
        found = self._book.list(statuses=statuses, connection=connection, database=database, collection=name,
                                limit=int(limit_text))
        return 200, {"incidents": [_shown(i).model_dump(mode="json", exclude={"history"}) for i in found]}, {}

    # --- changing ------------------------------------------------------------------------------

    def post(self, path: str, headers: Mapping[str, str], body: bytes) -> Answer:
        """A status change; the token is checked before anything about the incident is looked at."""
        refused = self._refuse(headers.get("authorization"))
        if refused is not None:
            return refused
        parts = path.split("/")  # exactly /incidents/ID/ACTION: //incidents/1/ack is no path of ours
        if len(parts) != 4 or parts[:2] != ["", "incidents"] or parts[3] not in ACTIONS:
            return 404, {"error": "no such path", "paths": [f"/incidents/ID/{a}" for a in ACTIONS]}, {}
        try:
            number = parse_id(parts[2])
        except ValueError:
            return 404, {"error": "no such incident"}, {}
        try:
            fields = json.loads(body.decode()) if body.strip() else {}
        except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: [[[[... nested too deep
            return 400, {"error": "the body is not JSON (send {\"owner\": \"...\", \"note\": \"...\"} or nothing)"}, {}
        if not isinstance(fields, dict) or set(fields) - {"owner", "note"} or \
                any(v is not None and not isinstance(v, str) for v in fields.values()):
            return 400, {"error": "the body takes a JSON object with text fields owner and note, nothing else"}, {}
        if any(isinstance(v, str) and not v.isascii() and _has_surrogate(v) for v in fields.values()):
            return 400, {"error": "owner and note must be Unicode text (a \\ud800 alone is no character)"}, {}
        try:
            owner = check_text("owner", fields.get("owner"), OWNER_MAX)
            note = check_text("note", fields.get("note"), NOTE_MAX)
        except ValueError as exc:
            return 400, {"error": str(exc)}, {}
        try:
            changed = self._book.change_status(number, ACTIONS[parts[3]], now=self._clock.now(), source="http",
                                               owner=owner, note=note)
        except NotFound:
            return 404, {"error": "no such incident"}, {}
        except IncidentError as exc:
            return 409, {"error": str(exc)}, {}
        except StoreError as exc:
            log.warning("incident_not_changed", incident=number, error=str(exc))
            return 503, {"error": "the history database cannot answer now"}, {}
        if self._changed is not None:
            try:
                self._changed()
            except StoreError as exc:  # the notice waits for the daemon's next pass
                log.warning("incident_notice_not_queued", incident=number, error=str(exc))
        log.info("incident_changed_over_http", incident=number, status=changed.status)
        return 200, _shown(changed).model_dump(mode="json"), {}

    def _refuse(self, authorization: str | None) -> Answer | None:
        if self._token is None:
            return 404, {"error": "no such path"}, {}
        try:
            expected = self._token()
        except ArgusError as exc:  # the mounted file went missing: names the file, never its content
            log.error("incident_token_unreadable", error=str(exc))
            return 503, {"error": "the incident token cannot be read; see the daemon's log"}, {}
        scheme, _, given = (authorization or "").partition(" ")
        if expected is None or scheme.lower() != "bearer" or not given.strip():
            return 401, {"error": "a bearer token is required (Authorization: Bearer TOKEN)"}, _CHALLENGE
        if not hmac.compare_digest(given.strip().encode(), expected.get_secret_value().encode()):
            log.warning("incident_token_refused")
            return 401, {"error": "the bearer token is not the one configured"}, _CHALLENGE
        return None


def _shown(incident: Incident) -> Incident:
    """Each finding links to the stored run with its evidence, as served by this daemon."""
    return incident.model_copy(update={"findings": [
        f.model_copy(update={"evidence_url": f"/runs/{f.last_run}"}) for f in incident.findings]})


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
