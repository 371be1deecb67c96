#!/usr/bin/env python3
"""Reads a checkpoint folder written by `presk checkpoint synth` with the standard library
only, as an independent reader would: config.json, the index, every shard's header and
bytes. Checks the Hugging Face Llama layout (names, [out, in] shapes from the config, one
tensor per layer), that the index and the shards agree, and that the bf16 values of the
projections look like normal(0, 0.02) draws and the norms are ones. Exit 1 on a mismatch."""
import json
import math
import os
import struct
import sys


def read_shard(path):
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    return header, data[8 + length:]


def bf16_values(raw):
    for (bits,) in struct.iter_unpack("<H", raw):
        yield struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def expected_shapes(config):
    d, f, v = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    hd = config.get("head_dim", d // config["num_attention_heads"])
    q, kv = config["num_attention_heads"] * hd, config["num_key_value_heads"] * hd
    shapes = {"model.embed_tokens.weight": [v, d], "model.norm.weight": [d], "lm_head.weight": [v, d]}
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes.update({p + "input_layernorm.weight": [d], p + "post_attention_layernorm.weight": [d],
                       p + "self_attn.q_proj.weight": [q, d], p + "self_attn.k_proj.weight": [kv, d],
                       p + "self_attn.v_proj.weight": [kv, d], p + "self_attn.o_proj.weight": [d, q],
                       p + "mlp.gate_proj.weight": [f, d], p + "mlp.up_proj.weight": [f, d],
                       p + "mlp.down_proj.weight": [d, f]})
    return shapes


def main(folder):
    config = json.load(open(os.path.join(folder, "config.json")))
    index = json.load(open(os.path.join(folder, "model.safetensors.index.json")))
    weight_map = index["weight_map"]
    shapes = expected_shapes(config)
    errors = []
    if set(weight_map) != set(shapes):
        errors.append(f"tensors differ from the Llama layout: {sorted(set(weight_map) ^ set(shapes))}")
    total, seen = 0, set()
    for shard in sorted(set(weight_map.values())):
        header, data = read_shard(os.path.join(folder, shard))
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            seen.add(name)
            if weight_map.get(name) != shard:
                errors.append(f"{name} is in {shard}, the index says {weight_map.get(name)}")
            if entry["dtype"] != "BF16" or entry["shape"] != shapes.get(name):
                errors.append(f"{name}: {entry['dtype']} {entry['shape']}, expected BF16 {shapes.get(name)}")
                continue
            begin, end = entry["data_offsets"]
            total += end - begin
            values = list(bf16_values(data[begin:end]))
            if "norm" in name:
                if any(x != 1.0 for x in values):
                    errors.append(f"{name}: a norm's weight is not all ones")
                continue
            mean = sum(values) / len(values)
            std = math.sqrt(sum(x * x for x in values) / len(values))
            if abs(mean) > 0.003 or abs(std - 0.02) > 0.001:
                errors.append(f"{name}: mean {mean:.5f}, deviation {std:.5f}; expected about 0 and 0.02")
    if seen != set(weight_map):
        errors.append(f"the index lists tensors no shard holds: {sorted(set(weight_map) - seen)}")
    if index["metadata"]["total_size"] != total:
        errors.append(f"total_size {index['metadata']['total_size']}, the shards hold {total} bytes")
    for error in errors:
        print(error)
    print(f"{len(seen)} tensors in {len(set(weight_map.values()))} shards, {total} bytes: "
          + ("ok" if not errors else f"{len(errors)} errors"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
