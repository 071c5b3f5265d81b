"""Reading the files people audit: mongoexport's JSON (lines or one array), mongodump's BSON, either
gzipped, all through one decoder (``reader``) into the in-process engine (``load``)."""

from daemon.files.load import collection_name, load_file
from daemon.files.reader import read_documents

__all__ = ["collection_name", "load_file", "read_documents"]
