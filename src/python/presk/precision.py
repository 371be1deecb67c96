"""The precision tools from Python, each the command of the same name run in-process with
--json (docs/precision.md): calibrate returns a presk.Envelope, check the bound report, solve a
presk.Solution (the realization and the report), explain each decision, quantize the parameter
table or a realization's split. Their errors are the commands' (presk.Error with its code)."""
import json
import os
import tempfile

from presk import _files, _presk


def _command(args):
    code, out = _presk.command([str(a) for a in args])
    return code, (json.loads(out) if out.strip() else None)


def _copy_to(current, path):
    """Copies the file at `current` to `path` atomically (nothing when they are one file); the new path."""
    path = os.fspath(path)
    if os.path.abspath(path) != os.path.abspath(current):
        with open(current) as stream:
            _files.write_atomically(path, stream.read())
    return path


class Envelope:
    """The magnitude envelope of an entry (presk calibrate --precision): `data` is the file's
    JSON (every field: docs/precision.md), `report` what calibrate printed (--json), `path` the
    file it lives in (a scratch file until save())."""

    def __init__(self, path, report=None):
        self.path = os.fspath(path)
        self.report = report
        with open(self.path) as stream:
            self.data = json.load(stream)

    @classmethod
    def load(cls, path):
        """An envelope file written by presk calibrate (or Envelope.save)."""
        return cls(path)

    def save(self, path):
        """Writes the envelope to `path`, atomically; the envelope then lives there."""
        self.path = _copy_to(self.path, path)
        return self.path

    @property
    def sites(self):
        return self.data["sites"]

    def __repr__(self):
        return "presk.Envelope(%r, entry=%r, %d sites, %d samples)" % (
            self.path, self.data.get("entry"), len(self.data.get("sites", [])), self.data.get("samples", 0))


class Solution:
    """A solve's result: `realization` (the file's JSON: its types and its record under
    "solve"), `report` (what presk solve --json prints), `inside` (the measured gap is within the
    budget), `path` (the realization file; a scratch file until save()). Pass it as realize=."""

    def __init__(self, path, report, inside):
        self.path = path
        self.report = report
        self.inside = inside
        with open(path) as stream:
            self.realization = json.load(stream)

    def save(self, path):
        """Writes the realization to `path`, atomically; the solution then lives there."""
        self.path = _copy_to(self.path, path)
        return self.path

    def summary(self):
        """One row per value of the solve (its record): {"kind" (site or parameter), "key", "op",
        "type" (its shape), "final" (the type chosen), "elements", "bytes", "term" (its first-order
        share of the estimate)}."""
        keys = ("kind", "key", "op", "type", "final", "elements", "bytes", "term")
        return [{k: value.get(k) for k in keys} for value in self.realization["solve"]["values"]]

    def __repr__(self):
        return "presk.Solution(%r, inside=%s)" % (self.path, self.inside)


def _envelope_path(envelope, folder):
    if isinstance(envelope, Envelope):
        return envelope.path
    if isinstance(envelope, (str, os.PathLike)):
        return os.fspath(envelope)
    raise TypeError("envelope takes a presk.Envelope or an envelope file's path, not %s" % type(envelope).__name__)


def _options(pairs):
    """["--name", value…] for every pair whose value is not None (True: the flag alone)."""
    args = []
    for name, value in pairs:
        if value is None or value is False:
            continue
        args += [name] if value is True else [name, value]
    return args


def calibrate(self, entry, samples, bits=256, *, data=None, offset=None, token_range=None, out=None):
    """Measures the envelope of `entry` on `samples` samples on the exact reference at `bits`
    (of `data` from `offset`: a safetensors file, or {argument name: numpy array of shape
    [samples, …]}; else synthesized from the program's seed) and
    returns a presk.Envelope, written to `out` (default: a scratch file; Envelope.save keeps it)."""
    path = os.fspath(out) if out is not None else os.path.join(self._scratch_folder(), "envelope-%s.json" % entry)
    args = ["calibrate", "--precision"] + self._run_arguments() + [
        "--entry", entry, "--samples", samples, "--bits", bits, "--out", path, "--seed", self.seed, "--json", "--quiet"]
    args += _options([("--data", self._data_argument(data)), ("--offset", offset), ("--token-range", token_range)])
    _, report = _command(args)
    return Envelope(path, report)


def check(self, envelope, realize, *, model="cond", measure=False, sites=10):
    """The first-order bound of the envelope's entry under `realize`, conditional on `envelope`
    (presk check --json: {"bounds": [{"model", "absolute", "relative", "sites"}…], …}); with
    measure=True also the measured gap ("measured")."""
    folder = self._scratch_folder()
    args = ["check", "--precision", _envelope_path(envelope, folder)] + self._run_arguments() + [
        "--realize", _files.realize_argument(realize, folder), "--model", model, "--sites", sites, "--json"]
    args += _options([("--measure", bool(measure))])
    return _command(args)[1]


def solve(self, envelope, budget=None, *, budget_abs=None, menu=None, rounding=None, estimate=None, narrow=None,
          margin=None, heldout=None, min_gain=None, exhaustive=False, data=None, out=None):
    """The cheapest realization the measurement accepts within `budget` (relative to the
    output's largest magnitude) or `budget_abs` (default: the entry's precision clause), on
    `envelope` (presk solve; the options are its own, docs/precision.md): a presk.Solution."""
    folder = self._scratch_folder()
    path = os.fspath(out) if out is not None else os.path.join(folder, "realization-solve-%d.json" % len(os.listdir(folder)))
    args = ["solve", "--precision", _envelope_path(envelope, folder)] + self._run_arguments() + [
        "--out", path, "--json", "--quiet"]
    args += _options([("--budget", budget), ("--budget-abs", budget_abs), ("--menu", menu), ("--rounding", rounding),
                      ("--estimate", estimate), ("--narrow", narrow), ("--margin", margin), ("--heldout", heldout),
                      ("--min-gain", min_gain), ("--exhaustive", bool(exhaustive)), ("--data", self._data_argument(data))])
    code, report = _command(args)
    return Solution(path, report, code == 0)


def quantize(self, entry=None, *, realize=None, samples=None, bits=None, data=None):
    """Without `realize`: every real parameter's bytes at rest per type and its scale axis
    (presk quantize --list --json, a list of dicts). With `entry` and `realize`: the gap of the
    realization split into representation and arithmetic (a dict)."""
    args = ["quantize"] + self._run_arguments() + ["--seed", self.seed, "--json"]
    args += _options([("--entry", entry)])
    if realize is None:
        args += ["--list"]
    else:
        args += ["--realize", _files.realize_argument(realize, self._scratch_folder())]
        args += _options([("--samples", samples), ("--bits", bits), ("--data", self._data_argument(data))])
    return _command(args)[1]


def explain(realization, values=None):
    """Each value of a solve with its decision and reasons (presk explain --json: a list of
    {"kind", "key", "op", "type", "decision", "reasons", "moves"}); `realization` is a
    presk.Solution, a realization file's path or its JSON dict; `values` keeps those keys alone."""
    if isinstance(realization, dict):
        with tempfile.TemporaryDirectory(prefix="presk-") as folder:
            path = os.path.join(folder, "realization.json")
            _files.write_atomically(path, json.dumps(realization))
            return explain(path, values)
    if isinstance(realization, Solution):
        path = realization.path
    elif isinstance(realization, (str, os.PathLike)):
        path = os.fspath(realization)
    else:
        raise TypeError("explain takes a presk.Solution, a realization file's path or its dict, not %s"
                        % type(realization).__name__)
    args = ["explain", path, "--json"]
    for value in values or []:
        args += ["--value", value]
    return _command(args)[1]
