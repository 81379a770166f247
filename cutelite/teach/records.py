"""What the book measured on GPUs, kept as data: each chapter's folder holds a records.json beside its kernels
(FOLDERS), with the device, date and command of every run, so that a page built without a GPU prints real
numbers, labelled as recorded. tests/ check every file against the benchmark results it was taken from.

    from cutelite.teach.records import load
    load("kernels/gemm")["rows"]          # chapter 7's recorded ladder

Standard library only: the live pages read the same files (book/_ext/book_live.py packs them into cutelite's
wheel). JSON has no tuples and only string keys: `load` reads every array as a tuple (a record is read-only)
and a key written as an integer ("4096") or a problem size ("4096x14336x4096") as the int or the (M, N, K)
tuple; `dump` writes them so.
"""

import json
import os
import re

__all__ = ["ROOT", "FOLDERS", "load", "dump"]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # holds cutelite/, kernels/

# the folders that keep a records.json, and the chapters that print it
FOLDERS = {"cutelite/teach": "chapters 1 and 4: copies, transposes, bank conflicts",
           "kernels/tiled": "chapter 6: ldmatrix and misaligned rows",
           "kernels/gemm": "chapter 7: the GEMM ladder",
           "kernels/hopper": "chapter 8: the Hopper ladder, sweeps, profile and clusters; chapter 11: FP8",
           "kernels/dsl": "chapter 9: the CuTe DSL's kernels beside ours",
           "kernels/attention": "chapter 10: attention, naive, PyTorch's backends and ours"}

_SIZE = re.compile(r"\d+(x\d+){2}")


def _key(k):
    if k.isdigit():
        return int(k)
    return tuple(map(int, k.split("x"))) if _SIZE.fullmatch(k) else k


def _read(x):
    if isinstance(x, dict):
        return {_key(k): _read(v) for k, v in x.items()}
    return tuple(_read(v) for v in x) if isinstance(x, list) else x


def load(folder):
    """The records of `folder` (a key of FOLDERS): its records.json, arrays as tuples, size keys as numbers."""
    if folder not in FOLDERS:
        raise ValueError(f"records.load: no records in {folder!r}; the folders are {', '.join(FOLDERS)}")
    with open(os.path.join(ROOT, folder, "records.json"), encoding="utf-8") as f:
        return _read(json.load(f))


def _text(x, indent):
    """x as JSON: a dict one entry a line, a list of scalars on one line, other lists one item a line."""
    inner = indent + " "
    if isinstance(x, dict) and x:
        key = lambda k: json.dumps("x".join(map(str, k)) if isinstance(k, tuple) else str(k))  # noqa: E731
        return "{\n" + ",\n".join(f"{inner}{key(k)}: {_text(v, inner)}" for k, v in x.items()) + f"\n{indent}}}"
    if isinstance(x, (list, tuple)) and any(isinstance(v, (dict, list, tuple)) for v in x):
        return "[\n" + ",\n".join(inner + _text(v, inner) for v in x) + f"\n{indent}]"
    return json.dumps(x, ensure_ascii=False)


def dump(record, path):
    """Write `record` (as `load` returns it) to the JSON file `path`, so that `load` reads it back equal."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(_text(record, "") + "\n")
