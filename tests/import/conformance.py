"""ONNX's own backend tests through `presk import` and `presk run` (docs/import.md, "Conformance").

  /usr/bin/python3 conformance.py --presk PRESK [--work DIR] [--jobs 2] [--update] [--only NAME]

Each case of Debian's libonnx-testdata (data/node, data/pytorch-operator, data/pytorch-converted:
a folder with model.onnx and test_data_set_*/input_*.pb, output_*.pb) is imported, each output
run natively (f32, or f64 when one of the case's tensors is f64) and exactly (`--exact`, 200
bits), and compared with the expected outputs at the backend tests' tolerance (rtol 1e-3,
atol 1e-7). Each case is classified:

  pass     both runs agree with every expected output
  refused  `presk import` refused it with a coded error (for E1302, the operator)
  wrong    a run differs beyond the tolerance, or has another shape
  crash    a signal, an internal error, an exit code other than 0/1, a run refused after the
           import accepted, or a case past its time limit

The test fails when a case of conformance_expected.txt no longer passes, or when any case is
wrong or crashes. A newly passing case prints a note; `--update` rewrites the expected list and
conformance_reasons.txt (every other case with its reason) from this run.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "/usr/share/libonnx-testdata/data"
SUITES = ["node", "pytorch-operator", "pytorch-converted"]
EXPECTED = os.path.join(HERE, "conformance_expected.txt")
REASONS = os.path.join(HERE, "conformance_reasons.txt")
RTOL, ATOL = 1e-3, 1e-7
CONTROL_FLOW = {"If", "Loop", "Scan"}
ALIGN_CORNERS = ("difference: ONNX's reference maps align_corners coordinates with the unrounded output length "
                 "(input × scale); presk maps them with the output's length, as ONNX Runtime does (group select)")
# Cases whose expected outputs disagree with ONNX's own definition, each with the reason.
DIFFERENCES = {
    "test_cast_FLOAT_to_BFLOAT16": "difference: ONNX 1.12's test data truncates to bfloat16; Cast rounds to nearest "
                                   "even, as ONNX Runtime does (tests/import group quant, Cast_to_BFLOAT16)",
    "test_resize_downsample_scales_linear_align_corners": ALIGN_CORNERS,
    "test_resize_downsample_scales_cubic_align_corners": ALIGN_CORNERS,
}


class Outcome:
    """status; reason, the same for cases refused alike (the table); detail, this case's own."""
    def __init__(self, status, reason, detail=None):
        self.status, self.reason, self.detail = status, reason, detail or reason


def safetensors_bytes(arrays):
    dtypes = {np.dtype(np.float64): "F64", np.dtype(np.float32): "F32", np.dtype(np.int64): "I64",
              np.dtype(np.int32): "I32", np.dtype(np.int16): "I16", np.dtype(np.int8): "I8",
              np.dtype(np.uint16): "U16", np.dtype(np.uint32): "U32", np.dtype(np.uint64): "U64", np.dtype(np.uint8): "U8", np.dtype(np.bool_): "BOOL"}
    header, blobs, offset = {}, [], 0
    for name, array in arrays.items():
        if array.dtype == np.float16:
            array = array.astype(np.float32)  # exact: every binary16 is a binary32
        if array.dtype in (np.int16, np.uint16, np.uint32):
            array = array.astype(np.int64)  # exact; presk reads these integer inputs (Z) from I64
        data = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": dtypes[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def type_problem(model):
    """The reason a case is outside presk's types (sequence, map, optional, string …), or None."""
    graph = model.graph
    ops = {node.op_type for node in graph.node}
    if ops & CONTROL_FLOW:
        return "control flow (" + ", ".join(sorted(ops & CONTROL_FLOW)) + ")"
    for info in list(graph.input) + list(graph.output):
        kind = info.type.WhichOneof("value")
        if kind != "tensor_type":
            return f"{kind.replace('_type', '')} type"
        elem = info.type.tensor_type.elem_type
        if elem in (onnx.TensorProto.STRING, onnx.TensorProto.COMPLEX64, onnx.TensorProto.COMPLEX128):
            return onnx.TensorProto.DataType.Name(elem).lower() + " type"
    return None


def refusal(stderr, model):
    """The reason of a coded refusal: the code, and for E1302 the operator."""
    match = re.search(r"error\[(E\d{4})\]", stderr)
    code = match.group(1) if match else "E????"
    problem = type_problem(model)
    if problem:
        return f"{code} {problem}"
    if code == "E1302":
        op = re.search(r"not supported: (\S+) \(", stderr)
        return f"E1302 operator {op.group(1) if op else '?'}"
    return f"{code} {error_detail(stderr)}"


def error_detail(stderr):
    """The error line without what differs case to case (names, node, numbers)."""
    line = next((l for l in stderr.splitlines() if "error[" in l), stderr.strip()[:100])
    detail = re.sub(r"^.*?error\[E\d{4}\]:?\s*", "", line)
    detail = re.sub(r"^(node \"[^\"]*\" \(\w+\)|the graph|initializer|[^:]*/model\.onnx\S*): ", "", detail)
    detail = re.sub(r"`[^`]*`|\"[^\"]*\"", "…", detail)
    return re.sub(r"-?\d+", "N", detail)[:90]


def broke(result):
    """A crash: a signal, an internal error, or an exit code that is neither 0 nor 1."""
    return result.returncode not in (0, 1) or "internal error" in result.stderr


def run(command, deadline):
    return subprocess.run(command, capture_output=True, text=True, timeout=deadline)


def entries(program):
    """The entries (one per graph output, in order) and the arguments they take (one per graph
    input, in order, after the parameters `p`), from the import's program."""
    found = re.findall(r"^entry\s+([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*->", program, re.M)
    arguments = re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*:", found[0][1]) if found else []
    return [name for name, _ in found], [a for a in arguments if a and a != "p"]


def load_sets(case_dir, model):
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in initializers]
    outputs = [o.name for o in model.graph.output]
    elem = {i.name: i.type.tensor_type.elem_type for i in list(model.graph.input) + list(model.graph.output)}
    declared = {"input": [elem[n] for n in inputs], "output": [elem[n] for n in outputs]}
    sets = []
    for folder in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*"))):
        def read(kind, count):
            arrays = []
            for k in range(count):
                tensor = onnx.TensorProto()
                with open(os.path.join(folder, f"{kind}_{k}.pb"), "rb") as f:
                    tensor.ParseFromString(f.read())
                array = numpy_helper.to_array(tensor)
                if onnx.TensorProto.BFLOAT16 in (tensor.data_type, declared[kind][k]):  # stored as the bits
                    array = (array.astype(np.uint32) << 16).view(np.float32)
                arrays.append(array)
            return arrays
        sets.append((dict(zip(inputs, read("input", len(inputs)))), read("output", len(outputs))))
    return sets


def values_of(report, exact):
    outputs = report["outputs"] if exact else report["samples"][0]["outputs"]
    output = outputs[0]
    return np.array([np.nan if v is None else float(v) for v in output["values"]], dtype=np.float64), list(output["shape"])


def compare(got, shape, expected):
    if list(expected.shape) != shape and not (expected.size == 1 and got.size == 1):
        return f"shape {shape}, expected {list(expected.shape)}"
    want = expected.astype(np.float64).ravel()
    if np.issubdtype(expected.dtype, np.integer) or expected.dtype == np.bool_:
        bad = got != want
    else:
        with np.errstate(invalid="ignore"):
            bad = ~((np.abs(got - want) <= ATOL + RTOL * np.abs(want)) | (np.isnan(got) & np.isnan(want))
                    | (got == want))
    if bad.any():
        k = int(np.argmax(bad))
        return f"{int(bad.sum())} of {want.size} elements differ (first at {k}: {got[k]!r}, expected {want[k]!r})"
    return None


def check_case(args, suite, name):
    case_dir = os.path.join(args.data, suite, name)
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    work = tempfile.mkdtemp(prefix=f"{name}.", dir=args.work)
    try:
        return check_in(args, case_dir, model, work)
    except subprocess.TimeoutExpired as e:
        return Outcome("crash", f"past the {args.timeout} s limit: {' '.join(e.cmd[1:3])}")
    except Exception as e:  # noqa: BLE001 -- a case the harness cannot read fails with its reason
        return Outcome("crash", f"harness: {type(e).__name__}: {e}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


# The refusals that name an operand presk needs at import: the graph input behind it is then
# fixed to the test's value (`presk import --fix-input NAME=FILE`), and the import tried again.
NEEDED_AT_IMPORT = re.compile(r"error\[(E1305|E1314)\].*?`([^`]*)`")


def import_case(args, case_dir, model, work, folder):
    """Imports the case; where presk refuses an operand it needs at import and that operand is a
    graph input, fixes that input to the value in `folder` and tries again. Returns the last
    result and the fixed inputs."""
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in initializers]
    psk, weights = os.path.join(work, "m.psk"), os.path.join(work, "m.safetensors")
    fixed = {}
    while True:
        command = [args.presk, "import", os.path.join(case_dir, "model.onnx"), "--out", psk, "--weights-out", weights]
        for name, file in fixed.items():
            command += ["--fix-input", f"{name}={file}"]
        result = run(command, args.timeout)
        needed = NEEDED_AT_IMPORT.search(result.stderr) if result.returncode == 1 else None
        if not needed or needed.group(2) not in inputs or needed.group(2) in fixed:
            return result, fixed
        fixed[needed.group(2)] = os.path.join(folder, f"input_{inputs.index(needed.group(2))}.pb")


def check_in(args, case_dir, model, work):
    if os.path.basename(case_dir) in DIFFERENCES:
        return Outcome("refused", DIFFERENCES[os.path.basename(case_dir)])
    folders = sorted(glob.glob(os.path.join(case_dir, "test_data_set_*")))
    if not folders:
        return Outcome("refused", "no test data")
    sets, fixed_names = None, set()
    for k, folder in enumerate(folders):
        result, fixed = import_case(args, case_dir, model, work, folder)
        if broke(result):
            return Outcome("crash", f"import exit {result.returncode}: {result.stderr.strip()[-300:]}")
        if result.returncode != 0:
            line = next((l for l in result.stderr.splitlines() if "error[" in l), "")
            line = line.replace(os.path.join(case_dir, "model.onnx"), "model.onnx")
            return Outcome("refused", refusal(result.stderr, model), re.sub(r"^error\[E\d{4}\]:\s*", "", line)[:240])
        sets = sets or load_sets(case_dir, model)  # after the import: it refuses the types numpy cannot read
        fixed_names |= set(fixed)
        todo = [sets[k]] if fixed else sets  # without fixed inputs one import serves every set
        for inputs, outputs in todo:
            problem = run_set(args, model, work, k, {n: a for n, a in inputs.items() if n not in fixed}, outputs)
            if problem:
                return problem
        if not fixed:
            break
    return Outcome("pass", "", "--fix-input " + ", ".join(sorted(fixed_names)) if fixed_names else "")


def run_set(args, model, work, k, inputs, outputs):
    """Runs one test data set through the imported program: None, or the outcome that is not a pass."""
    psk, weights = os.path.join(work, "m.psk"), os.path.join(work, "m.safetensors")
    names, arguments = entries(open(psk).read())
    if len(names) != len(model.graph.output):
        return Outcome("crash", f"{len(names)} entries for {len(model.graph.output)} outputs")
    f64 = any(i.type.tensor_type.elem_type == onnx.TensorProto.DOUBLE
              for i in list(model.graph.input) + list(model.graph.output))
    shapes = {i.name: [d.dim_value if d.HasField("dim_value") else None for d in i.type.tensor_type.shape.dim]
              for i in model.graph.input}
    for name, array in inputs.items():
        if any(want is not None and want != got for want, got in zip(shapes[name], array.shape)) or \
                len(shapes[name]) != array.ndim:
            return Outcome("refused", "difference: the test data's input shape is not the model's declared one")
    data = os.path.join(work, f"data{k}.safetensors")
    with open(data, "wb") as f:
        f.write(safetensors_bytes(dict(zip(arguments, inputs.values()))))
    for entry, expected in zip(names, outputs):
        for mode in ("f64" if f64 else "f32", "exact"):
            command = [args.presk, "run", psk, "--entry", entry, "--weights", weights, "--data", data,
                       "--json", "--digits", "20"]
            command += ["--exact", "--bits", "200"] if mode == "exact" else ["--realize", mode]
            result = run(command, args.timeout)
            if broke(result):
                return Outcome("crash", f"run ({mode}) exit {result.returncode}: {result.stderr.strip()[-300:]}")
            if result.returncode != 0:  # a coded refusal of these inputs (e.g. a negative index)
                code = re.search(r"error\[(E\d{4})\]", result.stderr)
                return Outcome("refused", f"run {code.group(1) if code else 'E????'} "
                                          f"{error_detail(result.stderr)}")
            got, shape = values_of(json.loads(result.stdout), mode == "exact")
            problem = compare(got, shape, expected)
            if problem:
                return Outcome("wrong", f"{entry} ({mode}): {problem}")
    return None


def read_list(path):
    if not os.path.exists(path):
        return set()
    return {line.split()[0] for line in open(path) if line.strip() and not line.startswith("#")}


def write_lists(results):
    header = ("# Generated by `tests/import/conformance.py --presk build/release/src/cli/presk --update`\n"
              "# (docs/import.md, \"Conformance\"); edit by rerunning it, not by hand.\n")
    passing = sorted(key for key, outcome in results.items() if outcome.status == "pass")
    with open(EXPECTED, "w") as f:
        f.write(header + "# The cases expected to pass (with the graph inputs fixed at import, where presk needs them).\n")
        for key in passing:
            detail = results[key].detail
            f.write(key + (f"  # {detail}" if detail else "") + "\n")
    with open(REASONS, "w") as f:
        f.write(header + "# Every other case and why it does not pass.\n")
        for key in sorted(results):
            outcome = results[key]
            if outcome.status == "pass":
                continue
            detail = "" if outcome.detail == outcome.reason or outcome.reason.startswith("E1302") else \
                f" ({outcome.detail})"
            f.write(f"{key}  {outcome.status}: {outcome.reason}{detail}\n")


def reason_table(results):
    """Counts by reason (the E1302 operators counted together), for docs/import.md."""
    counts = {}
    for outcome in results.values():
        if outcome.status == "pass":
            continue
        reason = outcome.reason
        if reason.startswith("E1302 operator"):
            reason = "E1302 operator out of scope"
        counts[f"{outcome.status}: {reason}"] = counts.get(f"{outcome.status}: {reason}", 0) + 1
    return sorted(counts.items(), key=lambda item: -item[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presk", required=True)
    parser.add_argument("--data", default=DATA, help="libonnx-testdata's data folder")
    parser.add_argument("--suite", action="append", choices=SUITES, help="default: all three")
    parser.add_argument("--work", help="scratch folder (default: a temporary one, removed)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=60, help="seconds per command of a case")
    parser.add_argument("--only", help="a regular expression on suite/case")
    parser.add_argument("--update", action="store_true", help="rewrite the expected and reasons lists")
    parser.add_argument("--table", action="store_true", help="print the counts by reason (docs/import.md)")
    args = parser.parse_args()
    suites = args.suite or SUITES
    if not os.path.isdir(os.path.join(args.data, "node")):
        print(f"SKIPPED: {args.data} is missing: install Debian's libonnx-testdata (scripts/install-deps)",
              file=sys.stderr)
        return 77
    cases = [(suite, name) for suite in suites for name in sorted(os.listdir(os.path.join(args.data, suite)))
             if not args.only or re.search(args.only, f"{suite}/{name}")]
    keep = args.work is not None
    args.work = args.work or tempfile.mkdtemp(prefix="presk-conformance.")
    os.makedirs(args.work, exist_ok=True)
    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = {(s, n): pool.submit(check_case, args, s, n) for s, n in cases}
            results = {f"{s}/{n}": future.result() for (s, n), future in futures.items()}
    finally:
        if not keep:
            shutil.rmtree(args.work, ignore_errors=True)
    return report(args, suites, results)


def report(args, suites, results):
    expected = read_list(EXPECTED)
    failures, notes = [], []
    for key, outcome in sorted(results.items()):
        if outcome.status in ("wrong", "crash"):
            failures.append(f"{key} {outcome.status}: {outcome.reason}")
        elif key in expected and outcome.status != "pass":
            failures.append(f"{key} is expected to pass and is now {outcome.status}: {outcome.reason}")
        elif outcome.status == "pass" and key not in expected and not args.update:
            notes.append(key)
    for suite in suites:
        mine = [o for k, o in results.items() if k.startswith(suite + "/")]
        counts = {s: sum(o.status == s for o in mine) for s in ("pass", "refused", "wrong", "crash")}
        print(f"{suite}: {counts['pass']} of {len(mine)} pass ({counts['refused']} refused, "
              f"{counts['wrong']} wrong, {counts['crash']} crash)")
    if args.table:
        for reason, count in reason_table(results):
            print(f"| {reason} | {count} |")
    for key in notes:
        print(f"NOTE {key} now passes: add it with `conformance.py --presk PRESK --update`")
    if args.update and (args.only or len(suites) != len(SUITES)):
        print("--update writes the lists from a run of every case: leave out --only and --suite", file=sys.stderr)
        return 2
    if args.update:
        write_lists(results)
        print(f"wrote {EXPECTED} and {REASONS}")
    for failure in failures:
        print("FAIL", failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
