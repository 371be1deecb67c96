"""presk export c --entry decode's generate.c, compiled with the system's cc, prints the text
`presk generate` prints for the same weights, prompt, tokens and realization, byte for byte: f32,
bf16, and a realization presk solve wrote for `loss` (mapped onto decode's twin sites by both)."""
import os
import subprocess
import sys
import unittest

PRESK, SOURCE = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SOURCE, "tests", "serve"))
import tiny_model  # noqa: E402

MODEL = None


class GenerateC(unittest.TestCase):
    def generate_both(self, realize, prompt, tokens):
        folder, program, weights = MODEL
        out = os.path.join(folder, "c_" + realize.replace("@", "").replace("/", "_"))
        tiny_model.run(PRESK, "export", "c", program, "--entry", "decode", *tiny_model.BINDINGS, "--realize", realize, "--out", out)
        binary = os.path.join(out, "generate")
        built = subprocess.run(["cc", "-std=c99", "-O2", "-ffp-contract=off", "-Wall", "-Wextra", os.path.join(out, "generate.c"),
                                "-lm", "-o", binary], capture_output=True, text=True)
        self.assertEqual(built.returncode, 0, built.stderr)
        self.assertEqual(built.stderr, "", "warnings in generate.c")
        c = subprocess.run([binary, weights, prompt, str(tokens)], capture_output=True, timeout=60)
        self.assertEqual(c.returncode, 0, c.stderr)
        presk = subprocess.run([PRESK, "generate", program, *tiny_model.BINDINGS, "--weights", weights, "--prompt", prompt,
                                "--tokens", str(tokens), "--realize", realize], capture_output=True, timeout=120)
        self.assertEqual(presk.returncode, 0, presk.stderr)
        return c.stdout, presk.stdout

    def test_f32_and_bf16(self):
        for realize in ("f32", "bf16"):
            c, presk = self.generate_both(realize, "the c", 11)
            self.assertEqual(c, presk, realize)
            self.assertEqual(len(c), 17)

    def test_a_solved_realization(self):
        folder, program, weights = MODEL
        envelope, solved = os.path.join(folder, "envelope.json"), os.path.join(folder, "solved.json")
        tiny_model.run(PRESK, "calibrate", "--precision", program, "--entry", "loss", *tiny_model.BINDINGS, "--weights", weights,
                       "--data", os.path.join(folder, "data", "train.safetensors"), "--samples", "2", "--bits", "128",
                       "--out", envelope)
        tiny_model.run(PRESK, "solve", program, *tiny_model.BINDINGS, "--precision", envelope, "--budget", "1e-2", "--out", solved)
        c, presk = self.generate_both("@" + solved, "at ", 13)
        self.assertEqual(c, presk)

    def test_refusals(self):
        folder, program, weights = MODEL
        c, _ = self.generate_both("f32", "the", 1)
        binary = os.path.join(folder, "c_f32", "generate")
        for args in (["the", "30"], ["xyz", "3"], ["", "2"]):
            result = subprocess.run([binary, weights, *args], capture_output=True, timeout=60)
            self.assertEqual(result.returncode, 1, args)
            self.assertNotEqual(result.stderr, b"")


if __name__ == "__main__":
    MODEL = tiny_model.build(PRESK, SOURCE)
    unittest.main(argv=[sys.argv[0]])
