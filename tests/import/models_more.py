"""More ONNX models of the import tests (models.py's conventions: (name, model, inputs, tolerance
[, options])): the functions presk writes as compositions (group `math`), integer and boolean
inputs and outputs (group `integers`), and graph inputs fixed at import with `--fix-input`
(group `fix_input`; options["fix_inputs"] maps an input to the value it is fixed to, which
ONNX Runtime is fed)."""
import numpy as np
from onnx import TensorProto, helper

from models import init, model, normal, out, single, tensor_info

RNG = np.random.default_rng(31)
I64 = TensorProto.INT64


def math_cases():
    x = normal(3, 4)
    inside = (RNG.random((3, 4)) * 1.8 - 0.9).astype(np.float32)  # atanh's domain
    above = (RNG.random((3, 4)) * 3 + 1.05).astype(np.float32)    # acosh's
    cases = [single(op, op, [data], opset=9, tolerance=8)
             for op, data in [("Tan", x), ("Sinh", x), ("Cosh", x), ("Asinh", x * 3), ("Acosh", above), ("Atanh", inside)]]
    unit = (RNG.random((3, 4)) * 2 - 1).astype(np.float32)  # asin's and acos's domain, with its ends
    unit[0, :3] = [1, -1, 0]
    wide = x * 3
    wide[0, :2] = [1e6, -1e-6]
    cases += [single(op, op, [data], opset=7, tolerance=8) for op, data in [("Atan", wide), ("Asin", unit), ("Acos", unit)]]
    cases.append(single("Shrink", "Shrink", [x], {"bias": 0.25, "lambd": 0.6}, opset=9, tolerance=2))
    dividend, divisor = normal(3, 4) * 5, normal(4) + np.float32(0.5)
    cases.append(single("Mod_fmod", "Mod", [dividend, divisor], {"fmod": 1}, tolerance=8))
    base = np.abs(normal(3, 4)) + np.float32(0.25)
    cases.append(single("Pow_constant_1_5", "Pow", [base], initializers=[init("e", np.float32(1.5))],
                        extra_inputs=["e"], tolerance=8))
    signed = normal(3, 4)
    signed[0, 0] = 0
    whole = RNG.integers(-3, 4, (3, 4)).astype(np.float32)
    whole[0, 1] = 0
    cases.append(single("Pow_runtime_integer_exponents", "Pow", [signed, whole], tolerance=8))
    cases.append(single("Pow_runtime_int64_exponent", "Pow", [signed, RNG.integers(0, 4, (4,)).astype(np.int64)],
                        tolerance=8))
    cases.append(single("Pow_runtime_fractional", "Pow", [base, normal(3, 4)], tolerance=16))
    image = normal(1, 2, 3, 4)
    for mode in ["constant", "edge", "reflect"]:
        pads = init("pads", np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64))
        cases.append(single(f"Pad_{mode}", "Pad", [image], {"mode": mode}, initializers=[pads], extra_inputs=["pads"],
                            tolerance=0))
    value = init("value", np.float32(-1.5))
    cases.append(single("Pad_constant_value", "Pad", [image], {"mode": "constant"}, tolerance=0,
                        initializers=[init("pads", np.array([0, 1, 0, 1, 0, 0, 1, 0], np.int64)), value],
                        extra_inputs=["pads", "value"]))
    cases.append(single("Pad_opset2_attributes", "Pad", [image], {"mode": "constant", "pads": [0, 0, 1, 1, 0, 0, 1, 1],
                                                                 "value": 2.5}, opset=2, tolerance=0))
    like = np.zeros((2, 2), np.float32)
    ints = RNG.integers(-5, 5, (3, 4)).astype(np.int64)
    cases.append(single("CastLike_int64_to_float", "CastLike", [ints, like], opset=15, tolerance=0))
    return cases + group_norm_cases()


def group_norm_cases():
    """GroupNormalization: opset 18's scale and bias per group, opset 21's per channel, a symbolic batch."""
    x = normal(2, 6, 3, 4)
    cases = []
    for name, opset, count in [("GroupNormalization_18", 18, 3), ("GroupNormalization_21", 21, 6)]:
        scale = init("scale", (normal(count) + np.float32(1)).astype(np.float32))
        bias = init("bias", normal(count))
        node = helper.make_node("GroupNormalization", ["x0", "scale", "bias"], ["y"], name="/GroupNormalization",
                                num_groups=3, epsilon=1e-3)
        made = model([node], [tensor_info("x0", x, {0: "batch"})], [out()], [scale, bias], opset)
        cases.append((name, made, {"x0": x}, 8))
    return cases


def int_out(name="y"):
    return helper.make_tensor_value_info(name, I64, None)


def integers_cases():
    """Integer inputs and outputs: each operator presk takes on integers (exact on every value)."""
    a = RNG.integers(-50, 50, (3, 4)).astype(np.int64)
    b = RNG.integers(-50, 50, (4,)).astype(np.int64)
    infos = [tensor_info("x0", a), tensor_info("x1", b)]
    feeds = {"x0": a, "x1": b}
    cases = []
    for op in ["Max", "Min"]:
        node = helper.make_node(op, ["x0", "x1"], ["y"], name=f"/{op}")
        cases.append((f"{op}_int64", model([node], infos, [int_out()]), dict(feeds), 0))
    node = helper.make_node("Clip", ["x0", "lo", "hi"], ["y"], name="/Clip")
    cases.append(("Clip_int64", model([node], infos[:1], [int_out()], [init("lo", np.int64(-10)), init("hi", np.int64(20))]),
                  {"x0": a}, 0))
    node = helper.make_node("Trilu", ["x0"], ["y"], name="/Trilu", upper=0)
    cases.append(("Trilu_int64_lower", model([node], infos[:1], [int_out()], [], 14), {"x0": a}, 0))
    node = helper.make_node("Pad", ["x0", "pads"], ["y"], name="/Pad", mode="reflect")
    cases.append(("Pad_reflect_int64", model([node], infos[:1], [int_out()], [init("pads", np.array([1, 2, 2, 1], np.int64))]),
                  {"x0": a}, 0))
    c = RNG.random((3, 4)) < 0.5
    nodes = [helper.make_node("Where", ["c", "x0", "x1"], ["y"], name="/Where")]
    cases.append(("Where_int64", model(nodes, [tensor_info("c", c)] + infos, [int_out()]), {"c": c} | feeds, 0))
    # A boolean output: Less of two float tensors, an entry returning B.
    x, y = normal(3, 4), normal(4)
    node = helper.make_node("Less", ["x0", "x1"], ["y"], name="/Less")
    cases.append(("Less_bool_output", model([node], [tensor_info("x0", x), tensor_info("x1", y)],
                                            [helper.make_tensor_value_info("y", TensorProto.BOOL, None)]),
                  {"x0": x, "x1": y}, 0))
    # A constant output: Shape of an input of static shape, an entry returning [3, 4].
    node = helper.make_node("Shape", ["x0"], ["y"], name="/Shape")
    cases.append(("Shape_constant_output", model([node], [tensor_info("x0", x)], [int_out()]), {"x0": x}, 0))
    node = helper.make_node("Size", ["x0"], ["y"], name="/Size")
    cases.append(("Size_constant_output", model([node], [tensor_info("x0", x)], [int_out()]), {"x0": x}, 0))
    node = helper.make_node("EyeLike", ["x0"], ["y"], name="/EyeLike", k=1)
    cases.append(("EyeLike_k1", model([node], [tensor_info("x0", x)], [out()], [], 9), {"x0": x}, 0))
    return cases


def fix_input_cases():
    """Operands presk needs at import given as graph inputs, fixed with --fix-input (a .pb for
    some, a .npy for others: options["format"])."""
    x = normal(2, 3, 4)
    cases = []
    shape = np.array([4, -1], np.int64)
    node = helper.make_node("Reshape", ["x0", "shape"], ["y"], name="/Reshape")
    cases.append(("Reshape_fixed_shape", model([node], [tensor_info("x0", x), tensor_info("shape", shape)], [out()]),
                  {"x0": x}, 0, {"fix_inputs": {"shape": shape}, "format": "pb"}))
    axes = np.array([1], np.int64)
    node = helper.make_node("ReduceMean", ["x0", "axes"], ["y"], name="/ReduceMean", keepdims=0)
    cases.append(("ReduceMean18_fixed_axes", model([node], [tensor_info("x0", x), tensor_info("axes", axes)], [out()], [], 18),
                  {"x0": x}, 2, {"fix_inputs": {"axes": axes}, "format": "npy"}))
    image = normal(1, 2, 3, 4)
    scales = np.array([1, 1, 2, 1.5], np.float32)
    node = helper.make_node("Resize", ["x0", "", "scales"], ["y"], name="/Resize", mode="nearest")
    cases.append(("Resize_fixed_scales", model([node], [tensor_info("x0", image), tensor_info("scales", scales)], [out()]),
                  {"x0": image}, 0, {"fix_inputs": {"scales": scales}, "format": "npy"}))
    exponent = np.array(3, np.int64)
    node = helper.make_node("Pow", ["x0", "e"], ["y"], name="/Pow")
    cases.append(("Pow_fixed_exponent", model([node], [tensor_info("x0", x), tensor_info("e", exponent)], [out()], [], 15),
                  {"x0": x}, 4, {"fix_inputs": {"e": exponent}, "format": "pb"}))
    return cases
