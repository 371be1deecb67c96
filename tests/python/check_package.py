#!/usr/bin/env python3
"""presk as an installed package: `pip install --no-build-isolation .` (Debian's setuptools, no
network: --no-index) into a scratch venv made with --system-site-packages, then `import presk`
there without PYTHONPATH, from a folder outside the tree, and an entry run on numpy arrays.
The extension is the build folder's (setup.py: PRESK_BUILD_DIR), not compiled again.

    check_package.py SOURCE_DIR BUILD_DIR
"""
import os
import subprocess
import sys
import tempfile

CHECK = r"""
import os, sys
import numpy as np
import presk
assert os.path.realpath(presk.__file__).startswith(os.path.realpath(sys.prefix)), presk.__file__
mlp = presk.Program(os.path.join(sys.argv[1], "examples", "mlp.psk"), consts={"In": 4, "W": 8, "K": 3},
                    dims={"B": 2}, seed=3)
logits = mlp.run("logits", np.ones((2, 4)), realize="f64")
assert logits.shape == (2, 3) and logits.dtype == np.float64, logits
print("installed", presk.__file__)
"""


def main():
    source, build = (os.path.abspath(a) for a in sys.argv[1:3])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PRESK_BUILD_DIR"] = build
    with tempfile.TemporaryDirectory(prefix="presk-venv-") as scratch:
        venv = os.path.join(scratch, "venv")
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
        python = os.path.join(venv, "bin", "python")
        pip = [python, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps", "-q", source]
        subprocess.run(pip, check=True, env=env, cwd=scratch)
        subprocess.run([python, "-c", CHECK, source], check=True, env=env, cwd=scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
