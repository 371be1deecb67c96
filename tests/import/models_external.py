"""Group `external` (docs/import.md, "Large models"): a model saved with its initializers in an
external data file, imported with each parameter in its own type — F32 as F32, DOUBLE as F64,
BFLOAT16 as BF16 (2 bytes a value, behind a Cast to FLOAT too), FLOAT16 widened to F32 (presk's
safetensors reader takes no F16) — and its outputs compared with ONNX Runtime's, which reads
the same external file."""
import json
import struct

import numpy as np
from onnx import TensorProto, helper

from models import model, normal, tensor_info

RNG = np.random.default_rng(59)


def bfloat16_tensor(name, values):
    """A BFLOAT16 initializer of `values` (float32, their low 16 bits dropped: exact bf16 values)."""
    bits = (np.ascontiguousarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return helper.make_tensor(name, TensorProto.BFLOAT16, list(values.shape), bits.tobytes(), raw=True)


def raw_tensor(name, values, data_type):
    return helper.make_tensor(name, data_type, list(values.shape), np.ascontiguousarray(values).tobytes(), raw=True)


def mixed_types_case():
    """y = Cast(Cast(x0 · w32 + Cast(w16) + x0 · Cast(wbf), DOUBLE) + w64, FLOAT)."""
    x = normal(2, 4)
    w32, w16 = normal(4, 3), normal(3).astype(np.float16)
    wbf = (normal(4, 3).view(np.uint32) & 0xFFFF0000).view(np.float32)
    w64 = RNG.standard_normal(3)
    node = lambda op, ins, out, **kw: helper.make_node(op, ins, [out], name=f"/{out}", **kw)
    nodes = [node("MatMul", ["x0", "w32"], "m1"), node("Cast", ["w16"], "c16", to=TensorProto.FLOAT),
             node("Add", ["m1", "c16"], "a1"), node("Cast", ["wbf"], "cbf", to=TensorProto.FLOAT),
             node("MatMul", ["x0", "cbf"], "m2"), node("Add", ["a1", "m2"], "a2"),
             node("Cast", ["a2"], "d", to=TensorProto.DOUBLE), node("Add", ["d", "w64"], "a3"),
             node("Cast", ["a3"], "y", to=TensorProto.FLOAT)]
    initializers = [raw_tensor("w32", w32, TensorProto.FLOAT), raw_tensor("w16", w16, TensorProto.FLOAT16),
                    bfloat16_tensor("wbf", wbf), raw_tensor("w64", w64, TensorProto.DOUBLE)]
    made = model(nodes, [tensor_info("x0", x)], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                 initializers)
    # The Casts of w16 and wbf are folded at import: their parameters are named after the Casts.
    dtypes = {"w32": ("F32", 4), "c16": ("F32", 4), "cbf": ("BF16", 2), "w64": ("F64", 8)}
    return ("external_mixed_types", made, {"x0": x}, 2, {"external": True, "weight_dtypes": dtypes})


def external_cases():
    return [mixed_types_case()]


def check_weight_dtypes(path, wanted):
    """Failures: each parameter named in `wanted` ({name: (dtype, bytes a value)}) stored so."""
    with open(path, "rb") as f:
        length = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(length))
    failures = []
    for name, (dtype, width) in wanted.items():
        entry = header.get(name)
        if entry is None:
            failures.append(f"{path}: no tensor {name}")
            continue
        count = int(np.prod(entry["shape"])) if entry["shape"] else 1
        begin, end = entry["data_offsets"]
        print(f"  {name}: {entry['dtype']} {entry['shape']}, {end - begin} bytes")
        if entry["dtype"] != dtype or end - begin != count * width:
            failures.append(f"{name}: stored as {entry['dtype']} in {end - begin} bytes, expected {dtype} ({width} a value)")
    return failures
