"""presk generate: deterministic text, --compare f64 against itself without a flip, bf16
against f64 with its first divergence reported, and the coded errors."""
import json
import os
import struct
import sys
import unittest

import tiny_model

PRESK, SOURCE = sys.argv[1], sys.argv[2]
MODEL = None


def generate(*args, check=True):
    _, program, weights = MODEL
    return tiny_model.run(PRESK, "generate", program, *tiny_model.BINDINGS, "--weights", weights, *args, check=check)


def write_tokens(path, tokens):
    header = json.dumps({"tokens": {"dtype": "I64", "shape": [len(tokens)], "data_offsets": [0, 8 * len(tokens)]}}).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + struct.pack(f"<{len(tokens)}q", *tokens))


def write_arguments(path, tensors):
    """tensors: (name, dtype, shape, packed little-endian bytes) in order."""
    header, offset, payload = {}, 0, b""
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        payload += data
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + payload)


def read_raw(path, name):
    """A tensor's bytes."""
    with open(path, "rb") as f:
        raw = f.read()
    size = struct.unpack("<Q", raw[:8])[0]
    begin, end = (8 + size + o for o in json.loads(raw[8:8 + size])[name]["data_offsets"])
    return raw[begin:end]


def read_rows(path, name, width):
    with open(path, "rb") as f:
        raw = f.read()
    size = struct.unpack("<Q", raw[:8])[0]
    entry = json.loads(raw[8:8 + size])[name]
    begin, end = (8 + size + o for o in entry["data_offsets"])
    formats = {"F64": "d", "F32": "f"}
    if entry["dtype"] == "BF16":
        values = [struct.unpack("<f", b"\0\0" + raw[i:i + 2])[0] for i in range(begin, end, 2)]
    else:
        code = formats[entry["dtype"]]
        values = list(struct.unpack(f"<{(end - begin) // struct.calcsize(code)}{code}", raw[begin:end]))
    return [values[i:i + width] for i in range(0, len(values), width)]


class Generate(unittest.TestCase):
    def test_greedy_text_is_the_same_every_run(self):
        first = generate("--prompt", "the c", "--tokens", "10").stdout
        self.assertTrue(first.startswith("the c"), first)
        self.assertEqual(len(first.rstrip("\n")), 15)
        self.assertEqual(generate("--prompt", "the c", "--tokens", "10", "--threads", "2").stdout, first)

    def test_sampling_is_deterministic_under_a_seed(self):
        args = ["--prompt", "the", "--tokens", "12", "--temperature", "1.5", "--seed", "7", "--json"]
        a = json.loads(generate(*args).stdout)
        self.assertEqual(json.loads(generate(*args).stdout), a)
        texts = {json.loads(generate(*args[:-3], "--seed", str(s), "--json").stdout)["text"] for s in range(6)}
        self.assertGreater(len(texts), 1, "six seeds gave one text: the sampler ignores its seed")

    def test_f64_against_itself_never_flips(self):
        report = json.loads(generate("--prompt", "the", "--tokens", "13", "--realize", "f64", "--compare", "f64", "--json").stdout)
        self.assertEqual(report["flips"], 0)
        self.assertIsNone(report["first_divergence"])
        self.assertEqual(report["largest_gap"], 0)
        self.assertEqual(len(report["steps"]), 13)

    def test_bf16_against_f64_reports_its_gap_and_first_divergence(self):
        report = json.loads(generate("--prompt", "the", "--tokens", "13", "--realize", "f64", "--compare", "bf16", "--json").stdout)
        self.assertGreater(report["largest_gap"], 0)
        flips = [i for i, s in enumerate(report["steps"]) if s["flip"]]
        self.assertEqual(report["flips"], len(flips))
        self.assertEqual(report["first_divergence"], flips[0] if flips else None)
        table = generate("--prompt", "the", "--tokens", "13", "--realize", "f64", "--compare", "bf16").stdout
        self.assertIn("first divergence: " + (f"step {flips[0]}" if flips else "none"), table)

    def test_exact_compare_runs(self):
        report = json.loads(generate("--prompt", "th", "--tokens", "3", "--realize", "f64", "--compare", "exact", "--json").stdout)
        self.assertLess(report["largest_gap"], 1e-9)

    def test_a_solved_realization_generates_as_the_forward_computes(self):
        # A realization presk solve writes for `loss` names full-sequence sites only; generate
        # maps them onto decode's (src/generate/twins.h). Greedy: each token is the argmax of the
        # forward `logits` row under the same realization (the bits: tests/decode/twins_test.cpp).
        folder, program, weights = MODEL
        solved = self.solved()
        report = json.loads(generate("--prompt", "the c", "--tokens", "11", "--realize", "@" + solved, "--json").stdout)
        window = (report["prompt"] + report["text"])[:16]
        vocabulary = sorted(set(tiny_model.TEXT))
        tokens = [vocabulary.index(c) for c in window]
        self.assertEqual(len(tokens), 16)
        inputs, outputs = os.path.join(folder, "window.safetensors"), os.path.join(folder, "logits.safetensors")
        write_tokens(inputs, tokens)
        tiny_model.run(PRESK, "run", program, "--entry", "logits", *tiny_model.BINDINGS, "--weights", weights,
                       "--realize", "@" + solved, "--data", inputs, "--out", outputs)
        rows = read_rows(outputs, "logits", 11)
        for t in range(len(report["prompt"]) - 1, 15):
            row = rows[t]
            self.assertEqual(tokens[t + 1], row.index(max(row)), f"position {t}")

    def test_run_maps_a_solved_realization_onto_decode(self):
        # presk run --entry decode --realize @solved types decode's twin sites as generate does:
        # the first step (empty caches, position 0) is row 0 of `logits` under the same
        # realization, bit for bit, for every first token.
        folder, program, weights = MODEL
        solved = self.solved()
        vocabulary = sorted(set(tiny_model.TEXT))
        window = [vocabulary.index(c) for c in "the cat sat on t"]
        inputs, outputs = os.path.join(folder, "row0.safetensors"), os.path.join(folder, "row0_logits.safetensors")
        write_tokens(inputs, window)
        tiny_model.run(PRESK, "run", program, "--entry", "logits", *tiny_model.BINDINGS, "--weights", weights,
                       "--realize", "@" + solved, "--data", inputs, "--out", outputs)
        expected = read_raw(outputs, "logits")
        row = len(expected) // 16
        cache = struct.pack("<256d", *([0.0] * 256))  # R[L, H, T, D / H] = [2, 2, 16, 4]
        step, result = os.path.join(folder, "step.safetensors"), os.path.join(folder, "step_out.safetensors")
        write_arguments(step, [("kc", "F64", [2, 2, 16, 4], cache), ("vc", "F64", [2, 2, 16, 4], cache),
                               ("at", "I64", [], struct.pack("<q", 0)), ("token", "I64", [1], struct.pack("<q", window[0]))])
        tiny_model.run(PRESK, "run", program, "--entry", "decode", *tiny_model.BINDINGS, "--weights", weights,
                       "--realize", "@" + solved, "--data", step, "--out", result)
        self.assertEqual(read_raw(result, "decode#0"), expected[:row])

    def solved(self):
        """A realization presk solve writes for `loss` (full-sequence sites only), made once."""
        folder, program, weights = MODEL
        solved = os.path.join(folder, "solved.json")
        if os.path.exists(solved):
            return solved
        data = os.path.join(folder, "data", "train.safetensors")
        envelope = os.path.join(folder, "envelope.json")
        tiny_model.run(PRESK, "calibrate", "--precision", program, "--entry", "loss", *tiny_model.BINDINGS, "--weights", weights,
                       "--data", data, "--samples", "2", "--bits", "128", "--out", envelope)
        tiny_model.run(PRESK, "solve", program, *tiny_model.BINDINGS, "--precision", envelope, "--budget", "1e-2", "--out", solved)
        return solved

    def test_errors_are_coded(self):
        cases = [(["--prompt", "xyz", "--tokens", "3"], "E1510"),
                 (["--prompt", "the", "--tokens", "20"], "E1514"),
                 (["--prompt", "", "--tokens", "3"], "E1515")]
        for args, code in cases:
            result = generate(*args, check=False)
            self.assertEqual(result.returncode, 1, result.stderr)
            self.assertIn(code, result.stderr)


if __name__ == "__main__":
    MODEL = tiny_model.build(PRESK, SOURCE)
    unittest.main(argv=[sys.argv[0]])
