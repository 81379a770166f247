"""The compiled-C++ fixtures' format (tests/fixtures/*_cpp.txt, made by the gen_*.sh scripts): blocks, each
headed by a line "== <key>", holding what C++ printed for that key."""
import os

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def blocks(name):
    """{key: the block's text, newlines kept} of tests/fixtures/<name>, in the file's order."""
    out, key = {}, None
    with open(os.path.join(FIXTURES, name)) as f:
        for line in f:
            if line.startswith("== "):
                key = line[3:].rstrip("\n")
                out[key] = ""
            else:
                out[key] += line
    return out
