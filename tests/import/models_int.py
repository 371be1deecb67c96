"""ONNX models of the import tests on integer types (models.py's conventions; group
`integer_ops`): Cast in every integer direction, and arithmetic on the narrow integer types with
ONNX's wrap-around. Each compared with ONNX Runtime exactly (tolerance 0), but where ONNX leaves
the answer undefined (a float beyond an integer type's range): there options["expected"] holds
presk's documented answer, derived here with numpy."""
import json

import numpy as np
from onnx import TensorProto, helper

from models import model, tensor_info

RNG = np.random.default_rng(41)
T = TensorProto


def cast(name, x, to, then=None):
    """Cast(x, to) (then Cast to `then`), its output typed as the last target."""
    nodes = [helper.make_node("Cast", ["x0"], ["c" if then else "y"], name="/Cast", to=to)]
    if then:
        nodes.append(helper.make_node("Cast", ["c"], ["y"], name="/Cast2", to=then))
    made = model(nodes, [tensor_info("x0", x)], [helper.make_tensor_value_info("y", then or to, None)])
    return (name, made, {"x0": x}, 0)


def truncated(x, low, high):
    """presk's float → integer Cast: toward zero, saturated at [low, high], NaN to 0."""
    return np.where(np.isnan(x), 0, np.clip(np.trunc(np.nan_to_num(x)), low, high))


def cast_cases():
    inside = np.array([[-2.5, -1.75, -0.5, -0.0], [0.0, 0.5, 1.5, 2.99], [100.9, -100.9, 127.0, -128.0]], np.float32)
    cases = [cast(f"Cast_float_to_{t}", inside, getattr(T, t)) for t in ["INT8", "INT32", "INT64"]]
    cases.append(cast("Cast_float_to_UINT8", np.abs(inside), T.UINT8))
    cases.append(cast("Cast_float_to_INT8_to_INT32", inside, T.INT8, T.INT32))
    cases.append(cast("Cast_float_to_BOOL", inside, T.BOOL))
    with_nan = inside.copy()
    with_nan[0, 0] = np.nan  # "all else to True" (ONNX Runtime is not fed NaN: its JSON has none)
    name, made, feeds, tolerance = cast("Cast_NaN_to_BOOL", with_nan, T.BOOL)
    cases.append((name, made, feeds, tolerance, {"expected": {"y": with_nan != 0}}))
    beyond = np.array([[300.5, -300.5, np.inf, -np.inf], [np.nan, 255.9, -0.9, 1e30]], np.float32)
    for t, low, high in [("UINT8", 0, 255), ("INT8", -128, 127)]:
        name, made, feeds, tolerance = cast(f"Cast_float_beyond_{t}", beyond, getattr(T, t))
        cases.append((name, made, feeds, tolerance, {"expected": {"y": truncated(beyond, low, high)}}))
    wide = np.array([[200, -200, 127, -129], [2**40 + 5, -(2**40) - 3, 2**63 - 1, -(2**63)]], np.int64)
    for t in ["INT8", "UINT8", "INT32"]:
        cases.append(cast(f"Cast_INT64_to_{t}", wide, getattr(T, t)))
    cases.append(cast("Cast_INT64_to_FLOAT16", np.array([2049, -2051, 65519, 3], np.int64), T.FLOAT16, T.FLOAT))
    return cases


def arithmetic_cases():
    """Mul, Div, Neg, Abs, Sign on the narrow types, with operands that wrap (and a divisor of
    each sign; INT8's −128 / −1 and |−128| wrap to −128)."""
    kinds = {"INT8": (np.int8, -128, 128), "UINT8": (np.uint8, 0, 256), "INT32": (np.int32, -2**31, 2**31)}
    cases = []
    for t, (dtype, low, high) in kinds.items():
        a = RNG.integers(low, high, (3, 4)).astype(dtype)
        b = RNG.integers(low, high, (4,)).astype(dtype)
        a[0, :2] = [low, low]
        b[:2] = [-1 if low < 0 else 1, 7]
        b[b == 0] = 3
        infos, feeds = [tensor_info("x0", a), tensor_info("x1", b)], {"x0": a, "x1": b}
        typed = [helper.make_tensor_value_info("y", getattr(T, t), None)]
        # ONNX Runtime has no INT8/UINT8 kernels of these: numpy's arithmetic in the type (C's,
        # which wraps, and whose division truncates) is the expectation there.
        with np.errstate(over="ignore"):
            wanted = {"Mul": a * b, "Div": (np.trunc(a.astype(np.float64) / b)).astype(np.int64).astype(dtype),
                      "Abs": np.abs(a), "Sign": np.sign(a), "Neg": -a}
        for op in ["Mul", "Div", "Abs", "Sign"] + (["Neg"] if low < 0 else []):
            names = ["x0", "x1"] if op in ("Mul", "Div") else ["x0"]
            made = model([helper.make_node(op, names, ["y"], name=f"/{op}")], infos[:len(names)], typed, [], 14)
            case = (f"{op}_{t}", made, {n: feeds[n] for n in names}, 0)
            # INT32's −2^31 / −1 traps in ONNX Runtime (SIGFPE): that Div is checked against numpy too.
            cases.append(case + (({"expected": {"y": wanted[op]}},) if dtype != np.int32 or op == "Div" else ()))
    return cases


def integer_ops_cases():
    return cast_cases() + arithmetic_cases()


# Group `integer_exact` (no ONNX Runtime: it traps on a zero divisor and on INT64's −2^63 / −1):
# INT64 Div, UINT32 Mul and Div, each compared as integers (not through a double) with Python's
# exact arithmetic in the type, natively and exactly; a zero divisor stops the run with a coded
# error in both executors; a constant zero divisor is refused at import.
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def truncated_quotient(a, b, bits, signed):
    """C's a / b in the type (toward zero), wrapped into it (−2^63 / −1 is −2^63)."""
    q = abs(a) // abs(b)
    q = -q if (a < 0) != (b < 0) else q
    q %= 2**bits
    return q - 2**bits if signed and q >= 2**(bits - 1) else q


def exact_cases():
    """(name, model, inputs as int64 arrays, expected flat Python ints)."""
    a = np.array([[I64_MIN, I64_MIN, I64_MIN, I64_MIN, I64_MAX, I64_MAX],
                  [-7, 7, -7, 7, 3074457345618258602, -(2**62) - 1]], np.int64)
    b = np.array([-1, 1, 2, I64_MIN, 3, I64_MAX], np.int64)
    rows = RNG.integers(I64_MIN, I64_MAX, (2, 6), dtype=np.int64, endpoint=True)
    a64 = np.concatenate([a, rows])
    b64 = np.stack([b] * 2 + [RNG.integers(-(2**40), 2**40, 6, dtype=np.int64) | 1] * 2)
    u = np.array([[2**32 - 1, 2**32 - 1, 65536, 123456789], [4000000000, 2**31, 1, 0]], np.int64)
    v = np.array([[2**32 - 1, 2, 65536, 987654321], [4000000000, 2, 2**32 - 1, 5]], np.int64)
    cases = [int64_division(a64, b64), wide_integers()]
    for op, t, x, y, bits, signed in [("Mul", T.UINT32, u, v, 32, False), ("Div", T.UINT32, u, np.maximum(v, 1), 32, False)]:
        infos = [helper.make_tensor_value_info(n, t, list(x.shape)) for n in ("x0", "x1")]
        made = model([helper.make_node(op, ["x0", "x1"], ["y"], name=f"/{op}")], infos,
                     [helper.make_tensor_value_info("y", t, None)], [], 14)
        pairs = zip(x.ravel().tolist(), y.ravel().tolist())
        if op == "Mul":
            expected = [(p * q) % 2**32 for p, q in pairs]
        else:
            expected = [truncated_quotient(p, q, bits, signed) for p, q in pairs]
        cases.append((f"{op}_{T.DataType.Name(t)}", made, {"x0": x, "x1": y}, expected))
    return cases


def wide_integers():
    """INT64 inputs read from the data file exactly, beyond 2^53 (2^53 + 1 is no double) and at
    2^63 − 1 (a double rounds it to 2^63, which wraps to −2^63): y = x0 + x1."""
    x = np.array([2**53 + 1, I64_MAX, -I64_MAX, I64_MIN, 2**53 + 3, -(2**53) - 1], np.int64)
    y = np.array([0, 0, 0, 0, 2, -2], np.int64)
    infos = [helper.make_tensor_value_info(n, T.INT64, [6]) for n in ("x0", "x1")]
    made = model([helper.make_node("Add", ["x0", "x1"], ["y"], name="/Add")], infos,
                 [helper.make_tensor_value_info("y", T.INT64, None)], [], 14)
    return ("Add_INT64_beyond_2_53", made, {"x0": x, "x1": y}, [int(p) + int(q) for p, q in zip(x, y)])


def int64_division(a, b):
    """Div of INT64 operands made in the graph as high · 2^32 + low from inputs below 2^32: the
    64-bit extremes, and the integer arithmetic that makes them (wide_integers reads them whole)."""
    def halves(x):
        return (x >> 32).astype(np.int64), (x & 0xFFFFFFFF).astype(np.int64)
    (ahi, alo), (bhi, blo) = halves(a), halves(b)
    feeds = {"ahi": ahi, "alo": alo, "bhi": bhi, "blo": blo, "w": np.full(a.shape, 2**32, np.int64)}
    infos = [helper.make_tensor_value_info(n, T.INT64, list(a.shape)) for n in feeds]
    node = lambda op, ins, out: helper.make_node(op, ins, [out], name=f"/{out}")
    nodes = [node("Mul", ["ahi", "w"], "ah"), node("Add", ["ah", "alo"], "a"), node("Mul", ["bhi", "w"], "bh"),
             node("Add", ["bh", "blo"], "b"), node("Div", ["a", "b"], "y")]
    made = model(nodes, infos, [helper.make_tensor_value_info("y", T.INT64, None)], [], 14)
    expected = [truncated_quotient(p, q, 64, True) for p, q in zip(a.ravel().tolist(), b.ravel().tolist())]
    return ("Div_INT64", made, feeds, expected)


def zero_divisor_model(t, constant=False):
    infos = [helper.make_tensor_value_info("x0", t, [2, 3])] + ([] if constant else [helper.make_tensor_value_info("x1", t, [3])])
    initializers = [helper.make_tensor("x1", t, [], [0])] if constant else []
    return model([helper.make_node("Div", ["x0", "x1"], ["y"], name="/Div")], infos,
                 [helper.make_tensor_value_info("y", t, None)], initializers, 14)


def check_exact(args, run, import_case, write_safetensors):
    """The cases of exact_cases() in both executors, and the zero divisors. Returns failures."""
    failures = []

    def values(report, mode):
        outputs = report["outputs"] if mode == "exact" else report["samples"][0]["outputs"]
        return [int(v) for v in outputs[0]["values"]]

    def presk_run(name, mode, expect_ok=True):
        command = [args.presk, "run", f"{args.work}/{name}.psk", "--entry", "y", "--weights",
                   f"{args.work}/{name}.safetensors", "--data", f"{args.work}/{name}.data.safetensors", "--json"]
        return run(command + (["--exact", "--bits", "64"] if mode == "exact" else ["--realize", "f64"]), expect_ok)

    for name, made, inputs, expected in exact_cases():
        import_case(args, args.work, name, made)
        write_safetensors(f"{args.work}/{name}.data.safetensors", inputs)
        for mode in ("exact", "native"):
            got = values(json.loads(presk_run(name, mode).stdout), mode)
            wrong = [(i, g, e) for i, (g, e) in enumerate(zip(got, expected)) if g != e]
            print(f"{name:<12} {mode:<6} {len(got)} values, {len(wrong)} wrong")
            if wrong or len(got) != len(expected):
                failures.append(f"{name} ({mode}): (index, got, expected) {wrong[:4]}, {len(got)} values")
    for t in (T.INT32, T.INT64, T.UINT8):
        name = f"Div_zero_{T.DataType.Name(t)}"
        import_case(args, args.work, name, zero_divisor_model(t))
        write_safetensors(f"{args.work}/{name}.data.safetensors",
                          {"x0": np.arange(6, dtype=np.int64).reshape(2, 3), "x1": np.array([3, 0, 1], np.int64)})
        for mode, code in (("exact", "E0550"), ("native", "E0670")):
            result = presk_run(name, mode, expect_ok=False)
            print(f"{name:<16} {mode:<6} exit {result.returncode}: {result.stderr.strip().splitlines()[:1]}")
            said = "a divisor was zero" in result.stderr and "integer overflow" not in result.stderr
            if result.returncode != 1 or f"error[{code}]" not in result.stderr or "divisor_is_zero" not in result.stderr or not said:
                failures.append(f"{name} ({mode}): expected {code} at the let …_divisor_is_zero, got exit "
                                f"{result.returncode}: {result.stderr}")
    with open(f"{args.work}/zero.onnx", "wb") as f:
        f.write(zero_divisor_model(T.INT32, constant=True).SerializeToString())
    result = run([args.presk, "import", f"{args.work}/zero.onnx", "--out", f"{args.work}/zero.psk", "--weights-out",
                  f"{args.work}/zero.safetensors"], expect_ok=False)
    print(f"constant zero divisor: exit {result.returncode}: {result.stderr.strip().splitlines()[-1:]}")
    if result.returncode != 1 or "error[E1359]" not in result.stderr:
        failures.append(f"a constant zero divisor: expected E1359, got exit {result.returncode}: {result.stderr}")
    return failures
