"""presk generate: deterministic text, --compare f64 against itself without a flip, bf16
against f64 with its first divergence reported, and the coded errors."""
import json
import sys
import unittest

import tiny_model

PRESK, SOURCE = sys.argv[1], sys.argv[2]
MODEL = None


def generate(*args, check=True):
    _, program, weights = MODEL
    return tiny_model.run(PRESK, "generate", program, *tiny_model.BINDINGS, "--weights", weights, *args, check=check)


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
