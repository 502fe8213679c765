#!/usr/bin/env python3
"""Drives the culua REPL through a pseudo-terminal with a fixed sequence of keys and prints what a
person would have seen (for the docs, docs/results/README.md, and for machines without tmux).
    tests/repl/transcript.py CULUA [ARGS...]"""
import os, pty, re, select, sys, time

def main():
    argv = sys.argv[1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["HOME"] = os.environ.get("TRANSCRIPT_HOME", "/tmp")
        os.execv(argv[0], argv)
    out = bytearray()

    def read(timeout):
        end = time.time() + timeout
        while time.time() < end:
            r, _, _ = select.select([fd], [], [], 0.02)
            if r:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    return
                if not data:
                    return
                out.extend(data)

    def wait_for(text, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            if text.encode() in out:
                return True
            read(0.05)
        return False

    def prompt_count():
        return out.count(b"\n> ") + out.count(b"\r> ") + (1 if out.startswith(b"> ") else 0)

    def send(keys, settle=0.3):
        n = prompt_count()
        os.write(fd, keys.encode())
        end = time.time() + 60
        if keys.endswith("\r"):
            while time.time() < end and prompt_count() <= n and b">> " not in out[-4:]:
                read(0.05)
        read(settle)

    wait_for("> ")
    send("a = cu.arange(0, 12, 1, 'f32'):reshape(3, 4)\r")
    send("a\r")
    send("a:sum()\r")
    send("a:sum():item() * 2\r")
    send("cu.ze\t", 0.5)
    send("\x15")  # clear the line
    send("a:su\t\t", 0.5)
    send("\x15")
    send("for i = 1, 3 do\r")
    send("  io.write(i, ' ')\r")
    send("end print()\r")
    send("x = = 1\r")
    send("a:reshape(5, 5)\r")
    send("help(cu.sum)\r")
    t0 = time.time()
    os.write(fd, b"cu.sleep(5000); cu.sync()\r")
    read(1.0)
    t1 = time.time()
    os.write(fd, b"\x03")
    n = prompt_count()
    while prompt_count() <= n and time.time() - t1 < 10:
        read(0.002)
    t2 = time.time()
    read(0.3)
    send("a:sum()\r")
    os.write(fd, b"\x04")
    read(2.0)
    text = out.decode(errors="replace").replace("\r\n", "\n")
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text).replace("\r", "\n").replace("\x07", "")
    print(text)
    print(f"[transcript: Ctrl-C sent {t1 - t0:.2f} s into the wait; prompt back {1e3 * (t2 - t1):.0f} ms after it]")
    _, status = os.waitpid(pid, 0)
    print(f"[exit status {os.waitstatus_to_exitcode(status)}]")

main()
