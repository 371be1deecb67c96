"""The ONNX models of the import tests, built with onnx.helper (Debian's python3-onnx).

Each case is (name, model, inputs, tolerance): inputs maps a graph input to a numpy array,
tolerance is the largest accepted gap between presk's f32 result and ONNX Runtime's (and
between either and the exact reference), in units of 2^-24 times the output's largest
magnitude (normwise f32 ulps)."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(23)
F = TensorProto.FLOAT


def normal(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def positive(*shape):
    return (RNG.random(shape) + 0.25).astype(np.float32)


def model(nodes, inputs, outputs, initializers=(), opset=13, extra_opsets=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    made = helper.make_model(graph, opset_imports=opsets, producer_name="presk-tests")
    made.ir_version = 8
    return made


def tensor_info(name, array, symbolic=None):
    dtype = {np.float32: F, np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL, np.uint8: TensorProto.UINT8,
             np.int8: TensorProto.INT8, np.int32: TensorProto.INT32}[array.dtype.type]
    shape = list(array.shape)
    if symbolic:
        for axis, dim in symbolic.items():
            shape[axis] = dim
    return helper.make_tensor_value_info(name, dtype, shape)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def out(name="y"):
    return helper.make_tensor_value_info(name, F, None)


def single(name, op, arrays, attrs=None, opset=13, initializers=(), tolerance=2, extra_inputs=(), domain=""):
    """One node `op` over graph inputs x0, x1, … (arrays) and initializer/extra names."""
    names = [f"x{i}" for i in range(len(arrays))] + list(extra_inputs)
    node = helper.make_node(op, names, ["y"], name=f"the_{op.lower()}", domain=domain, **(attrs or {}))
    inputs = [tensor_info(f"x{i}", a) for i, a in enumerate(arrays)]
    extra = [("com.microsoft", 1)] if domain else []
    made = model([node], inputs, [out()], initializers, opset, extra)
    return (name, made, {f"x{i}": a for i, a in enumerate(arrays)}, tolerance)


def constant(name, array):
    return helper.make_node("Constant", [], [name], name=f"const_{name}", value=init(name, array))


def elementwise_cases():
    x, y = normal(2, 3), normal(3)
    cases = [single(op, op, [x, y]) for op in ["Add", "Sub", "Mul"]]
    cases.append(single("Div", "Div", [x, positive(2, 3)]))
    cases.append(single("Add_scalar_initializer", "Add", [x], initializers=[init("c", np.float32(0.5))],
                        extra_inputs=["c"]))
    cases.append(single("Mul_initializer_1x1", "Mul", [normal(3)], initializers=[init("c", np.full((1, 1), 3.0, np.float32))],
                        extra_inputs=["c"]))
    for op in ["Neg", "Exp", "Tanh", "Relu", "Sigmoid", "Erf"]:
        cases.append(single(op, op, [normal(2, 3)], tolerance=4))
    for op in ["Sqrt", "Log", "Reciprocal"]:
        cases.append(single(op, op, [positive(2, 3)], tolerance=3))
    for exponent in [2.0, 3.0, 0.5, -1.0]:
        cases.append(single(f"Pow_{exponent}", "Pow", [positive(2, 3)], initializers=[init("e", np.float32(exponent))],
                            extra_inputs=["e"], tolerance=4))
    cases.append(single("Gelu_com_microsoft", "Gelu", [normal(2, 3)], domain="com.microsoft", tolerance=4))
    condition = RNG.random((2, 3)) > 0.5
    cases.append(single("Where", "Where", [condition, normal(2, 3), normal(3)]))
    return cases


def contraction_cases():
    cases = [
        single("MatMul_2d", "MatMul", [normal(2, 4), normal(4, 3)]),
        single("MatMul_3d_2d", "MatMul", [normal(2, 3, 4), normal(4, 5)]),
        single("MatMul_batched", "MatMul", [normal(2, 3, 4), normal(2, 4, 5)]),
        single("MatMul_broadcast", "MatMul", [normal(1, 2, 3, 4), normal(2, 2, 4, 5)]),
        single("MatMul_2d_3d", "MatMul", [normal(3, 4), normal(2, 4, 5)]),
        single("MatMul_vector", "MatMul", [normal(4), normal(2, 4, 5)]),
        single("Gemm", "Gemm", [normal(2, 4), normal(4, 3), normal(3)]),
        single("Gemm_trans_alpha_beta", "Gemm", [normal(4, 2), normal(3, 4), normal(2, 3)],
               {"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0}),
    ]
    x = normal(2, 3, 4)
    for op in ["ReduceMean", "ReduceMax"]:
        cases.append(single(f"{op}_axis1_keep", op, [x], {"axes": [1]}))
        cases.append(single(f"{op}_axes02_drop", op, [x], {"axes": [0, -1], "keepdims": 0}))
        cases.append(single(f"{op}_all", op, [x], {"keepdims": 0}))
    cases.append(single("ReduceSum_opset11", "ReduceSum", [x], {"axes": [2], "keepdims": 0}, opset=11))
    cases.append(single("ReduceSum_opset13", "ReduceSum", [x], {"keepdims": 1}, opset=13,
                        initializers=[init("axes", np.array([0, 2], np.int64))], extra_inputs=["axes"]))
    for op in ["Softmax", "LogSoftmax"]:
        cases.append(single(f"{op}_opset13", op, [x], {"axis": 1}, tolerance=4))
        cases.append(single(f"{op}_opset11_coerced", op, [x], {"axis": 1}, opset=11, tolerance=4))
        cases.append(single(f"{op}_opset9_default", op, [normal(2, 5)], opset=9, tolerance=4))
    cases.append(single("LayerNormalization", "LayerNormalization", [normal(2, 3, 8), normal(8), normal(8)],
                        {"epsilon": 1e-5}, opset=17, tolerance=4))
    return cases + opset_cases()


def opset_cases():
    """Older opsets through ONNX's version converter; the forms opsets 18 … 21 changed."""
    x = normal(2, 3, 4)
    axes = [init("axes", np.array([1], np.int64))]
    return [
        single("Gemm_opset7", "Gemm", [normal(2, 4), normal(4, 3), normal(3)], {"alpha": 0.5}, opset=7),
        single("Softmax_opset8_coerced", "Softmax", [x], {"axis": 1}, opset=8, tolerance=4),
        single("ReduceMean_opset18_axes_operand", "ReduceMean", [x], {"keepdims": 0}, opset=18,
               initializers=axes, extra_inputs=["axes"]),
        single("ReduceMax_opset18_all", "ReduceMax", [x], opset=18),
        single("ReduceMean_opset21_axes_operand", "ReduceMean", [x], opset=21, initializers=axes, extra_inputs=["axes"]),
        single("Gelu_opset20", "Gelu", [x], {"approximate": "tanh"}, opset=20, tolerance=4),
    ]


def layout_cases():
    """Layout moves values without arithmetic: every tolerance is 0."""
    x = normal(2, 3, 4)
    ints = lambda name, values: init(name, np.array(values, np.int64))
    cases = [
        single("Transpose", "Transpose", [x], {"perm": [2, 0, 1]}),
        single("Transpose_default", "Transpose", [x]),
        single("Reshape", "Reshape", [x], initializers=[ints("s", [0, -1])], extra_inputs=["s"]),
        single("Flatten_axis0", "Flatten", [x], {"axis": 0}),
        single("Flatten_axis2", "Flatten", [x], {"axis": 2}),
        single("Squeeze_opset11", "Squeeze", [normal(2, 1, 3)], {"axes": [1]}, opset=11),
        single("Squeeze_opset13", "Squeeze", [normal(2, 1, 3)], initializers=[ints("a", [-2])], extra_inputs=["a"]),
        single("Unsqueeze_opset11", "Unsqueeze", [x], {"axes": [0, 4]}, opset=11),
        single("Unsqueeze_opset13", "Unsqueeze", [x], initializers=[ints("a", [1])], extra_inputs=["a"]),
        single("Concat", "Concat", [x, normal(2, 2, 4)], {"axis": 1}),
        single("Slice_opset9", "Slice", [x], {"starts": [1], "ends": [100], "axes": [2]}, opset=9),
        single("Slice_opset13", "Slice", [x], initializers=[ints("s", [-2, 0]), ints("e", [10, 1]), ints("a", [2, 0])],
               extra_inputs=["s", "e", "a"]),
        single("Gather_constant", "Gather", [x], {"axis": 1}, initializers=[ints("i", [2, 0])], extra_inputs=["i"]),
        single("Gather_scalar", "Gather", [x], {"axis": 2}, initializers=[init("i", np.int64(-1))], extra_inputs=["i"]),
        single("Gather_embedding", "Gather", [normal(5, 3), np.array([[4, 0], [1, 1]], np.int64)]),
        single("Identity", "Identity", [x]),
    ]
    casts = [helper.make_node("Cast", ["x0"], ["d"], name="to_double", to=TensorProto.DOUBLE),
             helper.make_node("Cast", ["d"], ["y"], name="to_float", to=TensorProto.FLOAT)]
    cases.append(("Cast_double_float", model(casts, [tensor_info("x0", x)], [out()]), {"x0": x}, 1))
    for opset, form in [(11, "attribute"), (13, "input")]:
        extra = {"split": [1, 3]} if opset == 11 else {}
        inits = [] if opset == 11 else [ints("sizes", [1, 3])]
        node = helper.make_node("Split", ["x0"] + (["sizes"] if inits else []), ["a", "b"], name="split", axis=2, **extra)
        add = helper.make_node("Concat", ["b", "a"], ["y"], name="join", axis=2)
        made = model([node, add], [tensor_info("x0", x)], [out()], inits, opset)
        cases.append((f"Split_{form}", made, {"x0": x}, 1))
    node = helper.make_node("Split", ["x0"], ["a", "b", "c"], name="split3", axis=1)
    made = model([node], [tensor_info("x0", x)], [out("a"), out("c")], [], 13)
    cases.append(("Split_equal_two_outputs", made, {"x0": x}, 1))
    node = helper.make_node("Split", ["x0"], ["a", "b"], name="split18", axis=2, num_outputs=2)
    made = model([node, helper.make_node("Concat", ["b", "a"], ["y"], name="join", axis=2)],
                 [tensor_info("x0", x)], [out()], [], 18)
    cases.append(("Split_opset18_num_outputs", made, {"x0": x}, 1))
    return [(name, made, inputs, 0) for name, made, inputs, _ in cases]


def gemm_layer(prefix, x, w, b, weights_as_constants):
    nodes = []
    if weights_as_constants:
        nodes += [constant(f"{prefix}.weight", w), constant(f"{prefix}.bias", b)]
    nodes.append(helper.make_node("Gemm", [x, f"{prefix}.weight", f"{prefix}.bias"], [f"{prefix}_out"],
                                  name=f"/{prefix}/Gemm", transB=1))
    inits = [] if weights_as_constants else [init(f"{prefix}.weight", w), init(f"{prefix}.bias", b)]
    return nodes, inits


def mlp_case(weights_as_constants=False):
    w1, b1, w2, b2 = normal(8, 4) * 0.5, normal(8) * 0.1, normal(3, 8) * 0.5, normal(3) * 0.1
    n1, i1 = gemm_layer("fc1", "input", w1, b1, weights_as_constants)
    n2, i2 = gemm_layer("fc2", "hidden", w2, b2, weights_as_constants)
    relu = helper.make_node("Relu", ["fc1_out"], ["hidden"], name="/act/Relu")
    x = normal(2, 4)
    inputs = [tensor_info("input", x, {0: "batch"})]
    made = model(n1 + [relu] + n2, inputs, [helper.make_tensor_value_info("fc2_out", F, ["batch", 3])], i1 + i2, 13)
    name = "mlp_constant_weights" if weights_as_constants else "mlp"
    return (name, made, {"input": x}, 4)


def layer_norm_nodes(prefix, x, width, nodes, inits, weights_as_constants):
    """LayerNorm as exporters write it at opset 13: ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div."""
    n = lambda op, ins, outs, **kw: nodes.append(helper.make_node(op, ins, outs, name=f"/{prefix}/{op}_{len(nodes)}", **kw))
    params = {f"{prefix}.weight": 1 + 0.1 * normal(width), f"{prefix}.bias": 0.1 * normal(width),
              f"{prefix}.two": np.float32(2.0), f"{prefix}.eps": np.float32(1e-5)}
    for name, value in params.items():
        (nodes.append(constant(name, value)) if weights_as_constants else inits.append(init(name, value)))
    n("ReduceMean", [x], [f"{prefix}_mean"], axes=[-1])
    n("Sub", [x, f"{prefix}_mean"], [f"{prefix}_xc"])
    n("Pow", [f"{prefix}_xc", f"{prefix}.two"], [f"{prefix}_sq"])
    n("ReduceMean", [f"{prefix}_sq"], [f"{prefix}_var"], axes=[-1])
    n("Add", [f"{prefix}_var", f"{prefix}.eps"], [f"{prefix}_vareps"])
    n("Sqrt", [f"{prefix}_vareps"], [f"{prefix}_std"])
    n("Div", [f"{prefix}_xc", f"{prefix}_std"], [f"{prefix}_normed"])
    n("Mul", [f"{prefix}_normed", f"{prefix}.weight"], [f"{prefix}_scaled"])
    n("Add", [f"{prefix}_scaled", f"{prefix}.bias"], [f"{prefix}_out"])
    return f"{prefix}_out"


def transformer_case(weights_as_constants=False, T=4, D=8, H=2):
    """A pre-norm block: x + attention(LN(x)), then h + MLP(LN(h)) with an erf GELU, LayerNorm
    and GELU expanded as exporters write them."""
    nodes, inits = [], []
    def param(name, value):
        (nodes.append(constant(name, value)) if weights_as_constants else inits.append(init(name, value)))
        return name
    def n(op, ins, outs, **kw):
        nodes.append(helper.make_node(op, ins, [outs], name=f"/{outs}/{op}", **kw))
        return outs
    ints = lambda name, values: param(name, np.array(values, np.int64))
    a = layer_norm_nodes("ln1", "x", D, nodes, inits, weights_as_constants)
    for proj in "qkv":
        n("MatMul", [a, param(f"attn.w{proj}", normal(D, D) * 0.3)], f"{proj}_flat")
        n("Reshape", [f"{proj}_flat", ints(f"attn.shape_{proj}", [T, H, D // H])], f"{proj}_heads")
        n("Transpose", [f"{proj}_heads"], f"{proj}_t", perm=[1, 0, 2] if proj != "k" else [1, 2, 0])
    n("MatMul", ["q_t", "k_t"], "scores")
    n("Mul", ["scores", param("attn.scale", np.float32(1 / np.sqrt(D // H)))], "scaled")
    n("Softmax", ["scaled"], "att", axis=-1)
    n("MatMul", ["att", "v_t"], "mixed")
    n("Transpose", ["mixed"], "mixed_t", perm=[1, 0, 2])
    n("Reshape", ["mixed_t", ints("attn.shape_out", [T, D])], "merged")
    n("MatMul", ["merged", param("attn.wo", normal(D, D) * 0.3)], "attn_out")
    n("Add", ["x", "attn_out"], "h")
    b = layer_norm_nodes("ln2", "h", D, nodes, inits, weights_as_constants)
    n("MatMul", [b, param("mlp.up.weight", normal(D, 2 * D) * 0.3)], "up")
    n("Add", ["up", param("mlp.up.bias", normal(2 * D) * 0.1)], "up_b")
    n("Div", ["up_b", param("mlp.sqrt2", np.float32(1.4142135))], "up_s")  # GELU as exporters write it
    n("Erf", ["up_s"], "erf")
    n("Add", ["erf", param("mlp.one", np.float32(1.0))], "erf1")
    n("Mul", ["up_b", "erf1"], "gelu2")
    n("Mul", ["gelu2", param("mlp.half", np.float32(0.5))], "gelu")
    n("MatMul", ["gelu", param("mlp.down.weight", normal(2 * D, D) * 0.3)], "down")
    n("Add", ["h", "down"], "y")
    x = normal(T, D)
    made = model(nodes, [tensor_info("x", x)], [out()], inits, 13)
    name = "transformer_constant_weights" if weights_as_constants else "transformer"
    return (name, made, {"x": x}, 8)


def conv_cases():
    """Conv and the pools (im2col by slices and concat, then one einsum or one reduction),
    BatchNormalization and InstanceNormalization."""
    def conv(name, x, w, bias=True, tolerance=8, **attrs):
        inits = [init("w", w)] + ([init("b", 0.1 * normal(w.shape[0]))] if bias else [])
        return single(name, "Conv", [x], attrs, initializers=inits, extra_inputs=["w", "b"] if bias else ["w"],
                      tolerance=tolerance)
    cases = [
        conv("Conv_2d_pads", normal(1, 2, 5, 5), normal(3, 2, 3, 3), pads=[1, 1, 1, 1]),
        conv("Conv_2d_strides_dilations", normal(2, 3, 7, 6), normal(4, 3, 3, 2), False, strides=[2, 1],
             dilations=[1, 2], pads=[1, 0, 2, 1]),
        conv("Conv_1d_same_upper", normal(2, 3, 8), normal(4, 3, 3), strides=[2], auto_pad="SAME_UPPER"),
        conv("Conv_2d_same_lower", normal(1, 2, 6, 5), normal(2, 2, 2, 3), strides=[2, 2], auto_pad="SAME_LOWER"),
        conv("Conv_grouped", normal(1, 4, 5, 5), normal(6, 2, 3, 3), group=2),
        conv("Conv_depthwise", normal(1, 3, 6, 6), normal(3, 1, 3, 3), group=3, pads=[1, 1, 1, 1], strides=[2, 2]),
        conv("Conv_1x1_valid", normal(1, 4, 3, 3), normal(5, 4, 1, 1), auto_pad="VALID"),
        single("MaxPool_2d_pads_strides", "MaxPool", [normal(1, 2, 7, 7)], {"kernel_shape": [3, 3], "strides": [2, 2],
                                                                            "pads": [1, 1, 1, 1]}, tolerance=0),
        single("MaxPool_1d", "MaxPool", [normal(2, 3, 8)], {"kernel_shape": [2], "strides": [2]}, tolerance=0),
        single("MaxPool_dilated", "MaxPool", [normal(1, 1, 6, 6)], {"kernel_shape": [2, 2], "dilations": [2, 2]}, tolerance=0),
        single("AveragePool_exclude_pad", "AveragePool", [normal(1, 2, 5, 5)], {"kernel_shape": [3, 3],
                                                                                "pads": [1, 1, 1, 1]}, tolerance=4),
        single("AveragePool_include_pad", "AveragePool", [normal(1, 2, 6, 6)],
               {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2], "count_include_pad": 1}, tolerance=4),
        single("AveragePool_ceil_exact", "AveragePool", [normal(1, 2, 5, 5)],
               {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}, tolerance=4),
        single("GlobalAveragePool", "GlobalAveragePool", [normal(2, 3, 4, 5)], tolerance=4),
        single("GlobalMaxPool", "GlobalMaxPool", [normal(2, 3, 4, 5)], tolerance=0),
    ]
    stats = [init("scale", 1 + 0.1 * normal(3)), init("bias", 0.1 * normal(3)), init("mean", 0.1 * normal(3)),
             init("var", positive(3))]
    cases.append(single("BatchNormalization", "BatchNormalization", [normal(2, 3, 4, 4)], {"epsilon": 1e-3},
                        initializers=stats, extra_inputs=["scale", "bias", "mean", "var"], tolerance=4))
    cases.append(single("BatchNormalization_1d", "BatchNormalization", [normal(2, 3, 5)], opset=9,
                        initializers=stats, extra_inputs=["scale", "bias", "mean", "var"], tolerance=4))
    cases.append(single("InstanceNormalization", "InstanceNormalization", [normal(2, 3, 4, 4)],
                        initializers=stats[:2], extra_inputs=["scale", "bias"], tolerance=8))
    cases.append(single("ConvTranspose_2d_strides", "ConvTranspose", [normal(1, 2, 3, 3)],
                        {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]},
                        initializers=[init("w", normal(2, 3, 3, 3)), init("b", 0.1 * normal(3))],
                        extra_inputs=["w", "b"], tolerance=8))
    cases.append(single("ConvTranspose_1d_grouped_dilated", "ConvTranspose", [normal(2, 4, 5)],
                        {"group": 2, "dilations": [2]}, initializers=[init("w", normal(4, 3, 3))],
                        extra_inputs=["w"], tolerance=8))
    return cases


def activation_cases():
    x = normal(2, 3, 4)
    cases = []
    for op, attrs in [("Abs", {}), ("Sign", {}), ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}), ("HardSwish", {}),
                      ("LeakyRelu", {"alpha": 0.1}), ("Elu", {"alpha": 0.7}), ("Selu", {}), ("Celu", {"alpha": 1.5}),
                      ("Softplus", {}), ("Softsign", {}), ("ThresholdedRelu", {"alpha": 0.5})]:  # Mish is opset 18
        opset = 14 if op == "HardSwish" else 13
        data = x.copy()
        data[0, 0, :2] = 0
        cases.append(single(op, op, [data], attrs, opset=opset, tolerance=4))
    cases.append(single("PRelu_broadcast", "PRelu", [x], initializers=[init("slope", normal(3, 1))],
                        extra_inputs=["slope"], tolerance=2))
    cases.append(single("Clip_operands", "Clip", [x], initializers=[init("lo", np.float32(-0.5)), init("hi", np.float32(0.7))],
                        extra_inputs=["lo", "hi"], tolerance=0))
    cases.append(single("Clip_max_only", "Clip", [x], initializers=[init("hi", np.float32(0.2))],
                        extra_inputs=["", "hi"], tolerance=0))
    cases.append(single("Clip_opset9_attributes", "Clip", [x], {"min": -0.3, "max": 0.4}, opset=9, tolerance=0))
    for op in ["Min", "Max", "Sum", "Mean"]:
        cases.append(single(f"{op}_variadic", op, [x, normal(3, 4), normal(4)], tolerance=2))
    cases.append(single("Dropout_inference", "Dropout", [x], initializers=[init("r", np.float32(0.3))],
                        extra_inputs=["r"], tolerance=0))
    a, b, c = normal(2, 3), normal(2, 3), normal(3)
    inputs = [tensor_info(f"x{i}", v) for i, v in enumerate([a, b, c])]
    feeds = {"x0": a, "x1": b, "x2": c}
    for op in ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"]:
        # Equal of x0 and max(x0, x1): true where x0 is the larger.
        nodes = [helper.make_node("Max", ["x0", "x1"], ["m"], name="larger"),
                 helper.make_node(op, ["x0", "m" if op == "Equal" else "x1"], ["c"], name="compare"),
                 helper.make_node("Where", ["c", "x2", "x1"], ["y"], name="select")]
        cases.append((f"{op}_where", model(nodes, inputs, [out()]), dict(feeds), 0))
    for op in ["And", "Or", "Xor", "Not"]:
        nodes = [helper.make_node("Less", ["x0", "x1"], ["p"], name="less"),
                 helper.make_node("Greater", ["x0", "x2"], ["q"], name="greater"),
                 helper.make_node(op, ["p", "q"] if op != "Not" else ["p"], ["c"], name="logic"),
                 helper.make_node("Where", ["c", "x0", "x2"], ["y"], name="select")]
        cases.append((f"{op}_where", model(nodes, inputs, [out()]), dict(feeds), 0))
    return cases


def reduce_cases():
    x = normal(2, 3, 4)
    ints = lambda name, values: init(name, np.array(values, np.int64))
    cases = []
    for op in ["ReduceMin", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]:
        data = positive(2, 3, 4) if op == "ReduceLogSum" else x
        cases.append(single(f"{op}_axis1_keep", op, [data], {"axes": [1]}, tolerance=4))
        cases.append(single(f"{op}_axes02_drop", op, [data], {"axes": [0, -1], "keepdims": 0}, tolerance=4))
        cases.append(single(f"{op}_all", op, [data], {"keepdims": 0}, tolerance=4))
    cases += [
        single("Einsum_batched", "Einsum", [normal(2, 3, 4), normal(2, 4, 5)], {"equation": "bij,bjk->bik"}, opset=12),
        single("Einsum_transposed", "Einsum", [normal(3, 4), normal(5, 4)], {"equation": "ij,kj->ki"}, opset=12),
        single("Einsum_implicit", "Einsum", [normal(3, 4), normal(4, 5)], {"equation": "ij,jk"}, opset=12),
        single("Tile", "Tile", [x], initializers=[ints("r", [2, 1, 3])], extra_inputs=["r"], tolerance=0),
        single("Expand", "Expand", [normal(3, 1)], initializers=[ints("s", [2, 3, 4])], extra_inputs=["s"], tolerance=0),
        single("DepthToSpace_DCR", "DepthToSpace", [normal(1, 8, 2, 3)], {"blocksize": 2}, tolerance=0),
        single("DepthToSpace_CRD", "DepthToSpace", [normal(1, 8, 2, 3)], {"blocksize": 2, "mode": "CRD"}, tolerance=0),
        single("SpaceToDepth", "SpaceToDepth", [normal(1, 2, 4, 6)], {"blocksize": 2}, tolerance=0),
        single("Trilu_upper_k1", "Trilu", [normal(2, 4, 5)], opset=14, initializers=[init("k", np.int64(1))],
               extra_inputs=["k"], tolerance=0),
        single("Trilu_lower", "Trilu", [normal(4, 3)], {"upper": 0}, opset=14, tolerance=0),
        single("Hardmax_ties", "Hardmax", [np.round(normal(2, 5, 3))], {"axis": 1}, tolerance=0),
        single("Hardmax_last_opset11", "Hardmax", [normal(3, 4)], opset=11, tolerance=0),
    ]
    return cases


def cnn_case():
    """A small CNN as exporters write one: Conv/BatchNorm/Relu twice, a MaxPool, a
    GlobalAveragePool, Flatten and a Gemm head."""
    nodes, inits = [], []
    def n(op, ins, outs, **kw):
        nodes.append(helper.make_node(op, ins, [outs], name=f"/{outs}/{op}", **kw))
        return outs
    def param(name, value):
        inits.append(init(name, value))
        return name
    def bn(prefix, x, channels):
        return n("BatchNormalization", [x, param(f"{prefix}.weight", 1 + 0.1 * normal(channels)),
                                        param(f"{prefix}.bias", 0.1 * normal(channels)),
                                        param(f"{prefix}.running_mean", 0.1 * normal(channels)),
                                        param(f"{prefix}.running_var", positive(channels))], f"{prefix}_out")
    n("Conv", ["x", param("conv1.weight", 0.3 * normal(8, 3, 3, 3))], "conv1_out", pads=[1, 1, 1, 1])
    n("Relu", [bn("bn1", "conv1_out", 8)], "relu1")
    n("MaxPool", ["relu1"], "pool1", kernel_shape=[2, 2], strides=[2, 2])
    n("Conv", ["pool1", param("conv2.weight", 0.2 * normal(8, 8, 3, 3)), param("conv2.bias", 0.1 * normal(8))],
      "conv2_out", pads=[1, 1, 1, 1], strides=[2, 2])
    n("Relu", [bn("bn2", "conv2_out", 8)], "relu2")
    n("GlobalAveragePool", ["relu2"], "gap")
    n("Flatten", ["gap"], "flat")
    n("Gemm", ["flat", param("fc.weight", 0.3 * normal(10, 8)), param("fc.bias", 0.1 * normal(10))], "y", transB=1)
    x = normal(1, 3, 8, 8)
    return ("cnn", model(nodes, [tensor_info("x", x)], [out()], inits, 13), {"x": x}, 16)


def depthwise_case():
    """MobileNet's block: a 1×1 Conv, HardSwish, a depthwise 3×3 Conv, BatchNorm, HardSwish, a
    1×1 Conv, GlobalAveragePool and a Gemm head."""
    nodes, inits = [], []
    def n(op, ins, outs, **kw):
        nodes.append(helper.make_node(op, ins, [outs], name=f"/{outs}/{op}", **kw))
        return outs
    def param(name, value):
        inits.append(init(name, value))
        return name
    n("Conv", ["x", param("expand.weight", 0.4 * normal(8, 3, 1, 1)), param("expand.bias", 0.1 * normal(8))], "expanded")
    n("HardSwish", ["expanded"], "act1")
    n("Conv", ["act1", param("dw.weight", 0.4 * normal(8, 1, 3, 3))], "dw_out", group=8, pads=[1, 1, 1, 1], strides=[2, 2])
    n("BatchNormalization", ["dw_out", param("bn.weight", 1 + 0.1 * normal(8)), param("bn.bias", 0.1 * normal(8)),
                             param("bn.running_mean", 0.1 * normal(8)), param("bn.running_var", positive(8))], "bn_out")
    n("HardSwish", ["bn_out"], "act2")
    n("Conv", ["act2", param("project.weight", 0.3 * normal(4, 8, 1, 1))], "projected")
    n("GlobalAveragePool", ["projected"], "gap")
    n("Flatten", ["gap"], "flat")
    n("Gemm", ["flat", param("fc.weight", 0.3 * normal(5, 4)), param("fc.bias", 0.1 * normal(5))], "y", transB=1)
    x = normal(1, 3, 8, 8)
    return ("depthwise_hardswish", model(nodes, [tensor_info("x", x)], [out()], inits, 14), {"x": x}, 16)


def all_cases():
    return (elementwise_cases() + contraction_cases() + layout_cases() + conv_cases() + activation_cases() +
            reduce_cases() + [mlp_case(), mlp_case(True), transformer_case(), transformer_case(True), cnn_case(),
                              depthwise_case()])


def dynamic_info(name, array, dims, elem=F):
    """A graph input whose leading axes are the named (symbolic) dims."""
    shape = list(dims) + list(array.shape[len(dims):])
    return helper.make_tensor_value_info(name, elem, shape)


class Graph:
    """Nodes and initializers built up by name, as an exporter writes them."""

    def __init__(self):
        self.nodes, self.inits = [], []

    def init(self, name, array):
        self.inits.append(init(name, array))
        return name

    def ints(self, name, values):
        return self.init(name, np.array(values, np.int64))

    def n(self, op, ins, out, **attrs):
        self.nodes.append(helper.make_node(op, ins, [out], name=f"/{out}/{op}", **attrs))
        return out


def gpt2_attention_case(B=2, T=5, D=8, H=2, buffer=16):
    """torch GPT-2-style attention exported with dynamic batch and sequence: the head reshape
    from Shape → Gather → Unsqueeze → Concat, the scale from Shape(start=-1) → Cast → Sqrt, and
    the causal mask as a constant tril buffer sliced to [T - T : T, :T] by Slice, then Where."""
    g = Graph()
    g.n("Shape", ["x"], "shape")
    g.n("Gather", ["shape", g.ints("zero", 0)], "b")
    g.n("Gather", ["shape", g.ints("one", 1)], "t")
    g.n("Unsqueeze", ["b", g.ints("axis0", [0])], "b1")
    g.n("Unsqueeze", ["t", "axis0"], "t1")
    g.n("Concat", ["b1", "t1", g.ints("heads", [H]), g.ints("head_dim", [D // H])], "heads_shape", axis=0)
    for proj in "qkv":
        g.n("MatMul", ["x", g.init(f"attn.w{proj}", normal(D, D) * 0.3)], f"{proj}_flat")
        g.n("Reshape", [f"{proj}_flat", "heads_shape"], f"{proj}_heads")
        g.n("Transpose", [f"{proj}_heads"], f"{proj}_t", perm=[0, 2, 3, 1] if proj == "k" else [0, 2, 1, 3])
    g.n("MatMul", ["q_t", "k_t"], "scores")
    g.n("Shape", ["q_t"], "last", start=-1)
    g.n("Cast", ["last"], "last_f", to=F)
    g.n("Sqrt", ["last_f"], "scale")
    g.n("Div", ["scores", "scale"], "scaled")
    g.n("Sub", ["t", "t"], "past")  # key_length - query_length
    g.n("Unsqueeze", ["past", "axis0"], "past1")
    tril = np.tril(np.ones((buffer, buffer), np.bool_)).reshape(1, 1, buffer, buffer)
    g.n("Slice", [g.init("attn.bias", tril), "past1", "t1", g.ints("axis2", [2])], "mask_rows")
    g.n("Slice", ["mask_rows", g.ints("start0", [0]), "t1", g.ints("axis3", [3])], "mask")
    g.n("Where", ["mask", "scaled", g.init("attn.masked_bias", np.float32(-3.4028234663852886e38))], "masked")
    g.n("Softmax", ["masked"], "att", axis=-1)
    g.n("MatMul", ["att", "v_t"], "mixed")
    g.n("Transpose", ["mixed"], "mixed_t", perm=[0, 2, 1, 3])
    g.n("Concat", ["b1", "t1", g.ints("width", [D])], "merged_shape", axis=0)
    g.n("Reshape", ["mixed_t", "merged_shape"], "merged")
    g.n("MatMul", ["merged", g.init("attn.wo", normal(D, D) * 0.3)], "y")
    x = normal(B, T, D)
    made = model(g.nodes, [dynamic_info("x", x, ["batch", "sequence"])], [out()], g.inits, 15)  # Shape's start: 15
    return ("gpt2_attention_dynamic", made, {"x": x}, 8)


def paddle_shape_slice_case(B=2, T=3):
    """Paddle's opset-9 shape arithmetic: Shape → Slice (attributes) → Concat → Reshape, and a
    -1 inferred from symbolic extents."""
    g = Graph()
    g.n("Shape", ["x"], "shape")
    g.n("Slice", ["shape"], "bt", starts=[0], ends=[2], axes=[0])
    g.n("Concat", ["bt", g.ints("split", [2, 4])], "split_shape", axis=0)
    g.n("Reshape", ["x", "split_shape"], "x4")
    g.n("Transpose", ["x4"], "x4_t", perm=[0, 2, 1, 3])
    g.n("Slice", ["shape"], "b", starts=[0], ends=[1], axes=[0])
    g.n("Concat", ["b", g.ints("rest", [-1])], "flat_shape", axis=0)
    g.n("Reshape", ["x4_t", "flat_shape"], "flat")
    g.n("Relu", ["flat"], "y")
    x = normal(B, T, 8)
    made = model(g.nodes, [dynamic_info("x", x, ["batch", "seq"])], [out()], g.inits, 9)
    return ("paddle_shape_slice_opset9", made, {"x": x}, 0)


def bert_mask_case(B=2, T=4, D=8):
    """A BERT-style additive attention mask: an int64 input cast to float, (1 - mask) * -10000
    broadcast over the scores (opset 11: Unsqueeze's axes an attribute)."""
    g = Graph()
    g.n("Cast", ["attention_mask"], "mask_f", to=F)
    g.n("Unsqueeze", ["mask_f"], "mask4", axes=[1, 2])
    g.n("Sub", [g.init("one_f", np.float32(1.0)), "mask4"], "inverted")
    g.n("Mul", ["inverted", g.init("big", np.float32(-10000.0))], "additive")
    g.n("Transpose", ["x"], "x_t", perm=[0, 2, 1])
    g.n("MatMul", ["x", "x_t"], "scores3")
    g.n("Unsqueeze", ["scores3"], "scores", axes=[1])
    g.n("Add", ["scores", "additive"], "masked")
    g.n("Softmax", ["masked"], "y", axis=3)
    x = normal(B, T, D)
    mask = np.ones((B, T), np.int64)
    mask[1, T - 1] = 0
    mask[0, 0] = 0
    inputs = [dynamic_info("x", x, ["batch", "sequence"]),
              dynamic_info("attention_mask", mask, ["batch", "sequence"], TensorProto.INT64)]
    made = model(g.nodes, inputs, [out()], g.inits, 11)
    return ("bert_attention_mask", made, {"x": x, "attention_mask": mask}, 4)


def shape_operators_case(B=2, T=3):
    """The other shape operators exporters use, evaluated at import on a symbolic shape:
    ConstantOfShape, Mul, Equal, Where (torch's Expand guard), Div, Mod, Max, Min, Range, Less,
    Not, Expand, into one Reshape to [batch, seq, 2, 4]."""
    g = Graph()
    g.n("Shape", ["x"], "s")
    g.n("ConstantOfShape", [g.ints("three", [3])], "ones", value=helper.make_tensor("v", TensorProto.INT64, [1], [1]))
    g.n("Mul", ["ones", g.ints("minus", -1)], "neg")
    g.n("Equal", ["s", "neg"], "unknown")
    g.n("Where", ["unknown", "ones", "s"], "s2")
    g.n("Gather", ["s2", g.ints("two", 2)], "width")
    g.n("Div", ["width", g.ints("half", 2)], "d")            # 4
    g.n("Mod", ["width", g.ints("three_s", 3)], "m")         # 2
    g.n("Gather", ["s2", g.ints("one", 1)], "t")
    g.n("Max", ["t", g.ints("one_s", 1)], "tmax")             # seq
    g.n("Min", ["d", "m"], "heads")                          # 2
    g.n("Range", [g.ints("zero", 0), "heads", g.ints("step", 1)], "r")  # [0, 1]
    g.n("Less", ["t", g.ints("zero2", 0)], "negative")
    g.n("Not", ["negative"], "positive")
    g.n("Gather", ["s2", g.ints("zero3", 0)], "b")
    g.n("Unsqueeze", ["b", g.ints("axis0", [0])], "b1")
    g.n("Unsqueeze", ["tmax", "axis0"], "t1")
    g.n("Unsqueeze", ["heads", "axis0"], "h1")
    g.n("Unsqueeze", ["d", "axis0"], "d1")
    g.n("Concat", ["b1", "t1", "h1", "d1"], "target", axis=0)
    g.n("Expand", ["target", g.ints("one_v", [1])], "target_e")
    g.n("Where", ["positive", "target_e", "target"], "chosen")
    g.n("Reshape", ["x", "chosen"], "x4")
    g.n("Shape", ["r"], "r_len")  # 2
    g.n("Concat", ["b1", "t1", g.ints("last", [-1])], "back", axis=0)
    g.n("Reshape", ["x4", "back"], "x3")
    g.n("Relu", ["x3"], "y")
    x = normal(B, T, 8)
    made = model(g.nodes, [dynamic_info("x", x, ["batch", "seq"])], [out()], g.inits, 13)
    return ("shape_operators", made, {"x": x}, 0)


def positions_case(B=2, T=5):
    """Range over the symbolic sequence at run time (torch.arange(T), Hugging Face's position_ids
    arange(past, past + T)): Range(0, T, 1) into a position table by Gather, Range(2, T + 2, 1)
    and Range(0, 2T, 2) cast to float and added; the extents stay symbolic."""
    g = Graph()
    g.n("Shape", ["x"], "s")
    g.n("Gather", ["s", g.ints("one", 1)], "t")
    g.n("Range", [g.ints("zero", 0), "t", "one"], "r")
    g.n("Gather", [g.init("wpe", normal(8, 4)), "r"], "pos")                 # [seq, 4]
    g.n("Add", ["t", g.ints("two", 2)], "t2")
    g.n("Range", ["two", "t2", "one"], "r2")                                 # 2 … seq + 1
    g.n("Mul", ["t", "two"], "twice")
    g.n("Range", ["zero", "twice", "two"], "r3")                             # 0, 2, … 2 seq − 2
    g.n("Add", ["r2", "r3"], "rr")
    g.n("Cast", ["rr"], "rf", to=F)
    g.n("Unsqueeze", ["rf", g.ints("axes", [1])], "rc")                      # [seq, 1]
    g.n("Add", ["x", "pos"], "xp")
    g.n("Add", ["xp", "rc"], "y")
    x = normal(B, T, 4)
    made = model(g.nodes, [dynamic_info("x", x, ["batch", "seq"])], [out()], g.inits, 13)
    return ("runtime_range", made, {"x": x}, 2)


def shape_cases():
    """Dynamic-axes exports: their shape arithmetic evaluated at import with the axes symbolic."""
    cases = [gpt2_attention_case(), paddle_shape_slice_case(), bert_mask_case(), shape_operators_case(),
             positions_case()]
    for name, array, elem in [("Cast_int64_float", np.array([[3, -2, 0], [7, 1, 5]], np.int64), TensorProto.INT64),
                              ("Cast_bool_float", RNG.random((2, 3)) > 0.5, TensorProto.BOOL)]:
        node = helper.make_node("Cast", ["x0"], ["y"], name="cast", to=F)
        made = model([node], [dynamic_info("x0", array, ["batch"], elem)], [out()])
        cases.append((name, made, {"x0": array}, 0))
    return cases


QRNG = np.random.default_rng(31)


def quant_inputs(*shape, spread=4.0):
    return (spread * QRNG.standard_normal(shape)).astype(np.float32)


def qdq_pair(prefix, x, scale, zero_point, nodes, inits, axis=None):
    """x → QuantizeLinear → DequantizeLinear with constant scale and zero point; the output name."""
    inits += [init(f"{prefix}.scale", scale), init(f"{prefix}.zero_point", zero_point)]
    attrs = {} if axis is None else {"axis": axis}
    nodes.append(helper.make_node("QuantizeLinear", [x, f"{prefix}.scale", f"{prefix}.zero_point"], [f"{prefix}_q"],
                                  name=f"/{prefix}/QuantizeLinear", **attrs))
    nodes.append(helper.make_node("DequantizeLinear", [f"{prefix}_q", f"{prefix}.scale", f"{prefix}.zero_point"],
                                  [f"{prefix}_dq"], name=f"/{prefix}/DequantizeLinear", **attrs))
    return f"{prefix}_dq"


def quantized_weight(prefix, w, nodes, inits):
    """A float weight [K, N] as ONNX Runtime's quantizer stores it: INT8 codes per output channel
    (axis 1, symmetric, zero point 0) and a DequantizeLinear; returns (name, the dequantized f32)."""
    scale = (np.abs(w).max(axis=0) / 127).astype(np.float32)
    codes = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    inits += [init(f"{prefix}.weight_quantized", codes), init(f"{prefix}.weight_scale", scale),
              init(f"{prefix}.weight_zero_point", np.zeros(scale.shape, np.int8))]
    nodes.append(helper.make_node("DequantizeLinear", [f"{prefix}.weight_quantized", f"{prefix}.weight_scale",
                                                       f"{prefix}.weight_zero_point"], [f"{prefix}.weight_dq"],
                                  name=f"/{prefix}/weight/DequantizeLinear", axis=1))
    return f"{prefix}.weight_dq", (codes.astype(np.float32) * scale).astype(np.float32)


def qdq_mlp_case():
    """The walkthrough's MLP in QDQ form as ONNX Runtime's static quantizer writes it: UINT8
    activations per tensor, INT8 weights per channel; and the float model it came from, which
    `presk import --strip-qdq` must reproduce (the weights dequantized)."""
    x = quant_inputs(4, 8, spread=1.0)
    w1, b1 = 0.4 * QRNG.standard_normal((8, 16)).astype(np.float32), 0.1 * QRNG.standard_normal(16).astype(np.float32)
    w2, b2 = 0.3 * QRNG.standard_normal((16, 4)).astype(np.float32), 0.1 * QRNG.standard_normal(4).astype(np.float32)
    nodes, inits = [], [init("fc1.bias", b1), init("fc2.bias", b2)]
    h = qdq_pair("input", "x", np.float32(0.02), np.uint8(128), nodes, inits)
    w1_name, w1_float = quantized_weight("fc1", w1, nodes, inits)
    nodes += [helper.make_node("MatMul", [h, w1_name], ["fc1_mm"], name="/fc1/MatMul"),
              helper.make_node("Add", ["fc1_mm", "fc1.bias"], ["fc1_out"], name="/fc1/Add"),
              helper.make_node("Relu", ["fc1_out"], ["act"], name="/act/Relu")]
    a = qdq_pair("act", "act", np.float32(0.015), np.uint8(0), nodes, inits)
    w2_name, w2_float = quantized_weight("fc2", w2, nodes, inits)
    nodes += [helper.make_node("MatMul", [a, w2_name], ["fc2_mm"], name="/fc2/MatMul"),
              helper.make_node("Add", ["fc2_mm", "fc2.bias"], ["y"], name="/fc2/Add")]
    quantized = model(nodes, [tensor_info("x", x)], [out()], inits, 13)
    float_nodes = [helper.make_node("MatMul", ["x", "fc1.w"], ["fc1_mm"], name="/fc1/MatMul"),
                   helper.make_node("Add", ["fc1_mm", "fc1.bias"], ["fc1_out"], name="/fc1/Add"),
                   helper.make_node("Relu", ["fc1_out"], ["act"], name="/act/Relu"),
                   helper.make_node("MatMul", ["act", "fc2.w"], ["fc2_mm"], name="/fc2/MatMul"),
                   helper.make_node("Add", ["fc2_mm", "fc2.bias"], ["y"], name="/fc2/Add")]
    original = model(float_nodes, [tensor_info("x", x)], [out()],
                     [init("fc1.w", w1_float), init("fc1.bias", b1), init("fc2.w", w2_float), init("fc2.bias", b2)], 13)
    return [("qdq_mlp", quantized, {"x": x}, 8),
            ("qdq_mlp_stripped", quantized, {"x": x}, 8, {"import_args": ["--strip-qdq"], "ort_model": original})]


def quant_cases():
    """QuantizeLinear/DequantizeLinear with their exact meaning (round half to even, saturation),
    Round/Floor/Ceil, and the Casts that round to FLOAT16/BFLOAT16."""
    U8, I8 = TensorProto.UINT8, TensorProto.INT8
    cases = []
    # per tensor, UINT8: a power-of-two scale, so x / scale is exact and the ties (k + ½) are met
    x = np.concatenate([quant_inputs(20), (np.arange(-6, 6) + 0.5).astype(np.float32) * 0.0625,
                        np.array([100.0, -100.0], np.float32)]).reshape(2, 17)
    for zero_point, dtype, elem in [(np.uint8(128), "u8", U8), (np.int8(-3), "i8", I8)]:
        node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="/q/QuantizeLinear")
        made = model([node], [tensor_info("x", x)], [helper.make_tensor_value_info("y", elem, None)],
                     [init("s", np.float32(0.0625)), init("z", zero_point)], 13)
        cases.append((f"QuantizeLinear_tensor_{dtype}", made, {"x": x}, 0))
    # per axis (axis 1), INT8 codes, scales that are not powers of two
    x = quant_inputs(2, 3, 4)
    nodes, inits = [], []
    y = qdq_pair("c", "x", np.array([0.05, 0.1, 0.03], np.float32), np.array([0, -5, 7], np.int8), nodes, inits, axis=1)
    nodes.append(helper.make_node("Identity", [y], ["y"], name="out"))
    cases.append(("QDQ_axis_i8", model(nodes, [tensor_info("x", x)], [out()], inits, 13), {"x": x}, 2))
    cases += qdq_mlp_case()
    r = np.concatenate([quant_inputs(16), np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.0, -7.25], np.float32)])
    for op in ["Round", "Floor", "Ceil"]:
        cases.append(single(op, op, [r.reshape(4, 6)], tolerance=0))
    wide = (quant_inputs(4, 6) * np.float32(1000)).astype(np.float32)
    for to, name in [(TensorProto.FLOAT16, "FLOAT16"), (TensorProto.BFLOAT16, "BFLOAT16")]:
        nodes = [helper.make_node("Cast", ["x"], ["h"], name="/narrow/Cast", to=to),
                 helper.make_node("Cast", ["h"], ["y"], name="/widen/Cast", to=TensorProto.FLOAT)]
        cases.append((f"Cast_to_{name}", model(nodes, [tensor_info("x", wide)], [out()], [], 13), {"x": wide}, 0))
    return cases


def select_cases():
    """ArgMax/ArgMin, GatherElements, the two losses, Sin and Cos: compositions that select by an
    index, and the new trigonometric primitives."""
    x = quant_inputs(3, 5, spread=1.0)
    x[1, 3] = x[1, 1] = x[1].max() + 1  # a tie: the first (or with select_last_index the last)
    I64 = TensorProto.INT64
    cases = []
    for op in ["ArgMax", "ArgMin"]:
        for attrs in [{"axis": 1}, {"axis": 0, "keepdims": 0}, {"axis": 1, "select_last_index": 1}]:
            node = helper.make_node(op, ["x"], ["y"], name=f"/{op}", **attrs)
            tag = "_".join(f"{k}{v}" for k, v in attrs.items())
            cases.append((f"{op}_{tag}", model([node], [tensor_info("x", x)], [helper.make_tensor_value_info("y", I64, None)],
                                              [], 13), {"x": x}, 0))
    data = quant_inputs(3, 4)
    indices = QRNG.integers(-4, 4, (3, 4)).astype(np.int64)
    node = helper.make_node("GatherElements", ["x", "i"], ["y"], name="/GatherElements", axis=1)
    cases.append(("GatherElements_axis1", model([node], [tensor_info("x", data), tensor_info("i", indices)], [out()], [], 13),
                  {"x": data, "i": indices}, 0))
    scores = quant_inputs(4, 5, 2, spread=1.0)
    target = QRNG.integers(0, 5, (4, 2)).astype(np.int64)
    target[0, 0] = 2
    weight = (QRNG.random(5) + 0.5).astype(np.float32)
    for reduction in ["none", "sum", "mean"]:
        for op in ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"]:
            for weighted in [False, True]:
                inputs = ["x", "t"] + (["w"] if weighted else [])
                node = helper.make_node(op, inputs, ["y"], name=f"/{op}", reduction=reduction, ignore_index=2)
                infos = [tensor_info("x", scores), tensor_info("t", target)] + ([tensor_info("w", weight)] if weighted else [])
                # NLL reads log-probabilities (≤ 0): a sum of one sign, no cancellation to amplify
                x = -np.abs(scores) if op == "NegativeLogLikelihoodLoss" else scores
                feeds = {"x": x, "t": target} | ({"w": weight} if weighted else {})
                cases.append((f"{op}_{reduction}{'_weighted' if weighted else ''}",
                              model([node], infos, [out()], [], 13), feeds, 8))
    for op in ["Sin", "Cos"]:
        cases.append(single(op, op, [quant_inputs(3, 4)], tolerance=2))
    sums = quant_inputs(2, 5, 3)
    for attrs in [{}, {"exclusive": 1}, {"reverse": 1}, {"exclusive": 1, "reverse": 1}]:
        node = helper.make_node("CumSum", ["x", "axis"], ["y"], name="/CumSum", **attrs)
        tag = "_".join(attrs) or "inclusive"
        cases.append((f"CumSum_{tag}", model([node], [tensor_info("x", sums)], [out()],
                                             [init("axis", np.array(1, np.int64))], 13), {"x": sums}, 4))
    image = quant_inputs(1, 2, 4, 5, spread=1.0)
    empty = init("roi", np.zeros(0, np.float32))
    for tag, attrs, scales, sizes, tolerance in [
            ("nearest_up", {"mode": "nearest"}, [1, 1, 2, 1.5], None, 0),
            ("nearest_asymmetric_floor", {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                                          "nearest_mode": "floor"}, [1, 1, 2, 2], None, 0),
            ("linear_down", {"mode": "linear"}, [1, 1, 0.5, 0.6], None, 16),
            ("linear_align_corners", {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
             None, [1, 2, 7, 3], 16),
            ("cubic_up", {"mode": "cubic"}, [1, 1, 1.5, 2], None, 16)]:
        inits = [empty, init("scales", np.array(scales or [], np.float32))]
        names = ["x", "roi", "scales"]
        if sizes:
            inits.append(init("sizes", np.array(sizes, np.int64)))
            names.append("sizes")
        node = helper.make_node("Resize", names, ["y"], name="/Resize", **attrs)
        cases.append((f"Resize_{tag}", model([node], [tensor_info("x", image)], [out()], inits, 13), {"x": image}, tolerance))
    return cases
