#!/usr/bin/env python3
"""Runs the examples of README.md and docs/**/*.md and compares what they print.

    check_examples.py --culua build/culua                  ctest docs.examples (host backend)
    check_examples.py --culua gpu-build/culua --backend cuda   ctest docs.examples.cuda (label gpu)
    check_examples.py --list                               each block and what is done with it
    check_examples.py --self-test --culua build/culua      the checker on made-up pages

The convention (docs/development.md, "Examples in the documentation"):

- Every ```lua block is a complete script, run by `culua --backend BACKEND FILE` in a fresh
  process and a fresh empty folder, unless an HTML comment on the line just before its fence says
  otherwise. The comment holds words:
    <!-- fragment -->     not run: a signature list or a partial snippet (names from nowhere,
                          [optional] notation);
    <!-- gpu -->          needs a GPU (cu.compile, cu.elementwise, NCCL): run only with
                          --backend cuda (docs.examples.cuda); here its syntax is checked;
    <!-- mpi=N -->        run under mpirun with N ranks (tests/mpi/run.sh); with --backend cuda
                          only on a machine with N GPUs (one GPU per rank, as NCCL needs);
    <!-- devices=N -->    needs N devices: CULUA_HOST_DEVICES=N on the host backend, skipped on a
                          machine with fewer GPUs;
    <!-- needs=PROGRAM --> skipped where PROGRAM (gnuplot, say) is not on the PATH.
  Words combine (`<!-- gpu devices=2 -->`); an unknown word is an error.
- The shown output is compared with what the script prints on stdout: either a ```text block
  right after the Lua block (nothing but blank lines between), or the `--> ` comments of the
  block, one expected line each, in order. `[...]` in an expected line matches any text; a line
  that is only `[...]` matches any number of lines (timings, addresses, machine names). A block
  without shown output must still run and exit 0.
- A Lua block whose first line is a comment naming a script of the repository
  (`-- examples/mpi/normalize.lua: ...`) must be that file's text, word for word.
- Every ```cpp block is a complete translation unit, compiled with the flags the page names
  (`-std=c++NN` where the page says so, else -std=c++17) and -fsyntax-only -Wall -Wextra
  -pedantic-errors -Werror against include/.
- Every page of docs/ (not the generated api.md, nor the raw output files under docs/results/) has
  the navigation line: a link to the index of
  the documentation in its first lines.

Exit status 0 when everything passed, 1 otherwise (each failure printed with its file:line), 2 on
bad usage.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)")
MARKER = re.compile(r"^\s*<!--\s*(.*?)\s*-->\s*$")
ARROW = re.compile(r"--> ?(.*)$")
WILD = "[...]"
COPY_OF = re.compile(r"^-- ((?:examples|scripts)/[\w./-]+\.lua)\b")
TIMEOUT = 120


class Block:
    def __init__(self, page, line, lang, code, words):
        self.page, self.line, self.lang, self.code, self.words = page, line, lang, code, words
        self.output = None  # the expected lines, or None: not compared
        self.output_from = None
        self.seconds = 0.0

    @property
    def where(self):
        return "%s:%d" % (self.page, self.line)

    def word(self, name):
        for w in self.words:
            if w == name:
                return True
            if w.startswith(name + "="):
                value = w.split("=", 1)[1]
                return int(value) if value.isdigit() else value
        return None


def parse_words(text):
    words = text.split()
    for w in words:
        if w not in ("fragment", "gpu") and not re.fullmatch(r"(mpi|devices)=[1-9][0-9]*", w) and \
                not re.fullmatch(r"needs=[\w.+-]+", w):
            return None, "unknown word '%s' in the marker <!-- %s --> (known: fragment, gpu, " \
                         "mpi=N, devices=N, needs=PROGRAM)" % (w, text)
    return words, None


def extract(root, page):
    """The fenced blocks of one page (lua, cpp and the text after a lua block) and its errors."""
    path = os.path.join(root, page)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks, errors, raw = [], [], []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        j = i + 1
        while j < len(lines) and not (lines[j].strip().startswith(fence) and
                                      lines[j].strip().strip(fence[0]) == ""):
            j += 1
        indent = len(lines[i]) - len(lines[i].lstrip())
        code = "\n".join(l[indent:] if l[:indent].strip() == "" else l for l in lines[i + 1:j])
        words = []
        k = i - 1
        mm = MARKER.match(lines[k]) if k >= 0 else None
        if mm:
            words, err = parse_words(mm.group(1))
            if err:
                errors.append("%s:%d: %s" % (page, k + 1, err))
                words = ["fragment"]
        raw.append((i + 1, j + 1, lang, code, words))
        i = j + 1
    for n, (start, end, lang, code, words) in enumerate(raw):
        if lang in ("lua", "cpp", "c++"):
            b = Block(page, start, "cpp" if lang == "c++" else lang, code, words)
            blocks.append(b)
        elif words:
            errors.append("%s:%d: a marker before a ```%s block (markers are for lua and cpp)" %
                          (page, start - 1, lang or "(plain)"))
            continue
        else:
            continue
        if b.lang != "lua":
            if any(w != "fragment" for w in words):
                errors.append("%s:%d: only <!-- fragment --> applies to a C++ block" % (page, start))
            continue
        shown = [ARROW.search(l).group(1).rstrip() for l in code.split("\n") if ARROW.search(l)]
        nxt = raw[n + 1] if n + 1 < len(raw) else None
        text_after = nxt is not None and nxt[2] == "text" and \
            all(l.strip() == "" for l in lines[end:nxt[0] - 1])
        if b.word("fragment"):
            continue
        if text_after and shown:
            errors.append("%s:%d: both `-->` comments and a ```text block: keep one" % (page, start))
        elif text_after:
            b.output = nxt[3].split("\n")
            b.output_from = "%s:%d" % (page, nxt[0])
        elif shown:
            b.output = shown
            b.output_from = "the --> comments"
    return blocks, errors


def pages(root):
    found = ["README.md"] + sorted(
        os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "**", "*.md"),
                                                    recursive=True))
    return [p for p in found if os.path.isfile(os.path.join(root, p))]


def matches(expected, actual):
    """Whether the actual lines match the expected ones, [...] being a wildcard."""
    def line_ok(pat, line):
        parts = pat.split(WILD)
        rx = ".*".join(re.escape(p) for p in parts)
        return re.fullmatch(rx, line) is not None

    memo = {}

    def go(i, j):
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(expected):
            r = j == len(actual)
        elif expected[i].strip() == WILD:
            r = any(go(i + 1, k) for k in range(j, len(actual) + 1))
        else:
            r = j < len(actual) and line_ok(expected[i].rstrip(), actual[j].rstrip()) and go(i + 1, j + 1)
        memo[key] = r
        return r

    return go(0, 0)


def trim(lines):
    while lines and lines[-1].strip() == "":
        lines = lines[:-1]
    return lines


def run_lua(b, args, tmp):
    name = re.sub(r"[^A-Za-z0-9]+", "_", b.page[:-3]) + "_L%d.lua" % b.line
    folder = tempfile.mkdtemp(dir=tmp)
    script = os.path.join(folder, name)
    with open(script, "w", encoding="utf-8") as f:
        f.write(b.code + "\n")
    env = dict(os.environ)
    env["CULUA_CACHE_DIR"] = os.path.join(tmp, "cache")
    devices = b.word("devices")
    if devices and args.backend == "host":
        env["CULUA_HOST_DEVICES"] = str(devices)
    ranks = b.word("mpi")
    if ranks:
        env["CULUA_MPI_BACKEND"] = args.backend
        cmd = ["sh", os.path.join(args.root, "tests", "mpi", "run.sh"), args.culua, str(ranks), name]
    else:
        cmd = [args.culua, "--backend", args.backend, name]
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return "FAILED", "timed out after %d s" % TIMEOUT
    b.seconds = time.monotonic() - start
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    if ranks and p.returncode == 77:
        return "SKIPPED", out.strip() or "mpirun not found"
    if p.returncode != 0:
        return "FAILED", "exit %d\n%s%s" % (p.returncode, out, err)
    if b.output is not None:
        actual = trim(out.split("\n"))
        expected = trim(b.output)
        if not matches(expected, actual):
            return "FAILED", "the output differs from the one shown (%s)\n--- shown\n%s\n--- printed\n%s%s" % (
                b.output_from, "\n".join(expected), "\n".join(actual),
                ("\n--- stderr\n" + err) if err.strip() else "")
    shutil.rmtree(folder, ignore_errors=True)
    return "ok", None


def syntax_check(b, args, tmp):
    """A block that does not run here is still loaded (compiled) by culua."""
    script = os.path.join(tmp, "syntax.lua")
    with open(script, "w", encoding="utf-8") as f:
        f.write(b.code + "\n")
    code = "local f, e = loadfile(os.getenv('CULUA_DOCS_BLOCK')) if not f then print(e) os.exit(1) end"
    p = subprocess.run([args.culua, "--backend", "host", "-e", code], env=dict(os.environ, CULUA_DOCS_BLOCK=script),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.returncode == 0, p.stdout.decode("utf-8", "replace")


def compile_cpp(b, args, tmp):
    with open(os.path.join(args.root, b.page), encoding="utf-8") as f:
        stds = sorted(set(re.findall(r"-std=(c\+\+[0-9a-z]+)", f.read())))
    if len(stds) > 1:
        return False, "the page names several standards: %s" % ", ".join(stds)
    std = stds[0] if stds else "c++17"
    src = os.path.join(tmp, re.sub(r"[^A-Za-z0-9]+", "_", b.page[:-3]) + "_L%d.cpp" % b.line)
    with open(src, "w", encoding="utf-8") as f:
        f.write(b.code + "\n")
    cmd = [args.cxx, "-std=" + std, "-fsyntax-only", "-Wall", "-Wextra", "-pedantic-errors", "-Werror",
           "-I", os.path.join(args.root, "include"), src]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.returncode == 0, " ".join(cmd) + "\n" + p.stdout.decode("utf-8", "replace")


def check_navigation(root, page):
    """A page of docs/ links the index of the documentation in its first lines."""
    if not page.startswith("docs/") or (page.startswith("docs/results/") and page != "docs/results/README.md"):
        return None  # README.md, and the raw output files of docs/results/
    with open(os.path.join(root, page), encoding="utf-8") as f:
        head = f.read().split("\n")[:8]
    text = "\n".join(head)
    if "Generated by tools/gen-api-doc" in text:
        return None
    if re.search(r"\]\((\.\./)*index\.md\)", text) or (page == "docs/index.md"):
        return None
    return "%s:1: no navigation line (a link to %s in the first lines, as the other pages have)" % (
        page, os.path.relpath("docs/index.md", os.path.dirname(page)))


def handle(b, args, tmp, gpus):
    """What is done with one block: (the count it adds to, the line printed, the failure or None)."""
    if b.word("fragment"):
        return "fragment", None, None
    if b.lang == "cpp":
        if not args.cxx:
            return "SKIPPED", "SKIPPED (no C++ compiler given)", None
        ok, log = compile_cpp(b, args, tmp)
        return ("compiled", "compiles", None) if ok else \
            ("FAILED", "FAILED", "the C++ block does not compile:\n" + log)
    if b.word("gpu") and args.backend != "cuda":
        ok, log = syntax_check(b, args, tmp)
        return ("syntax only", "gpu: syntax only", None) if ok else ("FAILED", "FAILED", log)
    program = b.word("needs")
    if program and not shutil.which(program):
        return "SKIPPED", "SKIPPED (needs %s, which is not on the PATH)" % program, None
    devices = max(b.word("devices") or 0, b.word("mpi") or 0)   # on GPUs: one GPU per rank
    if devices and args.backend == "cuda":
        if gpus[0] is None:
            p = subprocess.run([args.culua, "--backend", "cuda", "-e", "print(#cu.devices())"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            gpus[0] = int(p.stdout.strip() or 0) if p.returncode == 0 else 0
        if gpus[0] < devices:
            return "SKIPPED", "SKIPPED (needs %d GPUs, %d here)" % (devices, gpus[0]), None
    status, detail = run_lua(b, args, tmp)
    if status == "SKIPPED":
        return status, "SKIPPED (%.1f s): %s" % (b.seconds, detail), None
    return status, "%s (%.1f s)" % (status, b.seconds), detail if status == "FAILED" else None


def check(args):
    tmp = tempfile.mkdtemp(prefix="culua-docs-")
    failures, counts = [], {"ok": 0, "FAILED": 0, "SKIPPED": 0, "fragment": 0, "syntax only": 0,
                            "compiled": 0}
    all_blocks = []
    for page in pages(args.root):
        blocks, errors = extract(args.root, page)
        failures += errors
        nav = check_navigation(args.root, page)
        if nav:
            failures.append(nav)
        all_blocks += blocks
    lua = [b for b in all_blocks if b.lang == "lua"]
    for b in lua:
        m = COPY_OF.match(b.code)
        if m:
            path = os.path.join(args.root, m.group(1))
            if not os.path.isfile(path):
                failures.append("%s: the block names %s, which does not exist" % (b.where, m.group(1)))
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if text.rstrip("\n") != b.code.rstrip("\n"):
                failures.append("%s: the block is not the text of %s, which its first line names" %
                                (b.where, m.group(1)))
    if not lua:
        failures.append("no ```lua block found under %s: the extraction is broken" % args.root)
    if args.list:
        for b in all_blocks:
            what = "fragment" if b.word("fragment") else ("compile" if b.lang == "cpp" else "run")
            print("%-40s %-4s %-9s %s%s" % (b.where, b.lang, what, " ".join(b.words),
                                           "  output: " + b.output_from if b.output else ""))
        for f in failures:
            print(f)
        return 1 if failures else 0
    gpus = [None]
    for b in all_blocks:
        kind, shown, failure = handle(b, args, tmp, gpus)
        counts[kind] += 1
        if shown:
            print("%-40s %s" % (b.where, shown))
        if failure:
            failures.append("%s: %s" % (b.where, failure))
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    print("\n%d Lua blocks run ok, %d C++ blocks compiled, %d fragments, %d GPU blocks syntax-checked "
          "only, %d skipped, %d failed (backend %s)" % (
              counts["ok"], counts["compiled"], counts["fragment"], counts["syntax only"],
              counts["SKIPPED"], len(failures), args.backend))
    for f in failures:
        print("\nFAILED " + f)
    return 1 if failures else 0


SELF_TEST_PAGES = {
    "README.md": "# t\n\n```lua\nprint(1 + 1)  --> 2\n```\n",
    "docs/index.md": "# index\n\n```lua\nprint(string.format('%.2f ms', 1 / 3))\n```\n\n```text\n[...] ms\n```\n",
    "docs/a.md": "# a\n\n[All documentation](index.md)\n\n<!-- fragment -->\n```lua\nf(x [, opts])\n```\n\n"
                 "<!-- gpu -->\n```lua\nlocal m = cu.compile('')\n```\n\n```lua\nfor i = 1, 3 do print(i) end\n```\n"
                 "\n```text\n1\n[...]\n```\n",
}
BROKEN = [
    ("README.md", "```lua\nprint(1 + 1)  --> 2\n", "```lua\nprint(1 + 2)  --> 2\n", "output differs"),
    ("docs/a.md", "```lua\nfor i", "```lua\nerror('boom') for i", "exit 1"),
    ("docs/a.md", "<!-- gpu -->\n```lua\nlocal m", "<!-- gpu -->\n```lua\nlocal = m", "syntax"),
    ("docs/a.md", "<!-- fragment -->", "<!-- fragmnet -->", "unknown word"),
    ("docs/a.md", "[All documentation](index.md)\n", "", "no navigation line"),
    ("docs/index.md", "[...] ms", "[...] s\n1", "output differs"),
]


def self_test(args):
    """The checker passes good pages and fails each broken variant, naming the cause."""
    ok = True
    base = tempfile.mkdtemp(prefix="culua-docs-self-")

    def make(pages_):
        root = tempfile.mkdtemp(dir=base)
        for rel, text in pages_.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        return root

    def run(root):
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--root", root, "--culua", args.culua],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        return p.returncode, p.stdout.decode("utf-8", "replace")

    rc, out = run(make(SELF_TEST_PAGES))
    if rc != 0:
        ok = False
        print("self-test: the good pages fail:\n" + out)
    for page, old, new, why in BROKEN:
        pages_ = dict(SELF_TEST_PAGES)
        assert old in pages_[page], old
        pages_[page] = pages_[page].replace(old, new, 1)
        rc, out = run(make(pages_))
        if rc != 1 or why not in out:
            ok = False
            print("self-test: %s broken (%r -> %r) gave exit %d without %r:\n%s" % (page, old, new, rc, why, out))
    matches_cases = [(["a [...] c"], ["a b c"], True), (["a [...] c"], ["a b d"], False),
                     (["x", WILD, "y"], ["x", "y"], True), (["x", WILD, "y"], ["x", "1", "2", "y"], True),
                     (["x", WILD], ["y"], False), (["1.5"], ["1x5"], False)]
    for e, a, want in matches_cases:
        if matches(e, a) != want:
            ok = False
            print("self-test: matches(%r, %r) is not %r" % (e, a, want))
    shutil.rmtree(base, ignore_errors=True)
    print("self-test: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument("--culua", help="the culua program to run the Lua blocks with")
    ap.add_argument("--backend", choices=("host", "cuda"), default="host")
    ap.add_argument("--cxx", help="the C++ compiler for the ```cpp blocks (not given: not compiled)")
    ap.add_argument("--list", action="store_true", help="list the blocks and what is done with each")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    args.root = os.path.abspath(args.root)
    if not args.list and not args.culua:
        ap.error("--culua is required")
    if args.culua:
        args.culua = os.path.abspath(args.culua)
    if args.self_test:
        return self_test(args)
    if args.backend == "cuda" and not args.list:
        # Exit 69 (ctest: skipped) where the CUDA backend cannot start, as culua itself does.
        p = subprocess.run([args.culua, "--backend", "cuda", "-e", ""], capture_output=True)
        if p.returncode == 69:
            print("skip: no GPU (culua --backend cuda exits 69)")
            return 69
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
