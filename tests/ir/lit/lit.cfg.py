# lit configuration of the IR golden tests: `%presk` is the presk binary under test and
# `%examples` the examples/ folder; FileCheck, split-file and `not` come from LLVM 14.
# Run by CTest (tests/ir/tests.cmake) as
#   lit.py --param presk=BUILD/src/cli/presk --param exec_root=BUILD/tests/ir/lit tests/ir/lit
import os

import lit.formats

config.name = "presk-ir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = lit_config.params.get(
    "exec_root", os.path.join(config.test_source_root, "..", "..", "..", "build", "lit-ir"))

presk = lit_config.params.get("presk")
if not presk:
    lit_config.fatal("pass the presk binary with --param presk=PATH")
llvm_bin = lit_config.params.get("llvm_bin", "/usr/lib/llvm-14/bin")
repository = os.path.abspath(os.path.join(config.test_source_root, "..", "..", ".."))

config.substitutions.append(("%presk", presk))
config.substitutions.append(("%examples", os.path.join(repository, "examples")))
config.environment["PATH"] = os.pathsep.join([llvm_bin, os.environ.get("PATH", "")])
