"""Record what the CuTe DSL prints for every snippet of examples.py into recorded.py, the text the boxes show
where the DSL is not installed. Run where it is: `python -m kernels.dsl.record`.
tests/test_dsl_boxes.py checks that the recordings still equal what the DSL prints."""

import os
import pprint

from . import examples, host
from .box import call, calls

HEADER = '''"""What nvidia-cutlass-dsl {version} printed for each snippet of examples.py (written by
`python -m kernels.dsl.record`; tests/test_dsl_boxes.py checks it against the DSL where the DSL is installed).
The boxes of the chapters show these texts, labelled as recorded, where the DSL cannot run."""

VERSION = {version!r}

OUTPUT = {output}
'''


def record():
    why = host.missing()
    if why:
        raise SystemExit(f"record: {why}")
    output = {call(name, *args): host.run(getattr(examples, name), *args) for name, args in calls()}
    path = os.path.join(os.path.dirname(__file__), "recorded.py")
    with open(path, "w") as f:
        f.write(HEADER.format(version=host.VERSION, output=pprint.pformat(output, width=110, sort_dicts=False)))
    print(f"recorded {len(output)} snippets into {path}")


if __name__ == "__main__":
    record()
