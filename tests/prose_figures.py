"""Measured figures typed in the book's prose, and the records that hold them (tests/test_prose_figures.py).

A *figure* is a number in a markdown cell of a chapter, or on a book page, that reports a measurement: a time,
a rate, a ratio to cuBLAS or to a ceiling, a percentage, a register count, a stall fraction, a conflict count
from a GPU's counters. FIGURES says how each kind is recognised. A figure passes when one of these holds:

- **A record holds it.** Some recorded number lies within half a unit of the figure's last digit: 0.92 is
  held by 0.915 to 0.925, 410 by 409.5 to 410.5. After "about" or "some", an integer's trailing zeros do not
  count, so "about 200" is held by 150 to 250. 65,536 reads as 65536. Where the sentence names a problem size
  (2048^3, 4000x3000x2500), the recorded number must be recorded at that size. Where it names a record
  (`benchmarks/gemm/RESULTS.md`), the number must be in that record. A percentage is held only by a
  number that a record writes as a percentage. A range such as 0.92-0.94 needs both of its ends held.
- **Its sentence shows the arithmetic.** The figure is the value of an expression joined to it by "=" or by
  parentheses ("65536 / 384 = 170.7", "0.56 (410.5 / 737.5)"). A ratio written with x or "times", and a
  percentage, may also be the quotient of two numbers that the sentence writes ("8x ... (2.00 against
  0.25)"; "10 % slower (370.7 against 410.5)").
- **It is not a measurement.** NOT_MEASURED lists these (a datasheet or a programming guide, a computed
  figure), each with its source.

Records are the files that keep measurements with their device, date and command: the chapters' records.json
(RECORD_FILES, cutelite.teach.records) and the files of RECORD_GLOBS.

    python tests/prose_figures.py          # every figure found, and what holds it
"""

import ast
import bisect
import csv
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The chapters' records (cutelite.teach.records.FOLDERS) -> the problem size of their numbers that name none
# (kernels/tiled/records.json is not one: it records what launches did, in words).
RECORD_FILES = {
    "kernels/gemm/records.json": (4096, 4096, 4096),     # its run's "size"
    "kernels/hopper/records.json": (4096, 4096, 4096),   # its "about": "all at M = N = K = 4096"
    "cutelite/teach/records.json": None,
    "kernels/dsl/records.json": None,
    "kernels/attention/records.json": None,
}
RECORD_GLOBS = ["benchmarks/**/RESULTS*.md", "benchmarks/**/*.csv", "benchmarks/**/*.json", "kernels/GPU_CHECK.md"]
PAGE_GLOBS = ["chapters/*.ipynb", "book/*.md"]
NOT_PAGES = {"book/references.md"}                      # the bibliography

# Figures that are not measurements: a pattern of the sentence around the figure -> where the figure comes from.
NOT_MEASURED = {
    r"SM's 65,536 registers": "CUDA C++ Programming Guide, technical specifications per compute capability: "
                              "64K 32-bit registers per SM on 9.0",
    r"\(2\.00 against 0\.25\)": "FLOPs per shared-memory byte of the thread tiles of steps 5 and 3, computed "
                                "(cutelite.teach.gemm.ai_shared) and printed by the cell above",
}

# a number: 65,536 or 0.93, not part of a name (sm_90, 4.8.1, 2^32); "8x" is 8 and x
INTEGER, AFTER = r"(?<![\w.^])(?:\d{1,3}(?:,\d{3})+|\d+)", r"(?![0-9A-Za-wyz_^]|\.\d)"
NUM = INTEGER + r"(?:\.\d+)?" + AFTER
POINT = INTEGER + r"\.\d+" + AFTER                      # with a decimal point
DECIMAL = INTEGER + r"\.\d{2,}" + AFTER                 # with two decimals or more: 0.93, 0.142; not 9.0
RANGE = NUM + r"(?:\s*(?:-|–|to|and)\s*" + NUM + r")?(?:\*\*)?"
HEDGE = re.compile(r"(?:about|around|roughly|nearly|some|near|~)\s*$", re.I)
STALL = (r"(?:long[_ ]scoreboard|short[_ ]scoreboard|mio[_ ]throttle|lg[_ ]throttle|math[_ ]pipe[_ ]throttle|"
         r"barrier|not[_ ]selected|dispatch[_ ]stall|wait)")
MEASUREMENT = re.compile(r"cuBLAS|TFLOP|GB/s|TB/s|\bms\b|measur|record|\bran\b|took|H100|\brun \d|"
                         r"Nsight|ncu|stall|scoreboard|throttle|occupancy|busy", re.I)
# kind -> (pattern, what the sentence must also say for a match to count, or None)
FIGURES = {
    # a number with the unit of a time, a rate or a clock count
    "unit": (re.compile(RANGE + r"\s*(?:TFLOP/s|GFLOP/s|TFLOPS|TB/s|GB/s|MB/s|ms|µs|μs|us|ns|s|cycles|GHz)"
                        r"(?![\w/])"), None),
    # a ratio to a baseline: "0.56 of cuBLAS", "0.93-0.95 of its ceiling"
    "ratio": (re.compile(RANGE + r"\s*(?:x\s+|×\s*|times\s+)?(?:of|against)\s+(?:the\s+|its\s+|cuBLAS's\s+)?"
                         r"(?:cuBLAS|DSL|Triton|SGEMM|torch|peak|ceiling|roofline|m16n8k\d+|mma)"), None),
    # what a verb reports: "measured 0.41", "took 0.142", "went from 0.68 to 1.00"
    "reported": (re.compile(r"(?:measured|took|ran at|runs at|reached|went from|moved between)\s+(?:about\s+)?"
                            + RANGE + r"(?:(?:,\s*|,?\s+and\s+|\s+to\s+)" + RANGE + r")*", re.I), None),
    # a ratio written with x or "times", in a sentence about a measurement: "1.7x slower"
    "times": (re.compile(NUM + r"\s*(?:x|×|times)(?=\s+(?:faster|slower|longer|shorter|more|fewer|less|the|as|"
                         r"that|what|its)\b)"), MEASUREMENT),
    "percent": (re.compile(RANGE + r"\s*%(?!\s*\d)"), None),          # not Python's modulo, "5 % 2"
    # a register count, where the sentence says where it comes from (the compiler, a profile)
    "registers": (re.compile(RANGE + r"\s+registers"),
                  re.compile(r"SASS|ptxas|cuobjdump|compil|measur|record|spill|occupancy|profile", re.I)),
    # a stall reason and its value, a fraction: "short scoreboard 1.32", "long_scoreboard (0.51 -> 0.79)"
    "stall": (re.compile(r"`?" + STALL + r"`?\s*(?:of\s+|at\s+|is\s+|\(|:\s*)?" + POINT
                         + r"(?:\s*(?:->|→|to)\s*" + POINT + r")?"), None),
    # wavefronts or conflicts, where the sentence says a GPU counted them
    "counted": (re.compile(NUM + r"\s+(?:shared-memory\s+)?(?:wavefronts?|bank conflicts?|conflicts?)\b"),
                re.compile(r"\bGPU\b|H100|counter|Nsight|ncu|measured", re.I)),
    # any other number with two or more decimals, in a sentence about a measurement
    "decimal": (re.compile(DECIMAL), MEASUREMENT),
}
UNIT = re.compile(r"\s*(?:\*\*)?\s*(TFLOP/s|TFLOPS|GFLOP/s|TB/s|GB/s|MB/s|ms|µs|μs|us|ns|s|cycles|GHz|%|"
                  r"bytes|B|kB|KB|KiB|MB|MiB|GB|GiB)(?![\w/])")
UNITS = {"TFLOPS": "TFLOP/s", "µs": "us", "μs": "us"}
QUOTIENTS = {"times": ("{}/{}",), "percent": ("100*{}/{}", "100*({}/{}-1)", "100*(1-{}/{})")}


# ---- numbers ---------------------------------------------------------------------------------------------

def number(text, before=""):
    """(value, tolerance) of a number as written, `before` being the text in front of it: half a unit of its
    last digit; after a hedge ("about 200"), half a unit of its last non-zero digit."""
    digits = text.replace(",", "")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    zeros = 0 if decimals or not HEDGE.search(before) else len(digits) - len(digits.rstrip("0"))
    return float(digits), 0.5 * 10.0 ** (zeros - decimals) + 1e-9


def unit_after(text):
    """The unit that starts `text` ("ms", "TFLOP/s", "%", ...), or None."""
    m = UNIT.match(text)
    return m and UNITS.get(m.group(1), m.group(1))


def sizes_in(text):
    """The problem sizes (M, N, K) a text names: 2048^3 or 4000x3000x2500 (spaces around the x allowed)."""
    found = [(int(n),) * 3 for n in re.findall(r"(?<![\w.])(\d+)\^3", text)]
    return found + [tuple(map(int, m)) for m in
                    re.findall(r"(?<![\w.])(\d+)\s*[x×]\s*(\d+)\s*[x×]\s*(\d+)(?![\w.])", text)]


# ---- records ---------------------------------------------------------------------------------------------

class Records:
    """Every recorded number as (value, problem sizes, unit or None, file:line), found by value. A number's
    unit is what its record writes after it (a markdown record), or its column's or key's name (ms, tflops)."""

    def __init__(self, root=ROOT, files=RECORD_FILES, globs=RECORD_GLOBS):
        self.entries, self.files = [], []
        for path, size in files.items():
            if not os.path.exists(os.path.join(root, path)):
                raise FileNotFoundError(f"Records: {path} is listed in RECORD_FILES but does not exist")
            self._json(path, self._read(root, path), [size] if size else [])
        for pattern in globs:
            for full in sorted(glob.glob(os.path.join(root, pattern), recursive=True)):
                path = os.path.relpath(full, root)
                reader = {".md": self._markdown, ".csv": self._csv, ".json": self._json}[os.path.splitext(path)[1]]
                reader(path, self._read(root, path))
        self.entries.sort(key=lambda e: e[0])
        self.values = [e[0] for e in self.entries]
        self.sizes = {s for e in self.entries for s in e[1]}

    def _read(self, root, path):
        self.files.append(path)
        with open(os.path.join(root, path), encoding="utf-8") as f:
            return f.read()

    def _add(self, value, sizes, unit, where):
        self.entries.append((float(value), frozenset(sizes), unit, where))

    def _markdown(self, path, text):
        """Every number of every line, at the last size named before it on its line, else at the sizes its line
        or its section's heading names."""
        heading = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.startswith("#"):
                heading = sizes_in(line)
            for m in re.finditer(NUM, line):
                sizes = (sizes_in(line[:m.start()])[-1:] or sizes_in(line) or heading)
                self._add(m.group(0).replace(",", ""), sizes, unit_after(line[m.end():]), f"{path}:{n}")

    def _csv(self, path, text):
        """Every numeric cell, at the row's M, N, K; its unit the column's name (ms, tflops), or % where the
        row names a percentage."""
        rows = list(csv.reader(text.splitlines()))
        for n, row in enumerate(rows[1:], 2):
            cells = dict(zip(rows[0], row))
            sizes = [tuple(int(cells[k]) for k in "MNK")] if all(cells.get(k) for k in "MNK") else []
            for column, cell in cells.items():
                if re.fullmatch(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", cell):
                    unit = "%" if any("%" in c for c in row) else {"ms": "ms", "tflops": "TFLOP/s"}.get(column)
                    self._add(cell, sizes, unit, f"{path}:{n}")

    def _json(self, path, text, sizes=()):
        """Every number, at the problem size of the object that holds it (its M, N and K, or its "size": n for
        n^3, or [M, N, K]), or of the key it is under ("4096" for 4096^3 as from 256 up, "4096x14336x4096"),
        else at `sizes`; its unit the name of a key above it that is a unit ("ms")."""
        def walk(node, sizes, unit):
            if isinstance(node, dict):
                if all(k in node for k in "MNK"):
                    sizes = [tuple(node[k] for k in "MNK")]
                elif "size" in node:
                    size = node["size"]
                    sizes = [tuple(size) if isinstance(size, list) else (size,) * 3]
                for key, value in node.items():
                    named = ([tuple(map(int, key.split("x")))] if re.fullmatch(r"\d+(x\d+){2}", key) else
                             [(int(key),) * 3] if key.isdigit() and int(key) >= 256 else sizes)
                    walk(value, named, unit_after(key) if UNIT.fullmatch(key) else unit)
            elif isinstance(node, list):
                for value in node:
                    walk(value, sizes, unit)
            elif type(node) in (int, float):
                self._add(node, sizes, unit, path)
        walk(json.loads(text), list(sizes), None)

    def holder(self, value, tol, unit=None, sizes=(), files=()):
        """Where a record has `value` within `tol`, or None: at one of `sizes` and in one of `files` if given,
        in `unit` or in no stated unit (a percentage only as a percentage)."""
        lo, hi = bisect.bisect_left(self.values, value - tol), bisect.bisect_right(self.values, value + tol)
        for _, at, recorded_unit, where in sorted(self.entries[lo:hi], key=lambda e: e[2] != unit):
            if ((recorded_unit == unit or recorded_unit is None and unit != "%") and (not sizes or at & set(sizes))
                    and (not files or where.split(":")[0] in files)):
                return where
        return None


# ---- pages -----------------------------------------------------------------------------------------------

def pages(root=ROOT):
    """(page, cell index or None, markdown) of every markdown cell of the chapters and every book page."""
    for pattern in PAGE_GLOBS:
        for full in sorted(glob.glob(os.path.join(root, pattern))):
            page = os.path.relpath(full, root)
            with open(full, encoding="utf-8") as f:
                if page in NOT_PAGES:
                    continue
                if page.endswith(".ipynb"):
                    for i, cell in enumerate(json.load(f)["cells"]):
                        if cell["cell_type"] == "markdown":
                            yield page, i, "".join(cell["source"])
                else:
                    yield page, None, f.read()


def prose(markdown, keep=()):
    """Markdown as the reader reads its sentences: code blocks, inline code (but the names in `keep` and stall
    reasons), roles, link targets, directive options and HTML blanked; math as plain text, \\times as x."""
    def math(m):
        return re.sub(r"\\[A-Za-z]+|[{}]", " ", m.group(1).replace(r"\times", " x ").replace(r"\cdot", " * "))
    text = re.sub(r"```.*?```", " ", markdown, flags=re.S)
    text = re.sub(r"\{[\w-]+\}`[^`]*`", " ", text)
    text = re.sub(r"`([^`]*)`", lambda m: m.group(1) if m.group(1) in keep or re.fullmatch(STALL, m.group(1))
                  else " ", text)
    text = re.sub(r"\$\$(.*?)\$\$", math, text, flags=re.S)
    text = re.sub(r"\$([^$\n]*)\$", math, text)
    return re.sub(r"\]\([^)]*\)|^:[\w-]+:.*$|<[^>]+>", " ", text, flags=re.M)


def sentences(text):
    """(sentence, context) pieces of prose: each sentence of a paragraph or a list item, context None; each cell
    of a table's body, its context the header of its column and the first cell of its row."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        lines = [line for line in block.split("\n") if line.strip()]
        if lines and all(line.lstrip().startswith("|") for line in lines):
            rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines
                    if not re.fullmatch(r"\s*\|[\s:|-]+\|\s*", line)]
            out += [(cell, f"{head} {row[0]}") for row in rows[1:] for head, cell in zip(rows[0], row)]
            continue
        for item in re.split(r"\n\s*(?=[-*] |\d+\. )", block):
            out += [(" ".join(s.split()), None) for s in re.split(r"(?<=[.;!?])\s+(?=[A-Z(*])", item)]
    return out


# ---- arithmetic shown in a sentence ----------------------------------------------------------------------

TOKEN = re.compile(r"\s*(?:(" + NUM + r")|([-+*/x×()]))")
ARITHMETIC = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Add, ast.Sub, ast.Mult, ast.Div,
              ast.USub, ast.UAdd)


def evaluate(source):
    """The value of an expression of numbers, + - * / and parentheses, or None."""
    try:
        tree = ast.parse(source, mode="eval")
        if all(isinstance(n, ARITHMETIC) for n in ast.walk(tree)):
            return float(eval(compile(tree, "<arithmetic>", "eval"), {"__builtins__": {}}))
    except (SyntaxError, ZeroDivisionError):
        pass
    return None


def expressions(text):
    """[(value, start, end)] of the arithmetic written in `text` with at least one operator ("65536 / 384",
    "(64 + 256) / (64 x 256)"; x and × multiply)."""
    found = []
    for run in re.finditer(r"[\d(][\d\s.,()+\-*/x×]*[\d)]", text):
        tokens, i = [], run.start()
        while (m := TOKEN.match(text, i, run.end())):
            tokens.append((m.group(1) or m.group(2), m.start(1 if m.group(1) else 2), m.end()))
            i = m.end()
        for a in range(len(tokens)):
            for b in range(a + 2, len(tokens) + 1):
                words = [t[0] for t in tokens[a:b]]
                if set(words) & set("+-*/x×"):
                    value = evaluate(" ".join(words).replace("x", "*").replace("×", "*").replace(",", ""))
                    if value is not None:
                        found.append((value, tokens[a][1], tokens[b - 1][2]))
    return found


def shown(value, tol, span, sentence, kind):
    """How `sentence` shows the arithmetic of the figure `value` at `span`, or None: an expression joined to it
    by "=" or parentheses, or, for kinds of QUOTIENTS, a quotient of two numbers or expressions of the
    sentence."""
    apart = lambda a, b: b <= span[0] or a >= span[1]
    exprs = [(v, a, b) for v, a, b in expressions(sentence) if apart(a, b)]
    for v, a, b in exprs:
        between = sentence[b:span[0]] if b <= span[0] else sentence[span[1]:a]
        if abs(v - value) <= tol and re.fullmatch(r"[\s=()≈:]*", between) and re.search(r"[=(]", between):
            return "= " + " ".join(sentence[a:b].split())
    pool = [number(m.group(0))[0] for m in re.finditer(NUM, sentence) if apart(*m.span())]
    pool = [v for v in pool + [v for v, _, _ in exprs] if v > 0]
    for form in QUOTIENTS.get(kind, ()):
        for p in pool:
            for q in pool:
                if p != q and abs(evaluate(form.format(p, q)) - value) <= tol:
                    return "= " + form.format(p, q)
    return None


# ---- the scan --------------------------------------------------------------------------------------------

def figures(sentence, context=None):
    """[(kind, figure, span)] of the measured figures of a sentence, or of a table cell (`context` not None,
    where every number with a decimal point is a figure); of overlapping matches the first and longest."""
    found = [(kind, m.group(0), m.span()) for kind, (pattern, cue) in FIGURES.items()
             if cue is None or cue.search(f"{sentence} {context or ''}") for m in pattern.finditer(sentence)]
    if context is not None:
        found += [("table", m.group(0), m.span()) for m in re.finditer(POINT, sentence)]
    found.sort(key=lambda f: (f[2][0], -f[2][1]))
    kept = []
    for f in found:
        if not kept or f[2][0] >= kept[-1][2][1]:
            kept.append(f)
    return kept


def not_measured(sentence, span):
    """The source NOT_MEASURED gives for the figure at `span` of `sentence`, or None."""
    for pattern, source in NOT_MEASURED.items():
        if any(m.start() <= span[0] and span[1] <= m.end() for m in re.finditer(pattern, sentence)):
            return "not measured: " + source
    return None


def check(markdown, records):
    """[(kind, figure, sizes, verdict)] of every figure of a markdown text; the verdict says what holds the
    figure (file:line, the arithmetic, or why it is not a measurement), or is None where nothing does."""
    names = records.files + [f[:-3].replace("/", ".") for f in records.files if f.endswith(".py")]
    out = []
    for sentence, context in sentences(prose(markdown, keep=names)):
        sizes = [s for s in sizes_in(f"{sentence} {context or ''}") if s in records.sizes]
        cited = [f for f in records.files if f in sentence or f[:-3].replace("/", ".") in sentence]
        for kind, figure, span in figures(sentence, context):
            verdict = not_measured(sentence, span)
            if verdict is None:
                held = []
                for m in re.finditer(NUM, figure):
                    at = (span[0] + m.start(), span[0] + m.end())
                    value, tol = number(m.group(0), sentence[:at[0]])
                    # a ratio to a baseline is held only by a number recorded without a unit
                    unit = unit_after(sentence[at[1]:]) or ("ratio" if kind == "ratio" else None)
                    held.append((context is None and shown(value, tol, at, sentence, kind))
                                or records.holder(value, tol, unit, sizes, cited))
                verdict = None if None in held else "; ".join(held)
            out.append((kind, " ".join(figure.split()), sizes, verdict))
    return out


def scan(root=ROOT, records=None):
    """[(page, cell, kind, figure, sizes, verdict)] of every figure of the book's chapters and pages."""
    records = records or Records(root)
    return [(page, cell) + found for page, cell, markdown in pages(root) for found in check(markdown, records)]


def main():
    for page, cell, kind, figure, sizes, verdict in scan():
        at = page if cell is None else f"{page} cell {cell}"
        size = " at " + ", ".join("x".join(map(str, s)) for s in sizes) if sizes else ""
        print(f"{'held' if verdict else 'NOT HELD'}  {at}: {kind} {figure!r}{size}"
              + (f"  <- {verdict}" if verdict else ""))


if __name__ == "__main__":
    sys.exit(main())
