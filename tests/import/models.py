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
    dtype = {np.float32: F, np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL}[array.dtype.type]
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


def all_cases():
    return (elementwise_cases() + contraction_cases() + layout_cases() +
            [mlp_case(), mlp_case(True), transformer_case(), transformer_case(True)])
