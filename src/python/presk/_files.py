"""Scratch folders that live as long as the object that owns them, atomic writes, and the forms a
realization argument takes (a type name, a dict, a file)."""
import json
import os
import shutil
import tempfile
import weakref


def scratch_dir(owner):
    """A fresh folder removed when `owner` is collected (or at exit)."""
    path = tempfile.mkdtemp(prefix="presk-")
    weakref.finalize(owner, shutil.rmtree, path, True)
    return path


def write_atomically(path, text):
    """Writes `text` to `path` through a temporary file beside it, renamed over it."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".presk-", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def realize_argument(realize, folder):
    """The `--realize` text for `realize`: a type name ("f32") as is, "@file.json" as is, a path
    (str ending in .json, or os.PathLike) as "@path", a dict (a realization's JSON) written to
    `folder` first, or anything with a `.path` (a presk.Solution) as "@" + that path."""
    if hasattr(realize, "path") and hasattr(realize, "realization"):
        return "@" + realize.path
    if isinstance(realize, dict):
        path = os.path.join(folder, "realization-%d.json" % len(os.listdir(folder)))
        write_atomically(path, json.dumps(realize))
        return "@" + path
    if isinstance(realize, os.PathLike):
        return "@" + os.fspath(realize)
    if isinstance(realize, str):
        return "@" + realize if realize.endswith(".json") and not realize.startswith("@") else realize
    raise TypeError("realize= takes a type name (\"f32\"), a realization dict, a .json path or a presk.Solution, "
                    "not %s" % type(realize).__name__)
