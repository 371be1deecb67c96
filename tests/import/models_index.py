"""ONNX models of the import tests (models.py's conventions: (name, model, inputs, tolerance)) for
the operators presk writes as comparisons with positions (group `indexing`: TopK, OneHot,
GatherND, ScatterND, ScatterElements, ReduceProd, Dropout's mask) and the integer-code operators
(group `qlinear`: DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv),
each against ONNX Runtime."""
import numpy as np
from onnx import TensorProto, helper

from models import init, model, normal, out, single, tensor_info

RNG = np.random.default_rng(47)
I64 = TensorProto.INT64


def outputs(*specs):
    return [helper.make_tensor_value_info(name, kind, None) for name, kind in specs]


def node_case(name, op, inputs, outs, attrs=None, opset=13, initializers=(), tolerance=0):
    """One node over the graph inputs `inputs` (name → array) and initializers, its outputs `outs`
    ((name, type) pairs)."""
    names = list(inputs) + [t.name for t in initializers]
    node = helper.make_node(op, names, [n for n, _ in outs], name=f"the_{op.lower()}", **(attrs or {}))
    infos = [tensor_info(k, v) for k, v in inputs.items()]
    return (name, model([node], infos, outputs(*outs), initializers, opset), dict(inputs), tolerance)


def indexing_cases():
    x = normal(3, 5)
    x[1, 3] = x[1, 0]  # a tie: the lower index first
    k = init("k", np.array([3], np.int64))
    cases = [node_case(f"TopK_{label}", "TopK", {"x": x}, [("values", TensorProto.FLOAT), ("indices", I64)],
                       attrs, opset=11, initializers=[k])
             for label, attrs in [("largest", {"axis": 1}), ("smallest_axis0", {"axis": 0, "largest": 0})]]
    index = np.array([[1, -1, 9], [0, 4, -10]], np.int64)
    values = init("values", np.array([-0.5, 2.0], np.float32))
    cases.append(node_case("OneHot_int64", "OneHot", {"i": index}, [("y", TensorProto.FLOAT)], {"axis": 1}, opset=11,
                           initializers=[init("depth", np.array(10, np.int64)), values]))
    data = normal(3, 4, 5)
    gather = np.array([[[0, 1], [2, -1]], [[1, 3], [0, 0]]], np.int64)
    cases.append(node_case("GatherND", "GatherND", {"data": data, "i": gather}, [("y", TensorProto.FLOAT)]))
    batched = np.array([[1], [3], [0]], np.int64)
    cases.append(node_case("GatherND_batch_dims", "GatherND", {"data": data, "i": batched}, [("y", TensorProto.FLOAT)],
                           {"batch_dims": 1}))
    cases.append(node_case("GatherND_int64_data", "GatherND", {"data": RNG.integers(-9, 9, (4, 3)).astype(np.int64),
                                                             "i": np.array([[3, 2], [0, -1]], np.int64)}, [("y", I64)]))
    where = np.array([[2], [0]], np.int64)
    updates = normal(2, 4, 5)
    for reduction in ["none", "add", "mul"]:
        cases.append(node_case(f"ScatterND_{reduction}", "ScatterND", {"data": data, "i": where, "u": updates},
                               [("y", TensorProto.FLOAT)], {"reduction": reduction}, opset=16, tolerance=2))
    # one block (data [1, 4, 5]) written twice: both updates reach it (added, multiplied; the last one wins)
    for reduction in ["none", "add", "mul"]:
        cases.append(node_case(f"ScatterND_one_block_{reduction}", "ScatterND",
                               {"data": normal(1, 4, 5), "i": np.array([[0], [-1]], np.int64), "u": normal(2, 4, 5)},
                               [("y", TensorProto.FLOAT)], {"reduction": reduction}, opset=16, tolerance=2))
    rows = np.array([[0, 4], [-1, 2], [3, 3]], np.int64)  # a repeated index: summed (add), multiplied (mul)
    for reduction in ["add", "mul"]:
        cases.append(node_case(f"ScatterElements_{reduction}", "ScatterElements", {"data": x, "i": rows, "u": normal(3, 2)},
                               [("y", TensorProto.FLOAT)], {"axis": 1, "reduction": reduction}, opset=16, tolerance=2))
    distinct = np.array([[0, 4], [-1, 2], [3, 1]], np.int64)
    cases.append(node_case("ScatterElements_none", "ScatterElements", {"data": x, "i": distinct, "u": normal(3, 2)},
                           [("y", TensorProto.FLOAT)], {"axis": 1}, opset=16))
    cases.append(single("ReduceProd_axis1", "ReduceProd", [normal(3, 7, 2)], {"axes": [1], "keepdims": 0}, tolerance=8))
    cases.append(single("ReduceProd_all", "ReduceProd", [normal(2, 3)], {"keepdims": 1}, tolerance=8))
    cases.append(node_case("Dropout_mask", "Dropout", {"x": normal(2, 3)}, [("y", TensorProto.FLOAT), ("mask", TensorProto.BOOL)],
                           {"seed": 0}))
    image = normal(1, 2, 5, 5)
    for op in ["MaxPool", "AveragePool"]:
        cases.append(single(f"{op}_ceil_mode", op, [image], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
                            opset=12, tolerance=4))
    cases.append(single("AveragePool_ceil_include_pad", "AveragePool", [image],
                        {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 0, 0], "ceil_mode": 1,
                         "count_include_pad": 1}, opset=12, tolerance=4))
    for label, equation, shape in [("sum", "ij->i", (3, 4)), ("sum_first", "ijk->jk", (3, 4, 2)), ("transpose", "ij->ji", (3, 4))]:
        cases.append(single(f"Einsum_{label}", "Einsum", [normal(*shape)], {"equation": equation}, opset=12, tolerance=2))
    cases.append(single("MeanVarianceNormalization", "MeanVarianceNormalization", [normal(2, 3, 4, 2)], tolerance=8))
    cases.append(single("LRN", "LRN", [normal(1, 5, 3, 3)], {"size": 3, "alpha": 0.3, "beta": 0.6, "bias": 1.5}, tolerance=8))
    return cases


def codes(*shape):
    return RNG.integers(0, 256, shape).astype(np.uint8)


def qlinear_cases():
    cases = [node_case("DynamicQuantizeLinear", "DynamicQuantizeLinear", {"x": normal(3, 4)},
                       [("y", TensorProto.UINT8), ("y_scale", TensorProto.FLOAT), ("y_zero_point", TensorProto.UINT8)],
                       opset=11, tolerance=1)]  # the scale: the exact quotient against ONNX Runtime's f32 one
    a, b = codes(3, 4), codes(4, 2)
    cases.append(node_case("MatMulInteger", "MatMulInteger", {"a": a, "b": b}, [("y", TensorProto.INT32)], opset=10,
                           initializers=[init("az", np.uint8(12)), init("bz", np.array([3, 200], np.uint8))]))
    x, w = codes(1, 2, 5, 5), codes(3, 2, 3, 3)
    cases.append(node_case("ConvInteger", "ConvInteger", {"x": x, "w": w}, [("y", TensorProto.INT32)], {"pads": [1, 1, 1, 1]},
                           opset=10, initializers=[init("xz", np.uint8(100)), init("wz", np.uint8(128))]))
    scales = [init("as", np.float32(0.02)), init("az", np.uint8(120)), init("b", codes(4, 3)), init("bs", np.float32(0.015)),
              init("bz", np.uint8(130)), init("ys", np.float32(0.05)), init("yz", np.uint8(128))]
    inputs = {"a": codes(2, 4)}
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"], name="qmm")
    cases.append(("QLinearMatMul", model([node], [tensor_info("a", inputs["a"])], outputs(("y", TensorProto.UINT8)), scales, 10),
                  inputs, 0))
    conv = [init("xs", np.float32(0.03)), init("xz", np.uint8(110)), init("w", codes(2, 1, 3, 3)),
            init("ws", np.array([0.01, 0.02], np.float32)), init("wz", np.zeros(2, np.uint8)), init("ys", np.float32(0.08)),
            init("yz", np.uint8(90)), init("bias", np.array([300, -500], np.int32))]
    inputs = {"x": codes(1, 1, 5, 5)}
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "bias"], ["y"], name="qconv",
                            pads=[1, 1, 1, 1])
    cases.append(("QLinearConv", model([node], [tensor_info("x", inputs["x"])], outputs(("y", TensorProto.UINT8)), conv, 10),
                  inputs, 0))
    # QOperator style: QuantizeLinear's UINT8 codes through MaxPool (a selection, exact on the
    # codes it reads as integers held as reals), then DequantizeLinear
    qdq = [init("s", np.float32(0.05)), init("z", np.uint8(128))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q"),
             helper.make_node("MaxPool", ["q"], ["m"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("DequantizeLinear", ["m", "s", "z"], ["y"], name="dq")]
    inputs = {"x": normal(1, 2, 4, 4) * np.float32(3)}
    cases.append(("QuantizeLinear_MaxPool_codes", model(nodes, [tensor_info("x", inputs["x"])], outputs(("y", TensorProto.FLOAT)),
                                                         qdq, 13), inputs, 1))  # the exact (q - z) * s
    return cases


def einsum_cases():
    """Einsum with an ellipsis (the implicit output too; ONNX Runtime refuses ellipses of different ranks) and of
    three operands (pairwise contractions: another association than ONNX Runtime's, so 8 ulps)."""
    def case(name, equation, *shapes, tolerance=4):
        return single(name, "Einsum", [normal(*s) for s in shapes], {"equation": equation}, opset=12, tolerance=tolerance)
    return [case("Einsum_ellipsis_matmul", "...ij,...jk->...ik", (2, 3, 4, 5), (2, 3, 5, 6)),
            case("Einsum_ellipsis_implicit", "...ij,...jk", (3, 4, 5), (3, 5, 2)),
            case("Einsum_ellipsis_sum", "i...->...", (4, 2, 3)),
            case("Einsum_three_batched", "bij,bjk,bkl->bil", (2, 3, 4), (2, 4, 5), (2, 5, 3), tolerance=8),
            case("Einsum_three_implicit", "ij,jk,kl", (3, 4), (4, 5), (5, 2), tolerance=8),
            case("Einsum_three_scaled", "ij,j,jk->ik", (3, 6), (6,), (6, 4), tolerance=8),
            # diagonals (a label twice in one operand): exact, one value and zeros summed
            case("Einsum_batched_diagonal", "...ii->...i", (2, 3, 3), tolerance=0),
            # a sum of 4 terms of either sign, normwise against its (smaller) result: f32's
            # rounding of the sum, not the diagonal, is what differs
            case("Einsum_trace", "ii", (4, 4), tolerance=16),
            case("Einsum_diagonal_times", "bii,bj->bij", (2, 3, 3), (2, 4), tolerance=2)]
