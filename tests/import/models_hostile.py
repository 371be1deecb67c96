"""Hostile models (docs/import.md, "Hostile models"): each refused with its code, nothing written,
nothing read outside the model's folder; and external data read as the model's own.

  cyclic graph, a node reading an undefined tensor, a graph input of 2^41 elements, a model nested
  10 000 deep (If subgraphs; sequence types), external data outside the model's folder (`..`, an
  absolute path, a link out), a truncated and a missing external file.

`/usr/bin/python3 models_hostile.py CORPUS_DIR` writes them as seeds of fuzz_onnx_import (whose
external data folder holds one 64-byte file, weights.bin: fuzz/fuzz_onnx_import.cpp)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

F = TensorProto.FLOAT


def varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number, payload):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def nested(levels, innermost=b""):
    """levels: (head bytes, field number of the nested message), outermost first; each message is
    its head then the next level as that field. Built from lengths, in linear time."""
    lengths = [len(innermost)]
    for head, number in reversed(levels):
        inner = lengths[-1]
        lengths.append(len(head) + len(varint(number << 3 | 2)) + len(varint(inner)) + inner)
    lengths = lengths[::-1]  # lengths[i]: the message of level i; lengths[-1] the innermost
    parts = []
    for i, (head, number) in enumerate(levels):
        parts.append(head + varint(number << 3 | 2) + varint(lengths[i + 1]))
    return b"".join(parts) + innermost


def model_bytes(graph_bytes, opset=13):
    """A ModelProto (ir_version 8, the default opset) around serialized GraphProto bytes."""
    opset_id = helper.make_opsetid("", opset).SerializeToString()
    return varint(1 << 3) + varint(8) + field(8, opset_id) + field(7, graph_bytes)


def nested_if(depth):
    """If nodes, each holding the next as its then_branch, `depth` graphs deep."""
    if_node = field(4, b"If")                       # NodeProto.op_type
    attribute = field(1, b"then_branch") + varint(20 << 3) + varint(5)  # name, type GRAPH
    levels = []
    for _ in range(depth):
        levels += [(b"", 1), (if_node, 5), (attribute, 6)]  # GraphProto.node, NodeProto.attribute, .g
    return model_bytes(nested(levels))


def nested_sequence(depth):
    """A graph input whose type is a sequence of a sequence of … `depth` deep (6 bytes a level)."""
    levels = [(field(1, b"x"), 2)]  # ValueInfoProto: name, type
    levels += [(b"", 4), (b"", 1)] * depth  # TypeProto.sequence_type, TypeProto.Sequence.elem_type
    return model_bytes(field(11, nested(levels)))  # GraphProto.input


def small_model(nodes, inputs, initializers=()):
    return models.model(nodes, inputs, [models.out()], initializers)


def external_model(location, offset=0, length=None, count=6):
    """y = x0 + w, w (count floats) kept in the external file `location`."""
    w = TensorProto(name="w", data_type=F, dims=[count], data_location=TensorProto.EXTERNAL)
    entries = [("location", location), ("offset", str(offset))] + ([("length", str(length))] if length is not None else [])
    for key, value in entries:
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    node = helper.make_node("Add", ["x0", "w"], ["y"], name="add")
    return small_model([node], [helper.make_tensor_value_info("x0", F, [count])], [w])


def refused_cases(outside):
    """(name, model bytes, {file name in the model's folder: bytes}, code, message fragments).
    `outside`: an existing file outside every case's folder (an absolute path)."""
    x = models.normal(2, 3)
    relu = lambda i, o, n: helper.make_node("Relu", [i], [o], name=n)
    cyclic = small_model([relu("b", "a", "first"), relu("a", "b", "second"), relu("a", "y", "out")],
                        [models.tensor_info("x0", x)])
    undefined = small_model([relu("nowhere", "y", "reads_nothing")], [models.tensor_info("x0", x)])
    huge = small_model([relu("x0", "y", "relu")], [helper.make_tensor_value_info("x0", F, [1 << 20, 1 << 20, 2])])
    weights = np.arange(6, dtype=np.float32).tobytes()
    return [
        ("cyclic_graph", cyclic.SerializeToString(), {}, "E1309", ["topological order"]),
        ("undefined_tensor", undefined.SerializeToString(), {}, "E1309", ["nowhere"]),
        ("input_2e41_elements", huge.SerializeToString(), {}, "E1316", []),
        ("nested_if_10000_deep", nested_if(10000), {}, "E1301", []),
        ("nested_sequence_10000_deep", nested_sequence(10000), {}, "E1301", []),
        ("external_outside_folder", external_model("../outside.bin").SerializeToString(), {}, "E1357",
         ["leaves that folder"]),
        ("external_absolute", external_model(outside).SerializeToString(), {}, "E1357", ["absolute"]),
        ("external_link_out", external_model("link.bin").SerializeToString(), {"link.bin": outside}, "E1357",
         ["leaves that folder"]),
        ("external_truncated", external_model("weights.bin").SerializeToString(), {"weights.bin": weights[:20]},
         "E1358", ["holds 20 bytes", "needs 24"]),
        ("external_beyond_offset", external_model("weights.bin", offset=8).SerializeToString(),
         {"weights.bin": weights}, "E1358", ["from offset 8"]),
        ("external_missing", external_model("missing.bin").SerializeToString(), {}, "E1358", ["missing"]),
        ("shrink_nan_bias", small_model([helper.make_node("Shrink", ["x0"], ["y"], name="shrink", bias=float("nan"))],
                                        [models.tensor_info("x0", x)]).SerializeToString(), {}, "E1360",
         ["bias is NaN"]),
        ("leaky_relu_infinite_alpha",
         small_model([helper.make_node("LeakyRelu", ["x0"], ["y"], name="leaky", alpha=float("inf"))],
                     [models.tensor_info("x0", x)]).SerializeToString(), {}, "E1360", ["alpha is +inf"]),
        ("external_wrong_length", external_model("weights.bin", length=20).SerializeToString(),
         {"weights.bin": weights}, "E1309", ["20 bytes long"]),
    ]


def check(args, run, presk_outputs):
    """Each refused case with its code and message, no output written; then the external-data
    model imported and run against the same model with its data inside (identical outputs), and
    a chain of 10 000 nodes imported. run(command, expect_ok): subprocess result;
    presk_outputs(folder, name, data): the exact outputs of folder/name.psk. Returns failures."""
    failures = []
    outside = os.path.join(args.work, "outside.bin")
    with open(outside, "wb") as f:
        f.write(np.arange(6, dtype=np.float32).tobytes())
    for name, data, files, code, fragments in refused_cases(outside):
        folder = os.path.join(args.work, name)
        os.makedirs(folder, exist_ok=True)
        for file, content in files.items():
            path = os.path.join(folder, file)
            if os.path.lexists(path):
                os.remove(path)
            if file == "link.bin":
                os.symlink(content, path)
            else:
                with open(path, "wb") as f:
                    f.write(content)
        with open(os.path.join(folder, "model.onnx"), "wb") as f:
            f.write(data)
        psk = os.path.join(folder, "model.psk")
        result = run([args.presk, "import", os.path.join(folder, "model.onnx"), "--out", psk,
                      "--weights-out", os.path.join(folder, "model.safetensors")], expect_ok=False)
        refused = result.returncode == 1 and f"error[{code}]" in result.stderr
        print(f"{name:<28} {code}  {'refused' if refused else 'NOT REFUSED'}: {result.stderr.strip().splitlines()[-1:]}")
        if not refused or os.path.exists(psk):
            failures.append(f"{name}: expected {code} and no output, got exit {result.returncode}: {result.stderr}")
        failures += [f"{name}: the message does not say {fragment!r}: {result.stderr}"
                     for fragment in fragments if fragment not in result.stderr]
    failures += check_external(args, run, presk_outputs)
    failures += check_chain(args, run)
    return failures


def check_external(args, run, presk_outputs):
    """A model saved by onnx.save(save_as_external_data=True) beside one with its data inside."""
    w = models.normal(4, 3)
    made = small_model([helper.make_node("MatMul", ["x0", "w"], ["y"], name="matmul")],
                      [models.tensor_info("x0", models.normal(2, 4))], [models.init("w", w)])
    results = {}
    for kind in ("inside", "external"):
        folder = os.path.join(args.work, f"data_{kind}")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "model.onnx")
        onnx.save_model(made, path, save_as_external_data=kind == "external", all_tensors_to_one_file=True,
                        location="model.weights", size_threshold=0)
        if kind == "external" and not os.path.exists(os.path.join(folder, "model.weights")):
            return ["onnx.save_model wrote no external data file"]
        run([args.presk, "import", path, "--out", os.path.join(folder, "model.psk"),
             "--weights-out", os.path.join(folder, "model.safetensors")])
        results[kind] = presk_outputs(folder, "model", {"x0": np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)})
    expected = np.linspace(-1, 1, 8).reshape(2, 4).astype(np.float32).astype(np.float64) @ w.astype(np.float64)
    print(f"external data: {results['external'][:3]}… (inside: {results['inside'][:3]}…)")
    if results["inside"] != results["external"] or not np.allclose(results["external"], expected.ravel(), rtol=1e-12):
        return [f"the external-data import gives {results['external']}, the inline one {results['inside']}"]
    return []


def check_chain(args, run, length=10000):
    """A chain of `length` Relu nodes: imported (a program of as many lets), not a crash."""
    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}" if i + 1 < length else "y"], name=f"r{i}")
             for i in range(length)]
    made = small_model(nodes, [helper.make_tensor_value_info("v0", F, [2])])
    path = os.path.join(args.work, "chain.onnx")
    with open(path, "wb") as f:
        f.write(made.SerializeToString())
    result = run([args.presk, "import", path, "--out", os.path.join(args.work, "chain.psk"),
                  "--weights-out", os.path.join(args.work, "chain.safetensors")], expect_ok=False)
    print(f"chain of {length} nodes: exit {result.returncode}")
    return [] if result.returncode == 0 else [f"a chain of {length} nodes: exit {result.returncode}: {result.stderr[-500:]}"]


def write_seeds(corpus):
    """The hostile models as fuzz seeds; external data names the fuzzer's weights.bin (64 bytes)."""
    x = models.normal(2, 3)
    relu = lambda i, o, n: helper.make_node("Relu", [i], [o], name=n)
    seeds = {
        "cyclic_graph.onnx": small_model([relu("b", "a", "first"), relu("a", "b", "second"), relu("a", "y", "out")],
                                        [models.tensor_info("x0", x)]).SerializeToString(),
        "undefined_tensor.onnx": small_model([relu("nowhere", "y", "r")], [models.tensor_info("x0", x)]).SerializeToString(),
        "input_2e41_elements.onnx": small_model([relu("x0", "y", "r")],
                                               [helper.make_tensor_value_info("x0", F, [1 << 20, 1 << 20, 2])]).SerializeToString(),
        "nested_sequence_10000_deep.onnx": nested_sequence(10000),
        "external_data.onnx": external_model("weights.bin", offset=16, length=24).SerializeToString(),
        "external_outside_folder.onnx": external_model("../weights.bin").SerializeToString(),
        "external_absolute.onnx": external_model("/tmp/presk_fuzz_onnx_external/weights.bin").SerializeToString(),
        "external_truncated.onnx": external_model("weights.bin", offset=48).SerializeToString(),
        "external_missing.onnx": external_model("missing.bin").SerializeToString(),
    }
    for name, data in seeds.items():
        with open(os.path.join(corpus, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    write_seeds(sys.argv[1])
