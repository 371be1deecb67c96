"""The package as a session user sees it (issue #32): a loaded session (compiled and its weights
converted once) giving run's bits batch after batch, numpy arrays as calibrate's and solve's
data, arrays by argument name, presk.import_onnx, and an imported program without weights=
refused (E1355) rather than run as an all-zero model."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import presk
from conftest import MLP, SMALL

BATCHES = [np.linspace(-1, 1, 8).reshape(2, 4) * k for k in (1.0, -0.5, 3.0)]


def test_a_session_runs_many_batches_with_runs_bits(mlp):
    session = mlp.session("logits", realize="f32")
    for x in BATCHES:
        np.testing.assert_array_equal(session.run(x), mlp.run("logits", x, realize="f32"))
        np.testing.assert_array_equal(session(x=x), mlp.run("logits", x=x, realize="f32"))
    assert session.run(BATCHES[0]).dtype == np.float32


def test_arrays_by_argument_name(mlp):
    x, labels = BATCHES[0], np.array([0, 2])
    by_position = mlp.run("loss", x, labels, bits=128)
    by_name = mlp.run("loss", labels=labels, x=x, bits=128)
    mixed = mlp.run("loss", x, labels=labels, bits=128)
    assert by_name.decimals == by_position.decimals == mixed.decimals
    with pytest.raises(TypeError, match="no argument"):
        mlp.run("loss", x, label=labels, bits=128)
    with pytest.raises(TypeError, match="missing: labels"):
        mlp.run("loss", x=x, bits=128)


def test_numpy_arrays_as_calibrate_data(synthesized, tmp_path):
    x = np.linspace(-2, 2, 3 * 2 * 4).reshape(3, 2, 4)
    from_arrays = synthesized.calibrate("logits", samples=3, bits=128, data={"x": x})
    path = tmp_path / "x.safetensors"
    presk.save_tensors(path, {"x": x})
    from_file = synthesized.calibrate("logits", samples=3, bits=128, data=str(path))
    assert from_arrays.data["samples"] == 3
    assert from_arrays.sites == from_file.sites
    with pytest.raises(TypeError, match="data="):
        synthesized.calibrate("logits", samples=1, data=[x])


def linear_onnx(path, weight):
    """y = x @ W + b, x of symbolic batch `batch`: a two-node ONNX graph."""
    w = numpy_helper.from_array(weight.astype(np.float32), "W")
    b = numpy_helper.from_array(np.arange(weight.shape[1], dtype=np.float32) / 8, "b")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["h"], name="matmul"),
         helper.make_node("Add", ["h", "b"], ["y"], name="add")],
        "linear", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", weight.shape[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", weight.shape[1]])], [w, b])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def test_import_onnx_and_weights_required(tmp_path):
    weight = np.arange(12, dtype=np.float32).reshape(4, 3) / 16 - 0.25
    linear_onnx(tmp_path / "linear.onnx", weight)
    program = presk.import_onnx(tmp_path / "linear.onnx", dims={"batch": 2})
    (entry,) = program.entries
    x = BATCHES[1].astype(np.float32)
    expected = x.astype(np.float64) @ weight.astype(np.float64) + np.arange(3) / 8
    np.testing.assert_allclose(program.run(entry, x, realize="f64"), expected, rtol=1e-12)
    # the same program without its weights: refused, not a silent all-zero model
    bare = presk.Program(program.path)
    for call in (lambda: bare.run(entry, x, realize="f64"), lambda: bare.run(entry, x, bits=64),
                 lambda: bare.session(entry, realize="f32"), lambda: bare.calibrate(entry, samples=1)):
        with pytest.raises(presk.Error) as error:
            call()
        assert error.value.code == "E1355"
        assert "weights=" in str(error.value)
