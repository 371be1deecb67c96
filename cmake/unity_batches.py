"""Batches for presk's unity build (cmake/presk.cmake, presk_unity_sources).

    unity_batches.py ROOT OUT NAME SIZE RENAMED FILE...   (FILEs relative to ROOT)

Writes each batch of FILEs as OUT/NAME_<i>.cpp (a file that #includes them) and prints the
sources to compile, one a line: those files, and a FILE alone in its batch as ROOT/FILE. Two files go to different batches when
they define the same internal name (in an anonymous namespace, `static`, or a namespace-scope
const/constexpr variable), or one #defines a macro whose name the other uses: in one
translation unit those would be a redefinition (or a silent substitution). The scan is lexical
and conservative (a name defined twice is a conflict even where overloads would coexist);
a collision it misses fails the build loudly: add the file to PRESK_UNITY_ALONE.
RENAMED (comma-separated, PRESK_UNITY_RENAME) are internal names that many files define (each
command's `registration`): no conflict, each file's is renamed by a #define around its
#include. Such a name must appear in no header.
"""
import glob
import math
import os
import re
import sys

WORD = re.compile(r"[A-Za-z_]\w*")
FUNCTION = re.compile(r"^(?:template\s*<.*>\s*)?(?:[\w:<>,*&\s]+?)[\s*&](\w+)\s*\(")
TYPE = re.compile(r"^(?:template\s*<.*>\s*)?(?:struct|class|union|enum(?:\s+class)?)\s+(\w+)")
ALIAS = re.compile(r"^using\s+(\w+)\s*=")
VARIABLE = re.compile(r"^(?:static\s+|inline\s+)*(?:const|constexpr)\b[^=({;]*?\b(\w+)\s*(?:\[[^\]]*\]\s*)*[={;]")
DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)")
UNDEF = re.compile(r"^\s*#\s*undef\s+(\w+)")


def strip(text):
    """The text without comments, string and character literals (lines kept)."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r'R"(\w*)\(.*?\)\1"', lambda m: '""' + "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(?:\\.|[^'\\\n])+'", "' '", text)


def scan(path, header=False):
    """(internal names, macros defined and left defined, words used, the internal names
    qualified by their named namespaces) of one source file; of a header (header=True), the
    names it declares at namespace scope count as internal."""
    with open(path, encoding="utf-8") as f:
        text = strip(f.read())
    names, macros, qualified = set(), set(), set()
    stack = []  # one entry per open brace: ('anon', ''), ('ns', its name) or ('other', '')
    for line in text.split("\n"):
        if m := DEFINE.match(line):
            macros.add(m.group(1))
        if m := UNDEF.match(line):
            macros.discard(m.group(1))
        at_namespace_scope = all(kind != "other" for kind, _ in stack)
        in_anonymous = any(kind == "anon" for kind, _ in stack)
        if at_namespace_scope and line[:1] not in ("", " ", "\t", "#", "}"):
            internal = in_anonymous or line.startswith("static ") or header
            namespace = "::".join(name for kind, name in stack if kind == "ns")
            for pattern in ((FUNCTION, TYPE, ALIAS, VARIABLE) if internal else (VARIABLE,)):
                if (m := pattern.match(line)) and not m.group(1).isupper():  # not TEST(…)
                    names.add(m.group(1))
                    qualified.add(f"{namespace}::{m.group(1)}")
        for m in re.finditer(r"\bnamespace\s*(\w[\w:]*)?\s*(\{)|[{}]", line):
            if m.group(0) == "}":
                if stack:
                    stack.pop()
            elif m.group(0) == "{":
                stack.append(("other", ""))
            else:
                stack.append(("ns", m.group(1)) if m.group(1) else ("anon", ""))
    return names, macros, set(WORD.findall(text)), qualified


def conflict(a, b, renamed):
    return bool((a[0] & b[0]) - renamed) or bool(a[1] & b[2]) or bool(b[1] & a[2])


def header_names(root):
    """The names the project's headers declare at namespace scope, qualified (ns::name)."""
    names = set()
    for path in glob.glob(f"{root}/src/**/*.h", recursive=True) + glob.glob(f"{root}/tests/**/*.h", recursive=True):
        names |= scan(path, header=True)[3]
    return names


def batches(root, size, files, renamed):
    """The files in batches of near-equal size, no two conflicting files in one. A file whose
    internal name a header also declares (an anonymous strides_of beside value.h's) compiles
    alone: in a batch another file may bring that header, and the calls become ambiguous."""
    scans = {f: scan(f"{root}/{f}") for f in files}
    declared = header_names(root)
    alone = [f for f in files if {q for q in scans[f][3] & declared if q.rsplit("::", 1)[1] not in renamed}]
    files = [f for f in files if f not in alone]
    if not files:
        return [[f] for f in alone]
    count = math.ceil(len(files) / size)
    limit = math.ceil(len(files) / count)
    result = [[] for _ in range(count)]
    for f in files:
        for batch in result:
            if len(batch) < limit and not any(conflict(scans[f], scans[g], renamed) for g in batch):
                batch.append(f)
                break
        else:
            result.append([f])
    return [batch for batch in result if batch] + [[f] for f in alone]


def check_renamed(root, renamed):
    """A renamed name must appear in no header of the project (it is renamed file by file)."""
    for name in renamed:
        for path in glob.glob(f"{root}/src/**/*.h", recursive=True) + glob.glob(f"{root}/tests/**/*.h", recursive=True):
            with open(path, encoding="utf-8") as f:
                if re.search(rf"\b{name}\b", f.read()):
                    sys.exit(f"unity_batches.py: {name} (PRESK_UNITY_RENAME) appears in {path}: "
                             "it can only be renamed where no header names it")


def main():
    root, out, name, size = sys.argv[1:5]
    renamed = set(sys.argv[5].split(",")) - {""}
    files = sys.argv[6:]
    check_renamed(root, renamed)
    for index, batch in enumerate(batches(root, int(size), files, renamed)):
        if len(batch) == 1:
            print(f"{root}/{batch[0]}")
            continue
        lines = ["// Generated by cmake/unity_batches.py: one translation unit of the unity build."]
        for position, f in enumerate(batch):
            clash = sorted(renamed & scans_of(root, f))
            lines += [f"#define {n} {n}_unity_{index}_{position}" for n in clash]
            lines.append(f'#include "{f}"')
            lines += [f"#undef {n}" for n in clash]
        text = "\n".join(lines) + "\n"
        path = f"{out}/{name}_{index}.cpp"
        os.makedirs(out, exist_ok=True)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old != text:  # unchanged: not rewritten, so not compiled again
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        print(path)


def scans_of(root, f):
    return scan(f"{root}/{f}")[0]


if __name__ == "__main__":
    main()
