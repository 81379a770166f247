"""The attention benchmark's files, written and merged without a GPU (standard library only): attention.csv (one
row a measurement, cutelite.teach.attention.COLUMNS) and records.json (what chapter 10 prints, the same rows
as numbers, with the run's device, date and command), and the Markdown table bench.py prints last.

    python benchmarks/attention/record.py --merge DIR1 DIR2 ... --out DIR

joins the files of runs split into several calls (one per dtype and head dim, say) into one pair: their rows
in order, their commands joined by " && ", the copy rate the mean of theirs; the runs must share a device.
"""

import argparse
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from cutelite.teach.attention import COLUMNS  # noqa: E402
from cutelite.teach.records import dump  # noqa: E402

ABOUT = ("Chapter 10's record: forward attention measured by benchmarks/attention/bench.py (its attention.csv): "
         "PyTorch's SDPA with each backend pinned, a naive attention and this book's kernels. run: where and how, "
         "copy_gbs the device-to-device copy rate measured in the same process; rows: " + ", ".join(COLUMNS)
         + " (null where not measured; note says why).")


def number(cell):
    """A cell of the CSV as the record holds it: a number as a number, "" (not measured) as None, text as text."""
    if cell == "" or not isinstance(cell, str):
        return None if cell == "" else cell
    try:
        return int(cell) if cell.lstrip("-").isdigit() else float(cell)
    except ValueError:
        return cell


def write(rows, run, out):
    """attention.csv and records.json of `rows` (dicts keyed by COLUMNS, cells as the CSV writes them) and
    `run` (command, date, device, method, versions, copy_gbs) into folder `out`."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "attention.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        w.writerows(rows)
    dump({"about": ABOUT, "run": run, "rows": [[number(r[c]) for c in COLUMNS] for r in rows]},
         os.path.join(out, "records.json"))


def read(folder):
    """(rows, run) of a folder that write() filled: the CSV's rows as dicts of text, the JSON's run."""
    with open(os.path.join(folder, "attention.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(folder, "records.json"), encoding="utf-8") as f:
        return rows, json.load(f)["run"]


def merge(folders, out):
    """One attention.csv + records.json in `out` from the runs in `folders` (on one device)."""
    parts = [read(f) for f in folders]
    devices = {run["device"] for _, run in parts}
    if len(devices) != 1:
        raise SystemExit(f"record.py --merge: the runs were on different devices: {sorted(devices)}")
    first = parts[0][1]
    run = dict(first, command=" && ".join(run["command"] for _, run in parts),
               date=max(run["date"] for _, run in parts),
               copy_gbs=round(sum(run["copy_gbs"] for _, run in parts) / len(parts)))
    write([r for rows, _ in parts for r in rows], run, out)


def table(rows, names):
    """The TFLOP/s of each kernel (columns) for each configuration (rows), as Markdown."""
    configs = list(dict.fromkeys((r["dtype"], r["D"], r["mask"], r["S"]) for r in rows))
    got = {(r["dtype"], r["D"], r["mask"], r["S"], r["kernel"]): r["TFLOP/s"] or "-" for r in rows}
    lines = ["| dtype | D | mask | S | " + " | ".join(names) + " | naive GB/s |",
             "|---|---|---|---|" + "---|" * (len(names) + 1)]
    gbs = {(r["dtype"], r["D"], r["mask"], r["S"]): r["GB/s"] or "-" for r in rows if r["kernel"] == "naive"}
    for c in configs:
        lines.append("| " + " | ".join(map(str, c)) + " | " + " | ".join(got.get(c + (n,), "") for n in names)
                     + f" | {gbs.get(c, '')} |")
    return "\n".join(lines)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description="merge the attention benchmark's runs into one record")
    p.add_argument("--merge", nargs="+", required=True, metavar="DIR")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    merge(a.merge, a.out)
    rows, _ = read(a.out)
    print(table(rows, list(dict.fromkeys(r["kernel"] for r in rows))))
