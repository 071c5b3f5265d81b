"""``python -m argus.daemon.healthcheck``: the container's HEALTHCHECK, asking /healthz where the daemon listens.

The daemon writes the address it bound to ``ARGUS_DATA_DIR/daemon.listen`` (its ``--listen`` or
``ARGUS_LISTEN``, whichever it used) and removes it when it stops; reading that file, the probe follows
a ``--listen`` in the container's CMD as it follows ``ARGUS_LISTEN``. Exit 0 when /healthz answers 200.
Imports nothing heavy: it runs every 30 s in a fresh interpreter.
"""

from __future__ import annotations

import os
import sys
import urllib.request
from pathlib import Path

__all__ = ["LISTEN_FILE", "address", "main"]

LISTEN_FILE = "daemon.listen"


def address(environ: dict[str, str] | None = None) -> str:
    """``host:port`` to probe: the daemon's own record, else ``ARGUS_LISTEN``, else the default port."""
    env = os.environ if environ is None else environ
    data = Path(env.get("ARGUS_DATA_DIR") or Path.home() / ".local/share/argus")
    try:
        recorded = (data / LISTEN_FILE).read_text().strip()
    except OSError:
        recorded = ""
    host, _, port = (recorded or env.get("ARGUS_LISTEN") or "127.0.0.1:9464").rpartition(":")
    host = host.strip("[]")
    return f"{'127.0.0.1' if host in ('', '0.0.0.0', '::') else host}:{port}"


def main() -> int:
    try:
        with urllib.request.urlopen(f"http://{address()}/healthz", timeout=4) as answer:
            return 0 if answer.status == 200 else 1
    except OSError as exc:
        print(f"argus healthcheck: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
