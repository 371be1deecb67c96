"""Real exports end to end (docs/import.md, "Real exports"): the checked-in torch exports of
tests/import/exports/ (made by scripts/export-models; this check needs no torch).

  /usr/bin/python3 check_exports.py --presk PRESK --ort ORT_DIR --work DIR --group exports|exports_solve

exports:         each model expected to import, against ONNX Runtime and the exact reference
                 (check_import.py's check, with the dims bound to the test input's extents).
exports_solve:   each of them calibrated (4 samples, 128 bits), solved at --budget 1e-3 (the
                 solve measures 4 held-out samples too), and the realization run beside the
                 exact reference on 4 further held-out samples: the gap must be inside the budget.
"""
import argparse
import json
import os
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_import  # noqa: E402
from check_import import run, write_safetensors  # noqa: E402

EXPORTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "exports")
VOCAB = 32
# name: (inputs of one sample: arg -> (kind, shape), tolerance in normwise f32 ulps against ORT)
EXPECTED = {
    "gpt2": ({"idx": ("tokens", (2, 5))}, 8),
    "bert": ({"input_ids": ("tokens", (2, 5)), "attention_mask": ("mask", (2, 5))}, 8),
    "llama": ({"x": ("normal", (2, 5, 16))}, 8),
    "gpt2_float_mask": ({"idx": ("tokens", (2, 5))}, 8),
    "gpt2_arange": ({"idx": ("tokens", (2, 5))}, 8),
    "gpt2_finfo_mask": ({"idx": ("tokens", (2, 5))}, 8),
    "cnn": ({"image": ("normal", (2, 3, 16, 16))}, 8),
    "mobilenet": ({"image": ("normal", (2, 3, 16, 16))}, 8),
    "mlp_float": ({"x": ("normal", (2, 16))}, 8),
    # torch's QAT export (QuantizeLinear → Clip → DequantizeLinear). Solved too: its codes are
    # steps (round has no derivative), so the solve keeps the sites before them in f64 (about 1.02×)
    # and measures the rest; measure_qdq compares it with its float original.
    "mlp_qdq": ({"x": ("normal", (2, 16))}, 8),
}
# `presk import --strip-qdq` of a QDQ export against ONNX Runtime running the float model it
# came from: name: (the float model, tolerance)
STRIPPED = {"mlp_qdq": ("mlp_float", 8)}
NOT_SOLVED = set()
# The solve must narrow these to at least this traffic ratio (all-f64 / the realization's): a
# finfo.min mask whose rounding were charged at its masked elements keeps every site f64 (1.0×).
NARROWED = {"gpt2": 1.5, "gpt2_finfo_mask": 1.5}
SAMPLES = 4  # calibrated on 0..3; the solve holds out 4..7; the realization is run on 8..11


def sample_inputs(spec, count, seed):
    """count samples of each argument, stacked on a leading axis (deterministic)."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for arg, (kind, shape) in spec.items():
        full = (count,) + shape
        if kind == "tokens":
            arrays[arg] = rng.integers(0, VOCAB, full).astype(np.int64)
        elif kind == "mask":  # a padding mask: each row 1 … 1 0 … 0, at least one 1
            lengths = rng.integers(1, shape[-1] + 1, full[:-1])
            arrays[arg] = (np.arange(shape[-1]) < lengths[..., None]).astype(np.int64)
        else:
            arrays[arg] = rng.standard_normal(full).astype(np.float32)
    return arrays


def load(name):
    return onnx.load(os.path.join(EXPORTS, f"{name}.onnx"))


def symbolic_dims_failures(args):
    """Each export imported without --dim keeps its dynamic axes symbolic: the program declares
    one `dim` per dim_param of the graph inputs (check_ort imported them)."""
    failures = []
    for name in EXPECTED:
        params = {d.dim_param for i in load(name).graph.input for d in i.type.tensor_type.shape.dim if d.dim_param}
        lines = [line for line in open(f"{args.work}/{name}.psk") if line.startswith("dim ")]
        declared = {d.strip() for line in lines for d in line.split("#")[0][4:].split(",") if d.strip()}
        print(f"{name:<15} dynamic axes {sorted(params)}: dims {sorted(declared)}")
        if not params or len(declared) != len(params):
            failures.append(f"{name}: the graph inputs' symbolic axes {sorted(params)}, the program's dims {sorted(declared)}")
    return failures


def check_ort(args, modules):
    cases = []
    for name, (spec, tolerance) in EXPECTED.items():
        inputs = {arg: array[0] for arg, array in sample_inputs(spec, 1, 1).items()}
        cases.append((name, load(name), inputs, tolerance))
    for name, (original, tolerance) in STRIPPED.items():
        inputs = {arg: array[0] for arg, array in sample_inputs(EXPECTED[name][0], 1, 1).items()}
        cases.append((f"{name}_stripped", load(name), inputs, tolerance,
                      {"import_args": ["--strip-qdq"], "ort_model": load(original)}))
    status = check_import.check_against_ort(args, cases, modules)
    failures = symbolic_dims_failures(args)
    for failure in failures:
        print("FAIL", failure, file=sys.stderr)
    return 1 if failures else status


def solve_one(args, name, spec):
    work = f"{args.work}/{name}"
    os.makedirs(work, exist_ok=True)
    made = load(name)
    check_import.import_case(args, work, name, made)
    program, weights, data = f"{work}/{name}.psk", f"{work}/{name}.safetensors", f"{work}/{name}.data.safetensors"
    write_safetensors(data, sample_inputs(spec, 3 * SAMPLES, 2))
    dims = check_import.dim_bindings(made, {arg: np.zeros(shape) for arg, (_, shape) in spec.items()})
    entry = made.graph.output[0].name
    envelope, realization = f"{work}/envelope.json", f"{work}/realization.json"
    # solve is not given the dims: it replays the envelope's (`dim batch, sequence`: both dims)
    common = [program, "--entry", entry, "--weights", weights, "--data", data] + dims
    run([args.presk, "calibrate", "--precision"] + common + ["--samples", str(SAMPLES), "--bits", "128",
                                                              "--out", envelope, "--quiet"])
    report = json.loads(run([args.presk, "solve", program, "--precision", envelope, "--budget", "1e-3",
                             "--out", realization, "--quiet", "--json"]).stdout)
    budget, ratio = report["budget"]["absolute"], report["traffic"]["ratio"]
    measured = json.loads(run([args.presk, "run"] + common + ["--realize", f"@{realization}", "--exact", "--offset",
                                                             str(2 * SAMPLES), "--samples", str(SAMPLES),
                                                             "--json"]).stdout)
    gap = max(o["gap_absolute"] for sample in measured["samples"] for o in sample["outputs"])
    types = json.load(open(realization))["default"]
    print(f"{name:<15} solved at 1e-3 (absolute {budget:.4e}): gap {gap:.4e} on {SAMPLES} held-out samples; "
          f"traffic {ratio:.2f}x less; estimate {report['estimate']:.3e}; default type {types}")
    failures = []
    if not 0 < gap <= budget:
        failures.append(f"{name}: the realization's held-out gap {gap} is not inside the budget {budget}")
    if ratio < NARROWED.get(name, 0):
        failures.append(f"{name}: the solve narrowed the traffic {ratio:.2f}x, less than {NARROWED[name]}x")
    return failures


def exact_outputs(args, program, weights, data, made):
    """The exact outputs of the held-out samples 8 … 11 of `data`."""
    dims = check_import.dim_bindings(made, {arg: np.zeros(shape) for arg, (_, shape) in EXPECTED["mlp_qdq"][0].items()})
    report = json.loads(run([args.presk, "run", program, "--entry", made.graph.output[0].name, "--weights", weights,
                             "--data", data, "--exact", "--bits", "200", "--offset", str(2 * SAMPLES), "--samples",
                             str(SAMPLES), "--json", "--digits", "20"] + dims).stdout)
    samples = report["samples"] if "samples" in report else [report]
    return np.array([[float(v) for v in o["values"]] for sample in samples for o in sample["outputs"]])


def measure_qdq(args):
    """The QDQ MLP measured against its float original, both exactly, on held-out samples: the
    stripped import (--strip-qdq) is the float model itself (the same outputs as mlp_float's
    import), and the QDQ model's outputs differ from them by the quantization's own error."""
    work = f"{args.work}/mlp_qdq_measured"
    os.makedirs(work, exist_ok=True)
    data = f"{work}/data.safetensors"
    write_safetensors(data, sample_inputs(EXPECTED["mlp_qdq"][0], 3 * SAMPLES, 2))
    outputs = {}
    for name, model, extra in [("qdq", "mlp_qdq", []), ("stripped", "mlp_qdq", ["--strip-qdq"]),
                               ("float", "mlp_float", [])]:
        check_import.import_case(args, work, name, load(model), extra)
        outputs[name] = exact_outputs(args, f"{work}/{name}.psk", f"{work}/{name}.safetensors", data, load(model))
    gap = np.max(np.abs(outputs["qdq"] - outputs["float"]))
    largest = np.max(np.abs(outputs["float"]))
    print(f"mlp_qdq against its float original (exact, {SAMPLES} held-out samples): largest gap {gap:.4g} "
          f"of the largest output {largest:.4g}; --strip-qdq gives the float model's outputs: "
          f"{np.array_equal(outputs['stripped'], outputs['float'])}")
    failures = []
    if not np.array_equal(outputs["stripped"], outputs["float"]):
        failures.append("mlp_qdq --strip-qdq: its exact outputs are not the float model's")
    if not 0 < gap < 0.5 * largest:
        failures.append(f"mlp_qdq: the quantization's gap {gap} is not in (0, half the largest output {largest})")
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--presk", required=True)
    parser.add_argument("--ort", required=True, help="the folder onnxruntime-node was installed into")
    parser.add_argument("--work", required=True)
    parser.add_argument("--markdown", help="also append the measured table to this file (scripts/import-table)")
    parser.add_argument("--group", required=True, choices=["exports", "exports_solve"])
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    if args.group == "exports":
        modules = os.path.join(args.ort, "node_modules")
        if not os.path.isdir(os.path.join(modules, "onnxruntime-node")):
            print(f"SKIPPED: onnxruntime-node is not installed in {args.ort}: run scripts/install-deps", file=sys.stderr)
            return 77
        return check_ort(args, modules)
    failures = measure_qdq(args)
    failures += [f for name, (spec, _) in EXPECTED.items() if name not in NOT_SOLVED for f in solve_one(args, name, spec)]
    for failure in failures:
        print("FAIL", failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
