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


def integer_ops_cases():
    return cast_cases()
