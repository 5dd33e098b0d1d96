#!/usr/bin/env python3
"""The Python client's documented example as a user runs it: `pip install
./python` into a fresh virtual environment (Debian's numpy and protobuf seen
through --system-site-packages; offline: the build backend is the standard
library), then the first ```python block of docs/client-python.md's section
"## Walk a character", unchanged
but for the port (a real server started here on an ephemeral one), run by that
environment's interpreter outside the tree. Checks it ran with the installed
package and that the character walked forward (+z) as its comment says.
Run by tests/run.sh."""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import ROOT, Server, check, install_package  # noqa: E402

WALKED_M = 1.0  # along +z in the example's two seconds (about 2 m at the stick's 0.8)
SIDEWAYS_M = 0.3


def documented_example():
    text = open(os.path.join(ROOT, "docs", "client-python.md")).read()
    section = text[text.index("\n## Walk a character\n"):]
    section = section[:section.index("\n## ", 1)]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def main():
    example = documented_example()
    check(len(example.strip().splitlines()) == 5, "docs/client-python.md's example is five lines")
    check('"127.0.0.1", 7878' in example, "it connects to make run's server (127.0.0.1:7878)")
    work, venv, python = install_package("readme-")
    with Server() as server:
        script = example.replace('"127.0.0.1", 7878', f'"127.0.0.1", {server.port}')
        script += ("import json\nprint(json.dumps({'package': animserver.__file__, "
                   "'roots': [list(map(float, r)) for r in roots]}))\n")
        run = subprocess.run([python, "-c", script], cwd=work, capture_output=True, text=True, timeout=60)
        check(run.returncode == 0, "the example runs" + (f": {run.stderr[-800:]}" if run.returncode else ""))
    out = json.loads(run.stdout.strip().splitlines()[-1])
    check(out["package"].startswith(venv), f"with the installed package ({out['package']})")
    first, last = out["roots"][0], out["roots"][-1]
    dz, dx = last[2] - first[2], last[0] - first[0]
    check(len(out["roots"]) == 120 and dz > WALKED_M and abs(dx) < SIDEWAYS_M,
          f"the character walked forward: {dz:.2f} m along +z, {dx:.2f} m sideways in {len(out['roots'])} frames")
    shutil.rmtree(work)
    print("python readme: passed")


if __name__ == "__main__":
    main()
