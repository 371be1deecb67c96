"""presk.Program: a .psk program with its consts, dims and parameters; its entries run exactly
(the MPFR reference, `bits=`) or natively (`realize=`) on numpy arrays."""
import os
import shutil
import tempfile
import weakref

import numpy as np

from presk import _files, _presk


def _bindings(values):
    return ["%s=%d" % (name, value) for name, value in (values or {}).items()]


class Exact:
    """An exact result: `value`, each element rounded to nearest float64 (int64 for Z), and
    `decimals`, each element as a decimal string of the digits the run's bits carry."""

    def __init__(self, value, decimals, bits):
        self.value = value
        self.decimals = np.array(decimals, dtype=object).reshape(value.shape)
        self.bits = bits

    def __array__(self, dtype=None, copy=None):
        return self.value if dtype is None else self.value.astype(dtype)

    def __repr__(self):
        return "presk.Exact(%r, bits=%d)" % (self.value, self.bits)


class Program:
    """A presk program: `Program("model.psk")` reads a file, `Program(source="entry …")` (or a
    text with a newline) takes the text itself. `consts` overrides consts and `dims` binds dims
    ({"B": 4}); `weights` is a safetensors file of its parameters (default: synthesized from
    `seed`, as the commands do); `threads` (default: all cores). The program is compiled at once:
    an error in it raises presk.Error."""

    def __init__(self, program=None, *, source=None, consts=None, dims=None, weights=None, seed=0, threads=None):
        if (program is None) == (source is None):
            raise TypeError("presk.Program takes a path or source= (one of them)")
        if source is None and isinstance(program, str) and "\n" in program:
            source = program
        if source is not None:
            self._scratch = _files.scratch_dir(self)
            self.path = os.path.join(self._scratch, "program.psk")
            _files.write_atomically(self.path, source)
        else:
            self.path = os.fspath(program)
        self.consts = dict(consts or {})
        self.dims = dict(dims or {})
        self.weights = os.fspath(weights) if weights is not None else None
        self.seed = int(seed)
        self.threads = int(threads or 0)
        described = _presk.describe(self.path, _bindings(self.consts), _bindings(self.dims))
        self.entries = described["entries"]
        self.params = described["params"]
        if not hasattr(self, "_scratch"):
            self._scratch = None

    def _scratch_folder(self):
        if self._scratch is None:
            self._scratch = _files.scratch_dir(self)
        return self._scratch

    def run(self, entry, *arrays, bits=None, realize=None, scalar=False, **named):
        """Runs `entry` on `arrays` (one numpy array per argument, in order: float64/float32 for
        R, int64 for Z), or on arrays named by argument (`run("mse", prediction=p, target=t)`).
        With `realize` (a type name "f64"/"f32"/"bf16", a realization dict, a .json path or a
        presk.Solution): natively, returning a numpy array per result in its realized dtype.
        Otherwise exactly, at `bits` (default 256), returning a presk.Exact per result. One
        result is returned as itself, several as a tuple. A program presk import wrote needs
        weights= (presk.Error E1355)."""
        if not self.weights:
            _presk.require_weights(self.path)
        inputs = [np.asarray(a) for a in self._arguments(entry, arrays, named)]
        realize_text = "" if realize is None else _files.realize_argument(realize, self._scratch_folder())
        results = _presk.run(self.path, _bindings(self.consts), _bindings(self.dims), entry, inputs,
                             -1 if bits is None else int(bits), realize_text, bool(scalar), self.weights or "",
                             self.seed, self.threads)
        if realize is None:
            results = [Exact(value, decimals, 256 if bits is None else int(bits)) for value, decimals in results]
        return results[0] if len(results) == 1 else tuple(results)

    def session(self, entry, *, realize, scalar=False):
        """A loaded session of `entry` under `realize` (as run's): the program compiled and its
        parameters converted to their realized types once; session.run(*arrays) then runs a
        batch natively, with the bits run(…, realize=…) gives (like onnxruntime.InferenceSession)."""
        if not self.weights:
            _presk.require_weights(self.path)
        return Session(self, entry, realize, scalar)

    def _arguments(self, entry, arrays, named):
        """The arrays in the entry's order: positional ones first, then those named by argument."""
        if not named:
            return arrays
        names = [a["name"] for a in self.entries[entry]["arguments"]] if entry in self.entries else []
        unknown = sorted(set(named) - set(names))
        if unknown:
            raise TypeError("%s() has no argument %s; its arguments: %s" % (entry, ", ".join(unknown), ", ".join(names)))
        rest = names[len(arrays):]
        missing = [name for name in rest if name not in named]
        if missing or len(named) != len(rest):
            raise TypeError("%s() takes %s; missing: %s" % (entry, ", ".join(names), ", ".join(missing) or "none"))
        return list(arrays) + [named[name] for name in rest]

    def _data_argument(self, data):
        """--data's file: a path as is, or {argument name: numpy array} written to a scratch file
        (an array of the argument's shape, or [samples, …shape])."""
        if data is None or isinstance(data, (str, os.PathLike)):
            return data
        if not isinstance(data, dict):
            raise TypeError("data= takes a safetensors path or {argument name: numpy array}, not %s" % type(data).__name__)
        folder = self._scratch_folder()
        path = os.path.join(folder, "data-%d.safetensors" % len(os.listdir(folder)))
        save_tensors(path, data)
        return path

    def _run_arguments(self):
        """The arguments every command that prepares a run of this program takes."""
        if not self.weights:
            _presk.require_weights(self.path)
        args = [self.path]
        for name, value in self.consts.items():
            args += ["--const", "%s=%d" % (name, value)]
        for name, value in self.dims.items():
            args += ["--dim", "%s=%d" % (name, value)]
        if self.weights:
            args += ["--weights", self.weights]
        if self.threads:
            args += ["--threads", str(self.threads)]
        return args

    # The precision tools (presk/precision.py).
    from presk.precision import calibrate, check, quantize, solve  # noqa: E402  (methods)

    def __repr__(self):
        return "presk.Program(%r, entries=%s)" % (self.path, sorted(self.entries))


class Session:
    """Program.session(entry, realize=…): `run(*arrays, **named)` (or calling it) runs the entry
    natively on a batch, returning what Program.run(entry, …, realize=…) returns, bit for bit,
    without compiling the program or converting its weights again."""

    def __init__(self, program, entry, realize, scalar):
        self.program = program
        self.entry = entry
        realize_text = _files.realize_argument(realize, program._scratch_folder())
        self._native = _presk.NativeSession(program.path, _bindings(program.consts), _bindings(program.dims), entry,
                                            program.weights or "", program.seed, program.threads, realize_text,
                                            bool(scalar))

    def run(self, *arrays, **named):
        inputs = [np.asarray(a) for a in self.program._arguments(self.entry, arrays, named)]
        results = self._native.run(inputs)
        return results[0] if len(results) == 1 else tuple(results)

    __call__ = run

    def __repr__(self):
        return "presk.Session(%r, %r)" % (self.program.path, self.entry)


def load(program=None, **options):
    """presk.load(path or source, consts=…, dims=…, weights=…, seed=…): a presk.Program."""
    return Program(program, **options)


def import_onnx(model, *, dims=None, consts=None, seed=0, threads=None):
    """An ONNX model imported (presk import; docs/import.md) and loaded: a presk.Program of the
    program and the weights presk import wrote, in a scratch folder that lives as long as the
    Program. `dims` binds the model's symbolic input axes ({"batch": 8}) at import."""
    folder = tempfile.mkdtemp(prefix="presk-import-")
    program_path = os.path.join(folder, "model.psk")
    weights_path = os.path.join(folder, "model.safetensors")
    args = ["import", os.fspath(model), "--out", program_path, "--weights-out", weights_path]
    for binding in _bindings(dims):
        args += ["--dim", binding]
    try:
        _presk.command(args)
        program = Program(program_path, consts=consts, weights=weights_path, seed=seed, threads=threads)
    except BaseException:
        shutil.rmtree(folder, True)
        raise
    weakref.finalize(program, shutil.rmtree, folder, True)
    return program


def save_tensors(path, arrays):
    """Writes {name: numpy array} (float64, float32, int64) to a safetensors file, atomically:
    parameters for Program(weights=…), named by their paths (Program.params)."""
    _presk.save_tensors(os.fspath(path), [(name, np.asarray(a)) for name, a in arrays.items()])
