"""Record what the CuTe DSL prints for every snippet of examples.py into snippets.json, the text the boxes show
where the DSL is not installed. Run where it is: `python -m kernels.dsl.record`.
tests/test_dsl_boxes.py checks that the recordings still equal what the DSL prints."""

import json
import os

from . import examples, host
from .box import ABOUT, RECORDED, call, calls


def record():
    why = host.missing()
    if why:
        raise SystemExit(f"record: {why}")
    output = {call(name, *args): host.run(getattr(examples, name), *args) for name, args in calls()}
    path = os.path.join(os.path.dirname(__file__), RECORDED)
    data = {"about": ABOUT, "version": host.VERSION, "output": output}
    with open(path, "w") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"recorded {len(output)} snippets into {path}")


if __name__ == "__main__":
    record()
