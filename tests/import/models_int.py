"""ONNX models of the import tests on integer types (models.py's conventions; group
`integer_ops`): Cast in every integer direction, and arithmetic on the narrow integer types with
ONNX's wrap-around. Each compared with ONNX Runtime exactly (tolerance 0), but where ONNX leaves
the answer undefined (a float beyond an integer type's range): there options["expected"] holds
presk's documented answer, derived here with numpy."""
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
