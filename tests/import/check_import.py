"""The ONNX import against ONNX Runtime and the exact reference (docs/import.md, "The check").

  /usr/bin/python3 check_import.py --presk PRESK --ort ORT_DIR --work DIR --group GROUP

For each model of the group (models.py): `presk import`, then the entry run natively in f32
and exactly (`presk run --exact`, 200 bits), and the same inputs through ONNX Runtime's CPU
provider (ort_run.js). Asserts, per output, that the three agree within the case's tolerance
in normwise f32 ulps (the gap over 2^-24 times the output's largest magnitude), and that a
second import writes the same bytes. Exit 77 (skipped) when onnxruntime-node is not installed.
"""
import argparse
import json
import os
import struct
import subprocess
import sys

import numpy as np
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
import models_index  # noqa: E402
import models_hostile  # noqa: E402
import models_int  # noqa: E402
import models_external  # noqa: E402
import models_more  # noqa: E402

GROUPS = {
    "elementwise": models.elementwise_cases,
    "contraction": models.contraction_cases,
    "layout": models.layout_cases,
    "models": lambda: [models.mlp_case(), models.mlp_case(True), models.transformer_case(), models.transformer_case(True)],
    "shapes": models.shape_cases,
    "conv": models.conv_cases,
    "activation": models.activation_cases,
    "reduce": lambda: models.reduce_cases() + models_index.einsum_cases(),
    "cnn": lambda: [models.cnn_case(), models.depthwise_case()],
    "quant": models.quant_cases,
    "select": models.select_cases,
    "math": models_more.math_cases,
    "integers": models_more.integers_cases,
    "integer_ops": models_int.integer_ops_cases,
    "fix_input": models_more.fix_input_cases,
    "indexing": models_index.indexing_cases,
    "qlinear": models_index.qlinear_cases,
    "external": models_external.external_cases,
}
SOLVE_GROUPS = {"solve": lambda: [models.transformer_case()],
                "solve_cnn": lambda: [models.cnn_case(), models.depthwise_case()]}
ULP = 2.0 ** -24


def write_safetensors(path, arrays):
    dtypes = {np.float32: "F32", np.int64: "I64", np.bool_: "BOOL", np.uint8: "U8", np.int8: "I8", np.int32: "I32"}
    header, blobs, offset = {}, [], 0
    for name, array in arrays.items():
        data = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": dtypes[array.dtype.type], "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def run(command, expect_ok=True):
    result = subprocess.run(command, capture_output=True, text=True)
    if expect_ok and result.returncode != 0:
        raise AssertionError(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr}")
    return result


def dim_bindings(made, inputs):
    """`--dim NAME=N` for each symbolic axis of the graph inputs, N the extent of the test input."""
    bound = {}
    for info in made.graph.input:
        for axis, dimension in enumerate(info.type.tensor_type.shape.dim):
            if dimension.dim_param and info.name in inputs:
                bound[dimension.dim_param] = inputs[info.name].shape[axis]
    return [arg for dim, extent in sorted(bound.items()) for arg in ("--dim", f"{dim}={extent}")]


def presk_values(args, work, name, entry, mode, dims):
    command = [args.presk, "run", f"{work}/{name}.psk", "--entry", entry, "--weights", f"{work}/{name}.safetensors",
               "--data", f"{work}/{name}.data.safetensors", "--json", "--digits", "20"] + dims
    command += ["--exact", "--bits", "200"] if mode == "exact" else ["--realize", "f32"]
    report = json.loads(run(command).stdout)
    output = (report["outputs"] if mode == "exact" else report["samples"][0]["outputs"])[0]
    return np.array([float(v) for v in output["values"]]), output["shape"]


def import_case(args, work, name, made, import_args=(), external=False):
    """`made` imported twice (the same bytes both times); `external`: saved with every initializer
    in the external data file NAME.weights beside it, as onnx.save(save_as_external_data) writes."""
    model_path = f"{work}/{name}.onnx"
    if external:
        import onnx
        saved = onnx.ModelProto()
        saved.CopyFrom(made)
        onnx.save_model(saved, model_path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=f"{name}.weights", size_threshold=0)
    else:
        with open(model_path, "wb") as f:
            f.write(made.SerializeToString())
    files = []
    for attempt in range(2):
        psk, weights = f"{work}/{name}.{attempt}.psk", f"{work}/{name}.{attempt}.safetensors"
        run([args.presk, "import", model_path, "--out", psk, "--weights-out", weights] + list(import_args))
        files.append((open(psk, "rb").read(), open(weights, "rb").read()))
    assert files[0] == files[1], f"{name}: two imports wrote different bytes"
    os.replace(f"{work}/{name}.0.psk", f"{work}/{name}.psk")
    os.replace(f"{work}/{name}.0.safetensors", f"{work}/{name}.safetensors")
    return model_path


def write_tensor_file(work, stem, value, kind):
    """`value` as a serialized TensorProto (.pb) or a .npy file, for --fix-input."""
    path = f"{work}/{stem}.{kind}"
    if kind == "npy":
        np.save(path, value)
    else:
        with open(path, "wb") as f:
            f.write(numpy_helper.from_array(value).SerializeToString())
    return path


def ort_inputs(inputs):
    kinds = {np.float32: "float32", np.int64: "int64", np.bool_: "bool", np.uint8: "uint8", np.int8: "int8",
             np.int32: "int32"}
    def data(v):  # INT64 as decimal strings (ort_run.js makes BigInts of them): exact beyond 2^53
        return [str(x) for x in v.ravel().tolist()] if v.dtype == np.int64 else v.astype(np.float64).ravel().tolist()
    return {k: {"type": kinds[v.dtype.type], "dims": list(v.shape), "data": data(v)} for k, v in inputs.items()}


def error_cases():
    """(name, model bytes, extra arguments, expected code): each refused with its code, exit 1."""
    x = models.normal(2, 3)
    det = models.single("det", "Det", [models.normal(2, 3, 3)])[1]
    ceil = models.single("ceil", "MaxPool", [models.normal(1, 1, 6, 6)], {"kernel_shape": [2, 2], "strides": [2, 2],
                                                                          "dilations": [2, 2], "ceil_mode": 1})[1]
    mask = models.model([models.helper.make_node("Dropout", ["x0", "ratio", "training"], ["y"], name="dropout")],
                        [models.tensor_info("x0", x)], [models.out()],
                        [models.init("ratio", np.float32(0.5)), models.init("training", np.bool_(True))])
    mixed = models.model([models.helper.make_node("Less", ["x0", "x1"], ["c"], name="less"),
                          models.helper.make_node("Where", ["c", "x0", "x0"], ["y"], name="where")],
                         [models.tensor_info("x0", x), models.tensor_info("x1", np.zeros((2, 3), np.int64))],
                         [models.out()])
    diagonal = models.single("einsum", "Einsum", [models.normal(2, 3, 3, 3)], {"equation": "...iii->...i"}, opset=12)[1]
    good = models.single("relu", "Relu", [x])[1].SerializeToString()
    runtime_shape = models.model([models.helper.make_node("Reshape", ["x0", "s"], ["y"], name="reshape")],
                                 [models.tensor_info("x0", x), models.tensor_info("s", np.array([6], np.int64))],
                                 [models.out()])
    h, tinfo = models.helper, models.tensor_info
    node = lambda op, ins, out, **kw: h.make_node(op, ins, [out], name=f"/{out}/{op}", **kw)
    ints = lambda name, values: models.init(name, np.array(values, np.int64))
    image = models.normal(1, 1, 4, 4)
    many = models.model([node("Det", ["x0"], "c1"), node("Relu", ["c1"], "r"), node("Det", ["r"], "c2"),
                         node("LpNormalization", ["c2"], "y")],
                        [tinfo("x0", image)], [models.out()])
    seq = models.normal(3, 4)
    dyn = [models.dynamic_info("x0", seq, ["T"])]
    minus_one = models.model([node("Shape", ["x0"], "s"), node("Gather", ["s", "zero"], "t"),
                              node("Sub", ["t", "one"], "t_1"), node("Unsqueeze", ["t_1", "axes"], "t_1v"),
                              node("Concat", ["t_1v", "minus"], "shape", axis=0), node("Reshape", ["x0", "shape"], "y")],
                             dyn, [models.out()], [ints("zero", 0), ints("one", 1), ints("axes", [0]), ints("minus", [-1])])
    def positions(start, limit, step):  # Range(start, limit, step) over the symbolic T, added to x0
        return models.model([node("Shape", ["x0"], "s"), node("Gather", ["s", "zero"], "t"),
                             node("Range", [start, limit, step], "r"), node("Cast", ["r"], "rf", to=models.F),
                             node("Unsqueeze", ["rf", "axes"], "rc"), node("Add", ["x0", "rc"], "y")],
                            dyn, [models.out()], [ints("zero", 0), ints("one", 1), ints("two", 2), ints("axes", [1])])
    as_data = models.model([node("Shape", ["x0"], "s"), node("Cast", ["s"], "sf", to=models.F),
                            node("Mul", ["x0", "sf"], "y")],
                           [models.dynamic_info("x0", models.normal(3, 2), ["B"])], [models.out()])
    u8 = lambda name, value: models.init(name, np.array([value], np.uint8))
    wraps = models.model([node("Add", ["a", "b"], "s"), node("Cast", ["s"], "sf", to=models.F), node("Mul", ["x0", "sf"], "y")],
                         [tinfo("x0", models.normal(1))], [models.out()], [u8("a", 200), u8("b", 100)])
    held = models.model([node("Cast", ["x0"], "c", to=models.TensorProto.INT8), node("Add", ["c", "c"], "y")],
                        [tinfo("x0", x)], [models.helper.make_tensor_value_info("y", models.TensorProto.INT8, None)])
    def on_codes(op, **attrs):  # QuantizeLinear's UINT8 codes read by `op` (ONNX: wraps around in UINT8)
        operands = ["q", "q"] if op == "Add" else ["q"]
        return models.model([node("QuantizeLinear", ["x0", "s", "z"], "q"), node(op, operands, "y", **attrs)],
                            [tinfo("x0", x)], [models.helper.make_tensor_value_info("y", models.TensorProto.INT8, None)],
                            [models.init("s", np.float32(0.01)), models.init("z", np.uint8(128))]).SerializeToString()
    return [
        ("quantized_codes_added", on_codes("Add"), [], "E1356"),
        ("quantized_codes_cast_narrower", on_codes("Cast", to=models.TensorProto.INT8), [], "E1356"),
        ("integers_held_as_reals", held.SerializeToString(), [], "E1356"),
        ("unsupported_operators", many.SerializeToString(), [], "E1302"),
        ("extent_not_product", minus_one.SerializeToString(), [], "E1313"),
        ("range_symbolic_step", positions("zero", "t", "t").SerializeToString(), [], "E1314"),
        ("range_extent_not_product", positions("zero", "t", "two").SerializeToString(), [], "E1313"),
        ("shape_as_data", as_data.SerializeToString(), [], "E1315"),
        ("unsupported_operator", det.SerializeToString(), [], "E1302"),
        ("pool_ceil_dilated", ceil.SerializeToString(), [], "E1323"),
        ("dropout_training", mask.SerializeToString(), [], "E1324"),
        ("compare_mixed_types", mixed.SerializeToString(), [], "E1325"),
        ("einsum_label_three_times", diagonal.SerializeToString(), [], "E1326"),
        ("quantize_int32", models.single("q32", "QuantizeLinear", [x], extra_inputs=["s", "z"],
                                         initializers=[models.init("s", np.float32(0.1)),
                                                       models.init("z", np.int32(0))])[1].SerializeToString(), [], "E1336"),
        ("truncated", good[: len(good) // 2], [], "E1301"),
        ("not_protobuf", b"\xff\xff\xff\xff not a model", [], "E1301"),
        ("attribute_value", models.single("gelu", "Gelu", [x], {"approximate": "fast"}, domain="com.microsoft")[1]
         .SerializeToString(), [], "E1303"),
        ("pow_integer_base", models.single("pow", "Pow", [np.ones((2, 3), np.int64)],
                                           initializers=[models.init("e", np.float32(1.5))],
                                           extra_inputs=["e"])[1].SerializeToString(), [], "E1304"),
        ("fix_input_not_an_input", runtime_shape.SerializeToString(), ["--fix-input", "t={work}/shape6.pb"], "E1339"),
        ("fix_input_wrong_type", runtime_shape.SerializeToString(), ["--fix-input", "s={work}/float6.npy"], "E1338"),
        ("fix_input_wrong_shape", runtime_shape.SerializeToString(), ["--fix-input", "s={work}/shape23.pb"], "E1338"),
        ("fix_input_not_a_tensor", runtime_shape.SerializeToString(), ["--fix-input", "s={work}/not_a_tensor.npy"], "E1337"),
        ("fix_input_twice", runtime_shape.SerializeToString(),
         ["--fix-input", "s={work}/shape6.pb", "--fix-input", "s={work}/shape6.pb"], "E1339"),
        ("uint8_wraps", wraps.SerializeToString(), [], "E1340"),
        ("runtime_shape", runtime_shape.SerializeToString(), [], "E1305"),
        ("opset_22", models.single("relu22", "Relu", [x], opset=22)[1].SerializeToString(), [], "E1306"),
        ("opset_7_unknown_op", models.single("foo7", "Foo", [x], opset=7)[1].SerializeToString(), [], "E1333"),
        ("opset_18_runtime_axes", models.single("mean18", "ReduceMean", [x, np.array([1], np.int64)],
                                                opset=18)[1].SerializeToString(), [], "E1334"),
        ("unbound_dim_name", models.mlp_case()[1].SerializeToString(), ["--dim", "sequence=4"], "E1310"),
        ("missing_file", None, [], "E1300"),
    ]


# What the message of an error case must say, beyond its code.
MESSAGES = {
    "unsupported_operators": ['2 operators of the model are not supported', 'Det (2 nodes, the first "/c1/Det")',
                              'LpNormalization (1 node: "/y/LpNormalization")'],
    "extent_not_product": ["T - 1"],
    "range_symbolic_step": ["Range with the symbolic start or step T"],
    "range_extent_not_product": ["ceil((T) / 2)"],
    "uint8_wraps": ["300 is outside the range of UINT8"],
    "integers_held_as_reals": ["holds INT8 integers as reals", "Add of it is not supported"],
    "quantized_codes_added": ["holds UINT8 integers as reals", "codes of a quantizing operator"],
    "quantized_codes_cast_narrower": ["Cast from UINT8 to INT8 wraps around"],
    "fix_input_wrong_shape": ["INT64 [2]"],
}


def check_errors(args):
    failures = []
    for file, value in [("shape6.pb", np.array([6], np.int64)), ("shape23.pb", np.array([2, 3], np.int64)),
                        ("float6.npy", np.array([6.0], np.float32))]:
        write_tensor_file(args.work, file.rsplit(".", 1)[0], value, file.rsplit(".", 1)[1])
    with open(f"{args.work}/not_a_tensor.npy", "wb") as f:
        f.write(b"\x93NUMPY\x01\x00\x10\x00{'descr': '>f4'}")
    for name, data, extra, code in error_cases():
        extra = [a.replace("{work}", args.work) for a in extra]
        path = f"{args.work}/{name}.onnx"
        if data is not None:
            with open(path, "wb") as f:
                f.write(data)
        elif os.path.exists(path):
            os.remove(path)
        result = run([args.presk, "import", path, "--out", f"{args.work}/{name}.psk",
                      "--weights-out", f"{args.work}/{name}.safetensors"] + extra, expect_ok=False)
        refused = result.returncode == 1 and f"error[{code}]" in result.stderr
        written = os.path.exists(f"{args.work}/{name}.psk")
        print(f"{name:<24} {code}  {'refused' if refused else 'NOT REFUSED'}: {result.stderr.strip().splitlines()[-1:]}")
        if not refused or written:
            failures.append(f"{name}: expected {code} and no output, got exit {result.returncode}: {result.stderr}")
        for fragment in MESSAGES.get(name, []):
            if fragment not in result.stderr:
                failures.append(f"{name}: the message does not say {fragment!r}: {result.stderr}")
    for failure in failures:
        print("FAIL", failure, file=sys.stderr)
    return 1 if failures else 0


def check_hostile(args):
    """models_hostile.py: hostile models refused with their codes; external data read in place."""
    def exact_outputs(folder, name, inputs):
        write_safetensors(f"{folder}/{name}.data.safetensors", inputs)
        return list(presk_values(args, folder, name, "y", "exact", [])[0])
    failures = models_hostile.check(args, run, exact_outputs)
    for failure in failures:
        print("FAIL", failure, file=sys.stderr)
    return 1 if failures else 0


def check_solve(args):
    """Each model of the group (the pre-norm block; the CNNs) imported, calibrated and solved at
    1e-3; the realization run beside the exact reference on the envelope's samples: its measured
    gap is inside the budget. check and explain run on the imported program unchanged."""
    failed = 0
    for name, made, _, _ in SOLVE_GROUPS[args.group]():
        work = f"{args.work}/{name}"
        os.makedirs(work, exist_ok=True)
        failed |= solve_case(args, work, name, made)
    return failed


def solve_case(args, work, name, made):
    import_case(args, work, name, made)
    program, weights = f"{work}/{name}.psk", f"{work}/{name}.safetensors"
    envelope, realization = f"{work}/envelope.json", f"{work}/realization.json"
    run([args.presk, "calibrate", "--precision", program, "--entry", "y", "--weights", weights, "--samples", "4",
         "--bits", "128", "--out", envelope, "--quiet"])
    report = json.loads(run([args.presk, "solve", program, "--precision", envelope, "--budget", "1e-3",
                             "--out", realization, "--quiet", "--json"]).stdout)
    budget = report["budget"]["absolute"]
    measured = json.loads(run([args.presk, "run", program, "--entry", "y", "--weights", weights, "--realize",
                               f"@{realization}", "--exact", "--samples", "4", "--json"]).stdout)
    gap = max(o["gap_absolute"] for sample in measured["samples"] for o in sample["outputs"])
    run([args.presk, "check", "--precision", envelope, program, "--realize", f"@{realization}"])
    run([args.presk, "explain", realization])
    types = json.load(open(realization))["default"]
    print(f"{name}: solved at 1e-3 (absolute {budget:.4e}): measured gap {gap:.4e} on 4 samples; default type {types}")
    if not 0 < gap <= budget:
        print(f"FAIL the realization's gap {gap} is not inside the budget {budget}", file=sys.stderr)
        return 1
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--presk", required=True)
    parser.add_argument("--ort", required=True, help="the folder onnxruntime-node was installed into")
    parser.add_argument("--work", required=True)
    parser.add_argument("--markdown", help="also append the measured table to this file (scripts/import-table)")
    parser.add_argument("--group", required=True, choices=sorted(GROUPS) + ["errors", "hostile", "integer_exact"] + sorted(SOLVE_GROUPS))
    args = parser.parse_args()
    if args.group in ("errors", "hostile", "integer_exact") or args.group in SOLVE_GROUPS:
        os.makedirs(args.work, exist_ok=True)
        if args.group == "hostile":
            return check_hostile(args)
        if args.group == "integer_exact":
            failures = models_int.check_exact(args, run, import_case, write_safetensors)
            for failure in failures:
                print("FAIL", failure, file=sys.stderr)
            return 1 if failures else 0
        return check_errors(args) if args.group == "errors" else check_solve(args)
    modules = os.path.join(args.ort, "node_modules")
    if not os.path.isdir(os.path.join(modules, "onnxruntime-node")):
        print(f"onnxruntime-node is not installed in {args.ort}: run scripts/install-deps", file=sys.stderr)
        return 77
    os.makedirs(args.work, exist_ok=True)
    return check_against_ort(args, GROUPS[args.group](), modules)


def check_against_ort(args, cases, modules):
    """Each case imported, run in f32 and exactly, and run by ONNX Runtime on the same inputs;
    exit status 1 when a gap exceeds the case's tolerance (check_exports.py runs it too)."""
    manifest, ours, expected = [], {}, {}
    for name, made, inputs, tolerance, *rest in cases:
        # a fifth element: {"import_args": [...], "ort_model": the model ONNX Runtime runs instead,
        # "external": saved with external data, "weight_dtypes": the types the weights file must hold}
        options = rest[0] if rest else {}
        import_args = list(options.get("import_args", ()))
        fixed = options.get("fix_inputs", {})  # --fix-input NAME=FILE; ONNX Runtime is fed the value
        expected[name] = options.get("expected", {})  # {output: values} checked instead of ONNX Runtime's
        for input_name, value in fixed.items():
            file = write_tensor_file(args.work, f"{name}.{input_name}", value, options["format"])
            import_args += ["--fix-input", f"{input_name}={file}"]
        model_path = import_case(args, args.work, name, made, import_args, options.get("external", False))
        if "weight_dtypes" in options:  # {parameter: (dtype, bytes a value)} of the weights file
            dtype_failures = models_external.check_weight_dtypes(f"{args.work}/{name}.safetensors", options["weight_dtypes"])
            for failure in dtype_failures:
                print("FAIL", failure, file=sys.stderr)
            if dtype_failures:
                return 1
        write_safetensors(f"{args.work}/{name}.data.safetensors", inputs)
        if "ort_model" in options:
            model_path = f"{args.work}/{name}.ort.onnx"
            with open(model_path, "wb") as f:
                f.write(options["ort_model"].SerializeToString())
        if not expected[name]:
            manifest.append({"name": name, "model": model_path, "inputs": ort_inputs(inputs | fixed)})
        for output in made.graph.output:
            entry = output.name
            dims = dim_bindings(made, inputs)
            ours[(name, entry)] = (presk_values(args, args.work, name, entry, "f32", dims),
                                   presk_values(args, args.work, name, entry, "exact", dims), tolerance)
    env = dict(os.environ, NODE_PATH=modules)
    results_path = f"{args.work}/ort_results.json"
    with open(f"{args.work}/manifest.json", "w") as f:
        json.dump(manifest, f)
    subprocess.run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_run.js"),
                    f"{args.work}/manifest.json", results_path], check=True, env=env)
    ort = json.load(open(results_path))
    failures, rows = [], []
    print(f"{'case':<36} {'output':<6} {'f32-ort':>8} {'exact-ort':>9} {'f32-exact':>9} {'tol':>4}  (normwise f32 ulps)")
    for (name, entry), ((native, shape), (exact, _), tolerance) in ours.items():
        if expected[name]:  # a meaning ONNX leaves undefined: presk's, derived here, instead of ONNX Runtime's
            wanted = np.asarray(expected[name][entry], dtype=np.float64)
            ort.setdefault(name, {})[entry] = {"dims": list(wanted.shape), "data": wanted.ravel().tolist()}
        reference = np.array(ort[name][entry]["data"], dtype=np.float64)
        if list(ort[name][entry]["dims"]) != list(shape) or reference.size != native.size:
            failures.append(f"{name}/{entry}: shape {shape} vs ONNX Runtime's {ort[name][entry]['dims']}")
            continue
        scale = max(np.max(np.abs(reference)), 1e-30) * ULP
        gaps = [np.max(np.abs(native - reference)) / scale, np.max(np.abs(exact - reference)) / scale,
                np.max(np.abs(native - exact)) / scale]
        print(f"{name:<36} {entry:<6} {gaps[0]:8.2f} {gaps[1]:9.2f} {gaps[2]:9.2f} {tolerance:4}")
        rows.append(f"| {name} | {entry} | {gaps[0]:.2f} | {gaps[1]:.2f} | {gaps[2]:.2f} | {tolerance} |")
        if max(gaps) > tolerance:
            failures.append(f"{name}/{entry}: gaps {gaps} exceed {tolerance} ulps")
    if args.markdown:
        with open(args.markdown, "a") as f:
            f.write(f"\n## {args.group}\n\n| case | output | f32 − ORT | exact − ORT | f32 − exact | tolerance |\n"
                    "|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n")
    for failure in failures:
        print("FAIL", failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
