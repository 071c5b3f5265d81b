"""A file (or a ``mongodump`` folder) loaded into the in-process engine, streaming, within memory.

``load_file`` reads any layout ``reader`` knows into a ``MemoryCollection``: the collection is
named by the dump's ``metadata.json`` when there is one (which also lists its indexes), else after
the file. Documents are kept as BSON; a file whose documents would take more memory than this
machine can spare is refused as soon as that is known, with the size and what to do, instead of
swapping. Documents without ``_id`` keep none (no made-up ObjectId with today's time, which would
read as documents inserted since the last run); two documents with the same ``_id`` are refused as
MongoDB refuses them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from argus.agent.engine import DocumentStore, MemoryCollection
from argus.agent.engine.values import group_key
from argus.agent.errors import DataLoadError
from argus.daemon.files.reader import LoadDeadline, Progress, open_stream, read_documents

__all__ = ["MEMORY_SHARE", "collection_name", "default_memory_budget", "load_file"]

MEMORY_SHARE = 0.4  # of the memory available at load time: BSON kept, plus one batch decoded per read
_SUFFIXES = (".gz", ".jsonl", ".ndjson", ".json", ".bson")


def default_memory_budget() -> int | None:
    """Bytes of documents a load may keep: a share of MemAvailable (Linux), or no limit elsewhere."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(int(line.split()[1]) * 1024 * MEMORY_SHARE)
    except (OSError, ValueError, IndexError):
        return None
    return None


def collection_name(file: Path) -> str:
    """``orders.jsonl.gz`` → ``orders``; ``orders.bson`` → ``orders``."""
    name = file.name
    changed = True
    while changed:
        changed = False
        for suffix in _SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                name, changed = name[: -len(suffix)], True
    return name


def _dump_file(folder: Path, collection: str | None) -> Path:
    found = sorted([*folder.glob("*.bson"), *folder.glob("*.bson.gz")])
    names = {collection_name(p): p for p in found}
    if collection is not None and collection in names:
        return names[collection]
    if not names:
        raise DataLoadError(f"{folder}: is a folder without a mongodump collection (.bson or .bson.gz); "
                            "give a file, or the folder mongodump wrote for one database")
    if collection is None and len(names) == 1:
        return next(iter(names.values()))
    listed = ", ".join(sorted(names))
    if collection is None:
        raise DataLoadError(f"{folder}: holds several collections ({listed}); name one with --collection")
    raise DataLoadError(f"{folder}: has no collection {collection!r}; it holds {listed}")


def _metadata(bson_file: Path) -> dict[str, Any]:
    """``name.metadata.json`` (or ``.json.gz``) beside a dump's ``name.bson``, when present."""
    stem = collection_name(bson_file)
    for candidate in (bson_file.with_name(f"{stem}.metadata.json"), bson_file.with_name(f"{stem}.metadata.json.gz")):
        if candidate.is_file():
            try:
                stream, _ = open_stream(candidate)
                with stream:
                    data = json.loads(stream.read().decode("utf-8"))
            except (OSError, EOFError, ValueError) as exc:
                raise DataLoadError(f"{candidate}: not a readable mongodump metadata file ({type(exc).__name__})"
                                    ) from None
            return data if isinstance(data, dict) else {}
    return {}


def load_file(path: str | Path, *, collection: str | None = None, database: str = "files",
              progress: Callable[[int, int], None] | None = None,
              max_bytes: int | None = None, deadline: LoadDeadline | None = None) -> MemoryCollection:
    """The documents of ``path`` as a collection. ``progress(bytes_read, file_size)`` is called as the
    file is read; ``max_bytes`` caps the documents kept (default: ``default_memory_budget()``); past
    ``deadline`` (the run's time budget) the load stops with a ``DataLoadError``."""
    file = Path(path)
    if file.is_dir():
        file = _dump_file(file, collection)
        database = file.parent.name or database
    elif not file.exists():
        raise DataLoadError(f"{file}: no such file")
    elif not file.is_file():
        raise DataLoadError(f"{file}: not a regular file")
    metadata = _metadata(file) if file.name.endswith((".bson", ".bson.gz")) else {}
    name = collection or str(metadata.get("collectionName") or "") or collection_name(file)
    indexes = [i["key"] for i in metadata.get("indexes", []) if isinstance(i, dict) and isinstance(i.get("key"), dict)]
    budget = default_memory_budget() if max_bytes is None else max_bytes
    size = file.stat().st_size
    report: Progress | None = (lambda done: progress(done, size)) if progress is not None else None
    store = DocumentStore()
    ids: set[int] = set()
    for place, doc, encoded in read_documents(file, report, deadline=deadline):
        if "_id" in doc:
            _check_unique(ids, doc["_id"], place, store)
        store.append(encoded)
        if budget is not None and store.nbytes > budget:
            raise DataLoadError(
                f"{file}: its documents need more than {budget / 1e6:,.1f} MB of memory (stopped at {place}), "
                f"more than this machine can spare ({MEMORY_SHARE:.0%} of the memory available); audit a part of it "
                f"(for JSON lines: head -n 100000 {file.name} > part.jsonl), or import it into MongoDB "
                f"(mongoimport / mongorestore) and audit with --uri")
    store.seal()
    return MemoryCollection(store, name=name, database=database, indexes=indexes)


def _check_unique(ids: set[int], value: Any, place: str, store: DocumentStore) -> None:
    """Refuse a second document with an ``_id`` already loaded (MongoDB's unique ``_id`` index). The
    set keeps hashes only; a hash met twice is confirmed against the stored documents."""
    try:
        key = hash(group_key(value))
    except TypeError:
        return
    if key not in ids:
        ids.add(key)
        return
    wanted = group_key(value)
    for batch in store.batches():
        for doc in batch:
            if "_id" in doc and group_key(doc["_id"]) == wanted:
                raise DataLoadError(f"{place}: a second document with the same _id; MongoDB keeps _id unique, "
                                    "so this is no export of one collection")
