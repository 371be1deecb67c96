"""The Python package `presk` (docs/python.md), installed with pip from Debian's packages alone:

    python3 -m venv --system-site-packages venv && venv/bin/pip install --no-build-isolation .

The extension is built by CMake, not by setuptools: `cmake --build` of the target presk_python
in PRESK_BUILD_DIR (default build/release, configured with the release preset when it is not),
so an installed package is the module the build folder holds, bit for bit, and a build that
scripts/build or scripts/test made is reused, not compiled again. Its files are then copied into
the wheel as they are (the package's Python files and presk/_presk.cpython-*.so).
"""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(ROOT, "build", "setuptools"), exist_ok=True)  # setup.cfg's scratch folders


class BuildWithCMake(build_py):
    """build_py: the package as CMake laid it out in <build>/python/presk."""

    def run(self):
        build = os.path.abspath(os.environ.get("PRESK_BUILD_DIR", os.path.join(ROOT, "build", "release")))
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            if "PRESK_BUILD_DIR" in os.environ:
                raise SystemExit("presk: PRESK_BUILD_DIR=%s is not a configured CMake build folder" % build)
            subprocess.check_call(["cmake", "--preset", "release"], cwd=ROOT)
        subprocess.check_call(["cmake", "--build", build, "--target", "presk_python",
                               "-j", os.environ.get("PRESK_JOBS", "2")])
        target = os.path.join(self.build_lib, "presk")
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(os.path.join(build, "python", "presk"), target,
                        ignore=shutil.ignore_patterns("__pycache__"))


class BinaryDistribution(Distribution):
    """A wheel for this interpreter and platform: the package holds a compiled extension."""

    def has_ext_modules(self):
        return True


setup(
    name="presk",
    version="0.1.0",
    description="An array language and toolchain in which precision is a resource",
    python_requires=">=3.11",
    packages=["presk"],
    package_dir={"presk": "src/python/presk"},
    cmdclass={"build_py": BuildWithCMake},
    distclass=BinaryDistribution,
    zip_safe=False,
)
