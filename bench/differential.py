#!/usr/bin/env python3
"""The in-process engine against itself, at length: every way Argus counts must give one answer.

Each example draws a collection and 20 filters (``tests/agent/engine/generated.py``: null and
missing, nested arrays, arrays of documents, Decimal128/NaN/-0.0, dates and date-like strings,
non-ASCII text; the shapes the planners and contracts send) and compares the fast path, the
general path, ``count_documents`` and ``count_many``'s batched ``$facet`` count. The CI test runs
150 examples; this runs as many as asked, from a fixed seed.

Usage: python bench/differential.py --examples N [--seed S] [--quick]
``--quick`` runs 20 examples. Prints examples, filters compared and disagreements; exits 1 when
nothing was compared (it says so), 2 on any disagreement (each printed).
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse  # noqa: E402
import random  # noqa: E402
import time  # noqa: E402

from tests.agent.engine.generated import disagreements, documents, filters  # noqa: E402

FILTERS_PER_EXAMPLE = 20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--quick", action="store_true", help="20 examples, a smoke run")
    args = parser.parse_args(argv)
    if args.quick:
        args.examples = 20
    started = time.monotonic()
    compared = 0
    found = []
    for i in range(args.examples):
        rng = random.Random(args.seed * 1_000_003 + i)
        n, bad = disagreements(documents(rng), filters(rng, FILTERS_PER_EXAMPLE))
        compared += n
        found.extend(bad)
    for query, why in found:
        print(f"disagreement: {query!r}: {why}")
    print(f"examples {args.examples}  filters compared {compared}  disagreements {len(found)}  "
          f"seed {args.seed}  seconds {time.monotonic() - started:.1f}")
    if compared == 0:
        print("nothing measured: no filter was compared", file=sys.stderr)
        return 1
    return 2 if found else 0


if __name__ == "__main__":
    sys.exit(main())
