#!/usr/bin/env python3
"""Runs generated Lua programs (tests/fuzz/gen.py) through culua, each in a fresh process.

A finding is a crash (a signal), an abort, a sanitizer report, a hang (the timeout), an error
message that is not a clear Lua error (C++ leaking through: "std::", "terminate called", ...), an
abnormal end (no FUZZ-DONE, or a non-zero exit status) or a wrong result (a FUZZ-MISMATCH line of
an oracle). Each finding is saved as the program and its output in the findings folder, and
reduced (statements removed while the same kind of finding remains) with --minimize.

    tools/fuzz --seconds 600 --jobs 2                     # a long run, host backend
    tools/fuzz --culua build-asan/culua --seeds 1-500     # the corpus under another build
    tools/fuzz --backend cuda --culua /path/culua --seconds 300
    tools/fuzz --corpus DIR                               # the .lua files of DIR instead
    tools/fuzz --save-corpus DIR --seeds 1-500            # write the programs, run them too
    tools/fuzz --wrapper 'valgrind -q --error-exitcode=99 --undef-value-errors=no' --timeout 300

The exit status is 0 when nothing was found, 1 when something was, 2 on bad arguments.
"""
import argparse
import concurrent.futures
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SANITIZER = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer|MemorySanitizer|ThreadSanitizer)|"
                       r"runtime error: |UndefinedBehaviorSanitizer|SUMMARY: \w+Sanitizer|"
                       r"==\d+== (Invalid (read|write|free)|Conditional jump|Use of uninitialised|"
                       r"Mismatched free|Syscall param|Source and destination overlap)|"
                       r"========= (ERROR SUMMARY: [1-9]|Invalid |Program hit |Race |Barrier error)")
INTERNAL = re.compile(r"std::|terminate called|what\(\):|internal error|PANIC|Assertion .* failed|"
                      r"basic_string|vector::|_M_\w|__cxa|bad_alloc|bad_function_call|"
                      r"unknown exception|libc\+\+abi|stack smashing|double free|free\(\): |"
                      r"malloc\(\): |corrupted|Segmentation fault")
OUTPUT_LIMIT = 200_000


def parse_seeds(text):
    """The seeds of '1-500' or '3,7,9', as ranges (never expanded into a list)."""
    ranges = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        ranges.append(range(int(lo), int(hi or lo) + 1))
    return ranges


def classify(rc, out, timed_out):
    """The kind of finding and the line that shows it, or (None, None)."""
    if timed_out:
        return "hang", "timeout"
    m = SANITIZER.search(out)
    if m:
        line = out[m.start():].splitlines()[0]
        return "sanitizer", line
    if rc is not None and rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = "signal %d" % -rc
        return "crash", name
    for line in out.splitlines():
        if line.startswith("FUZZ-MISMATCH"):
            return "wrong-result", line
    for line in out.splitlines():
        if INTERNAL.search(line):
            return "internal-error", line
    if rc != 0 or "FUZZ-DONE" not in out:
        tail = [l for l in out.splitlines() if l.strip()][-1:] or ["(no output)"]
        return "abnormal-exit", "exit %s: %s" % (rc, tail[0])
    return None, None


def signature(kind, line):
    """Findings with the same signature are the same bug, most likely."""
    text = re.sub(r"0x[0-9a-f]+|\d+", "N", line or "")
    text = re.sub(r"^E\S* \S+?:N: ", "", text)
    return kind + ": " + text[:160]


class Runner:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.ran = 0
        self.findings = {}  # signature -> list of (name, kind, line)
        self.kinds = {}
        self.workdir = tempfile.mkdtemp(prefix="culua-fuzz-")

    def command(self, path):
        return shlex.split(self.args.wrapper) + [self.args.culua, "--backend", self.args.backend, path]

    def run_source(self, name, source):
        """Runs one program; returns (kind, line, output)."""
        folder = tempfile.mkdtemp(prefix=name + "-", dir=self.workdir)
        path = os.path.join(folder, "prog.lua")
        with open(path, "w") as f:
            f.write(source)
        env = dict(os.environ)
        env.setdefault("CULUA_HOST_MEMORY_LIMIT", self.args.host_memory)
        env["CULUA_CACHE_DIR"] = os.path.join(folder, "cache")
        # a first line "-- env: NAME=value ..." sets variables for the program (host devices)
        first = source.split("\n", 1)[0]
        if first.startswith("-- env: ") and self.args.backend == "host":
            for pair in first[len("-- env: "):].split():
                name, _, value = pair.partition("=")
                env[name] = value
        for attempt in range(30):
            try:
                proc = subprocess.Popen(self.command("prog.lua"), cwd=folder, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
                break
            except OSError:
                # the binary is being linked again (a long run beside a rebuild): wait for it
                if attempt == 29:
                    raise
                time.sleep(1)
        timed_out = False
        try:
            out, _ = proc.communicate(timeout=self.args.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
        text = out[:OUTPUT_LIMIT].decode("utf-8", "replace")
        shutil.rmtree(folder, ignore_errors=True)
        kind, line = classify(proc.returncode, text, timed_out)
        return kind, line, text

    def record(self, name, source, kind, line, text):
        sig = signature(kind, line)
        with self.lock:
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
            known = self.findings.setdefault(sig, [])
            known.append(name)
            first = len(known) == 1
            if len(known) > 3:
                return
        os.makedirs(self.args.findings, exist_ok=True)
        base = os.path.join(self.args.findings, "%s-%s" % (kind, name))
        with open(base + ".lua", "w") as f:
            f.write(source)
        with open(base + ".out", "w") as f:
            f.write("# %s\n# %s\n# %s\n" % (" ".join(self.command(name + ".lua")), kind, line))
            f.write(text)
        print("FINDING %s %s: %s" % (name, kind, line), flush=True)
        if first and self.args.minimize:
            small = self.minimize(name, source, kind)
            with open(base + ".min.lua", "w") as f:
                f.write(small)
            print("  reduced to %d lines: %s.min.lua" % (small.count("\n"), base), flush=True)

    def minimize(self, name, source, kind):
        """Removes statements (the lines 'T(n, ...)' with n > 0) while the kind of finding stays."""
        lines = source.splitlines(keepends=True)
        fixed = [i for i, l in enumerate(lines) if not re.match(r"T\([1-9]\d*, ", l)]
        body = [i for i, l in enumerate(lines) if re.match(r"T\([1-9]\d*, ", l)]
        deadline = time.time() + self.args.minimize_seconds

        def reproduces(keep):
            chosen = sorted(fixed + keep)
            k, _, _ = self.run_source(name + "-min", "".join(lines[i] for i in chosen))
            return k == kind

        chunk = max(len(body) // 2, 1)
        while chunk >= 1 and time.time() < deadline:
            i, removed = 0, False
            while i < len(body) and time.time() < deadline:
                trial = body[:i] + body[i + chunk:]
                if trial != body and reproduces(trial):
                    body, removed = trial, True
                else:
                    i += chunk
            if not removed:
                chunk //= 2
        return "".join(lines[i] for i in sorted(fixed + body))

    def one(self, item):
        name, source = item
        kind, line, text = self.run_source(name, source)
        with self.lock:
            self.ran += 1
        if self.args.save_corpus:
            with open(os.path.join(self.args.save_corpus, name + ".lua"), "w") as f:
                f.write(source)
        if kind:
            self.record(name, source, kind, line, text)

    def items(self):
        if self.args.corpus:
            for file in sorted(os.listdir(self.args.corpus)):
                if file.endswith(".lua"):
                    with open(os.path.join(self.args.corpus, file)) as f:
                        yield file[:-4], f.read()
            return
        for seed in (s for r in parse_seeds(self.args.seeds) for s in r):
            yield "seed%d" % seed, gen.generate(seed, self.args.statements)

    def run(self):
        start = time.time()
        if self.args.save_corpus:
            os.makedirs(self.args.save_corpus, exist_ok=True)
        with concurrent.futures.ThreadPoolExecutor(self.args.jobs) as pool:
            pending = set()
            for item in self.items():
                if self.args.seconds and time.time() - start > self.args.seconds:
                    break
                pending.add(pool.submit(self.one, item))
                if len(pending) >= 2 * self.args.jobs:
                    done, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                    for d in done:
                        d.result()
            for d in concurrent.futures.as_completed(pending):
                d.result()
        shutil.rmtree(self.workdir, ignore_errors=True)
        elapsed = time.time() - start
        total = sum(self.kinds.values())
        print("fuzz: %d programs in %.0f s (%s backend, %s): %d findings, %d distinct" %
              (self.ran, elapsed, self.args.backend, self.args.culua, total, len(self.findings)))
        for sig, names in sorted(self.findings.items()):
            print("  %s  [%d: %s%s]" % (sig, len(names), " ".join(names[:3]), " ..." if len(names) > 3 else ""))
        if total:
            print("fuzz: findings saved in %s" % self.args.findings)
        return 1 if total else 0


def default_culua():
    for candidate in ("build-host/culua", "build/culua", "build-cuda/culua"):
        path = os.path.join(ROOT, candidate)
        if os.access(path, os.X_OK):
            return path
    return shutil.which("culua") or os.path.join(ROOT, "build/culua")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--culua", default=None, help="the culua binary (default: build-host/culua, build/culua)")
    parser.add_argument("--backend", default=os.environ.get("CULUA_BACKEND", "host"), choices=["host", "cuda", "auto"])
    parser.add_argument("--seeds", default=None, help="seeds: 1-500 or 3,7,9 (default 1-1000000000 with --seconds, else 1-200)")
    parser.add_argument("--seconds", type=float, default=0, help="stop starting programs after this long")
    parser.add_argument("--jobs", type=int, default=1, help="programs run at once (default 1)")
    parser.add_argument("--timeout", type=float, default=30, help="seconds one program may take (default 30)")
    parser.add_argument("--statements", type=int, default=None, help="statements per program (default: 10 to 60)")
    parser.add_argument("--findings", default="fuzz-findings", help="where findings are saved (default fuzz-findings)")
    parser.add_argument("--corpus", default=None, help="run the .lua programs of this folder instead of generating")
    parser.add_argument("--save-corpus", default=None, help="also write every program run into this folder")
    parser.add_argument("--minimize", action="store_true", help="reduce the first program of each distinct finding")
    parser.add_argument("--minimize-seconds", type=float, default=120, help="time for reducing one finding")
    parser.add_argument("--wrapper", default="", help="a command that runs culua, such as "
                        "'valgrind -q --error-exitcode=99 --undef-value-errors=no'")
    parser.add_argument("--host-memory", default="512M", help="CULUA_HOST_MEMORY_LIMIT unless set (default 512M)")
    args = parser.parse_args()
    args.culua = os.path.abspath(args.culua or default_culua())
    if not os.access(args.culua, os.X_OK):
        parser.error("--culua %s: not an executable" % args.culua)
    if args.jobs < 1 or args.timeout <= 0:
        parser.error("--jobs and --timeout must be positive")
    if args.seeds is None:
        args.seeds = "1-1000000000" if args.seconds else "1-200"
    try:
        parse_seeds(args.seeds)
    except ValueError:
        parser.error("--seeds %s: expected ranges such as 1-500 or 3,7,9" % args.seeds)
    args.findings = os.path.abspath(args.findings)
    if args.corpus and not os.path.isdir(args.corpus):
        parser.error("--corpus %s: not a folder" % args.corpus)
    sys.exit(Runner(args).run())


if __name__ == "__main__":
    main()
