"""Reading the files people audit: mongoexport's JSON (lines or one array), mongodump's BSON, either
gzipped, all through one decoder (``reader``) into the in-process engine (``load``)."""

from argus.daemon.files.load import collection_name, load_file
from argus.daemon.files.reader import read_documents

__all__ = ["FILE_FORMATS", "collection_name", "load_file", "read_documents"]

# what every command's --file reads, said once: the loader is the same everywhere
FILE_FORMATS = "mongoexport JSON (lines or an array), mongodump BSON or its folder, gzipped or not"
