#!/usr/bin/env python3
"""The Jupyter kernel (culua --jupyter) through a real client, jupyter_client:

    test_kernel.py CULUA [BACKEND]

installs the kernelspec with `culua --install-kernel --prefix TMP`, starts the kernel from it and
checks every message kind the kernel answers, its output, errors, interrupt, restart, shutdown,
and that bad messages (a wrong signature, malformed JSON, unknown types) are dropped with the
kernel alive. Exit 0 when every check passed, 69 when jupyter_client is not installed (a skip).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

try:
    import zmq
    from jupyter_client.manager import start_new_kernel
    from jupyter_client.session import Session
except ImportError as e:  # pragma: no cover
    print(f"skipped: {e}")
    sys.exit(69)

CULUA = os.path.abspath(sys.argv[1])
BACKEND = sys.argv[2] if len(sys.argv) > 2 else "host"
failures = []


def check(cond, what):
    print(("ok      " if cond else "FAIL    ") + what)
    if not cond:
        failures.append(what)


def run(kc, code, timeout=60, **kw):
    """Executes code; returns the reply's content and the IOPub messages of that request."""
    msg_id = kc.execute(code, **kw)
    outputs = []
    while True:
        m = kc.get_iopub_msg(timeout=timeout)
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            break
        outputs.append(m)
    reply = kc.get_shell_msg(timeout=timeout)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=timeout)
    return reply["content"], outputs


def of_type(outputs, kind):
    return [m["content"] for m in outputs if m["msg_type"] == kind]


def stream_text(outputs, name="stdout"):
    return "".join(c["text"] for c in of_type(outputs, "stream") if c["name"] == name)


def main():
    probe = subprocess.run([CULUA, "--backend", BACKEND, "-e", "cu.display(1, 'x')"], capture_output=True, text=True)
    if probe.returncode == 69:
        print(f"skipped: the {BACKEND} backend is unavailable")
        return 69
    check(probe.stdout == "1\tx\n", "outside a kernel cu.display prints")
    tmp = tempfile.mkdtemp(prefix="culua-jupyter-")
    r = subprocess.run([CULUA, "--install-kernel", "--prefix", tmp], capture_output=True, text=True)
    check(r.returncode == 0 and "installed" in r.stdout, "--install-kernel --prefix writes the kernelspec")
    spec_dir = os.path.join(tmp, "share", "jupyter", "kernels", "culua")
    with open(os.path.join(spec_dir, "kernel.json")) as f:
        spec = json.load(f)
    check(spec["argv"][0] == os.path.realpath(CULUA) and spec["language"] == "lua", "kernel.json names culua")
    with open(os.path.join(spec_dir, "logo-64x64.png"), "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "and a logo")
    listed = subprocess.run([sys.executable, "-m", "jupyter", "kernelspec", "list"], capture_output=True, text=True,
                            env=dict(os.environ, JUPYTER_PATH=os.path.join(tmp, "share", "jupyter")))
    check(listed.returncode != 0 or "culua" in listed.stdout, "jupyter kernelspec list shows culua")
    os.environ["JUPYTER_PATH"] = os.path.join(tmp, "share", "jupyter")
    env = dict(os.environ, CULUA_BACKEND=BACKEND)
    workdir = tempfile.mkdtemp(prefix="culua-cwd-")
    km, kc = start_new_kernel(kernel_name="culua", startup_timeout=60, env=env, cwd=workdir)
    try:
        info = kc.kernel_info(reply=True, timeout=30)["content"]
        check(info["implementation"] == "culua" and info["language_info"]["name"] == "lua",
              "kernel_info: culua, lua")
        check(f"backend {BACKEND}" in info["banner"], "kernel_info: the banner names the backend: " + info["banner"])

        reply, out = run(kc, 'print("hello")\nio.write("a", 1, "\\n")')
        check(reply["status"] == "ok" and stream_text(out) == "hello\na1\n", "print and io.write stream in order")
        check(of_type(out, "execute_input")[0]["code"].startswith("print"), "execute_input is published")

        run(kc, "x = 41")
        reply, out = run(kc, "x + 1")
        res = of_type(out, "execute_result")
        check(res and res[0]["data"]["text/plain"] == "42", "variables persist; an expression is the cell's value")
        check(reply["execution_count"] == res[0]["execution_count"], "execution_count in the reply and the result")

        reply, out = run(kc, "a = cu.arange(0, 5, 1, 'f32')\na")
        data = of_type(out, "execute_result")[0]["data"]
        check("<table" in data.get("text/html", "") and "cu.array" in data["text/plain"], "an array as text/plain and text/html")
        reply, out = run(kc, "cu.arange(0, 5000, 1, 'f32')")
        html = of_type(out, "execute_result")[0]["data"]["text/html"]
        check("&hellip;" in html and html.count("<td>") < 20, "a large array is elided")

        # cu.display, plots shown inline (no file written), bench results as tables.
        reply, out = run(kc, "print('before')\ncu.display(cu.ones(3), 'text')\nprint('after')")
        shown = of_type(out, "display_data")
        kinds = [m["msg_type"] for m in out if m["msg_type"] in ("stream", "display_data")]
        check(len(shown) == 2 and "<table" in shown[0]["data"]["text/html"] and shown[1]["data"]["text/plain"] == "text",
              "cu.display shows each value")
        check(kinds == ["stream", "display_data", "display_data", "stream"], "output in order: " + str(kinds))
        reply, out = run(kc, "cu.plot({{n = 1, t = 2}, {n = 2, t = 3}}, {x = 'n', y = 't'})")
        shown = of_type(out, "display_data")
        import base64
        import xml.dom.minidom
        png = base64.b64decode(shown[0]["data"]["image/png"]) if shown else b""
        check(png.startswith(b"\x89PNG\r\n\x1a\n"), "a plot without file= shows inline as a PNG")
        svg = shown[0]["data"].get("image/svg+xml", "") if shown else ""
        check(bool(xml.dom.minidom.parseString(svg).getElementsByTagName("svg")), "... and as SVG")
        reply, out = run(kc, "cu.bench(function() local _ = cu.ones(8) + 1 end, {max_time = 0.1, min_time = 0.01})")
        data = of_type(out, "execute_result")[0]["data"]
        check("gpu median" in data.get("text/html", "") and "gpu" in data["text/plain"], "a bench result as a table")

        reply, out = run(kc, "error('boom')")
        err = of_type(out, "error")
        check(reply["status"] == "error" and err and "boom" in err[0]["evalue"] and err[0]["traceback"],
              "a Lua error: status error, evalue and traceback")
        reply, out = run(kc, "cu.zeros(-1)")
        check(reply["status"] == "error" and reply["ename"] == "value", "a culua error's ename is its kind: " + reply.get("ename", ""))
        reply, out = run(kc, "x = = 1")
        check(reply["status"] == "error" and reply["ename"] == "SyntaxError", "a syntax error")
        reply, out = run(kc, "x")
        check(of_type(out, "execute_result")[0]["data"]["text/plain"] == "41", "the state survives errors")

        reply, out = run(kc, "io.stderr:write('careful\\n')")
        check(stream_text(out, "stderr") == "careful\n", "stderr streams as stderr")

        reply, out = run(kc, "y = 5", silent=True)
        check(not of_type(out, "execute_input") and reply["status"] == "ok", "silent: no execute_input")
        reply, out = run(kc, "z = 1", user_expressions={"twice": "y * 2", "bad": "nil + 1"})
        ue = reply["user_expressions"]
        check(ue["twice"]["status"] == "ok" and ue["twice"]["data"]["text/plain"] == "10"
              and ue["bad"]["status"] == "error", "user_expressions")

        c = kc.complete("cu.zer", 6, reply=True, timeout=30)["content"]
        check("zeros" in c["matches"] and c["cursor_start"] == 3 and c["cursor_end"] == 6, "complete: cu.zer -> zeros")
        c = kc.complete("a:su", 4, reply=True, timeout=30)["content"]
        check("sum" in c["matches"], "complete: methods after ':'")
        i = kc.inspect("cu.zeros", 8, reply=True, timeout=30)["content"]
        check(i["found"] and "zeros" in i["data"]["text/plain"], "inspect: help's text")
        i = kc.inspect("nosuchname", 3, reply=True, timeout=30)["content"]
        check(not i["found"], "inspect: an unknown name is not found")
        for code, want in [("for i = 1, 3 do", "incomplete"), ("x = 1", "complete"), ("x = = 1", "invalid")]:
            mid = kc.is_complete(code)
            rep = kc.get_shell_msg(timeout=30)
            while rep["parent_header"].get("msg_id") != mid:
                rep = kc.get_shell_msg(timeout=30)
            st = rep["content"]["status"]
            check(st == want, f"is_complete({code!r}) = {want}")
        h = kc.history(hist_access_type="tail", n=3, reply=True, timeout=30)["content"]
        check(h["status"] == "ok" and len(h["history"]) == 3 and h["history"][-1][2] == "z = 1", "history: the last cells")

        # io.read asks the frontend (input_request on the stdin channel).
        msg_id = kc.execute("got = io.read()", allow_stdin=True)
        req = kc.get_stdin_msg(timeout=30)
        check(req["msg_type"] == "input_request", "io.read sends input_request")
        kc.input("typed")
        while kc.get_shell_msg(timeout=30)["parent_header"].get("msg_id") != msg_id:
            pass
        reply, out = run(kc, "got")
        check(of_type(out, "execute_result")[0]["data"]["text/plain"] == "typed", "io.read returns the input")

        # Interrupt a long wait for the device: 30 s of sleep queued, then a wait.
        msg_id = kc.execute("local s = cu.stream(); cu.sleep(30000, {stream = s}); s:sync()")
        time.sleep(1.0)
        t0 = time.time()
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=30)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = kc.get_shell_msg(timeout=30)
        took = time.time() - t0
        c = reply["content"]
        check(c["status"] == "error" and "interrupt" in c.get("evalue", "") and took <= 1.0,
              f"interrupt stops the wait in {took:.2f} s ({c.get('ename')}: {c.get('evalue')})")
        reply, out = run(kc, "x")
        check(of_type(out, "execute_result")[0]["data"]["text/plain"] == "41", "alive after the interrupt")

        # Bad messages: a wrong signature, malformed JSON, an unknown type: dropped or ignored.
        ctx = zmq.Context.instance()
        sock = ctx.socket(zmq.DEALER)
        sock.connect(f"{km.transport}://{km.ip}:{km.shell_port}")
        bad = Session(key=b"not-the-key")
        bad.send(sock, "kernel_info_request", {})
        good = Session(key=km.session.key)
        header = b"{not json"
        sig = good.sign([header, b"{}", b"{}", b"{}"]) if good.auth else b""
        sock.send_multipart([b"<IDS|MSG>", sig, header, b"{}", b"{}", b"{}"])
        good.send(sock, "no_such_request", {})
        check(sock.poll(1000) == 0, "no reply to a bad signature, malformed JSON or an unknown type")
        sock.close()
        info = kc.kernel_info(reply=True, timeout=30)["content"]
        check(info["status"] == "ok", "alive after bad messages")

        # The kernel writes nothing outside its working folder unless asked.
        check(os.listdir(workdir) == [], "nothing written in the working folder")

        km.restart_kernel(now=True)
        kc.wait_for_ready(timeout=60)
        reply, out = run(kc, "x")
        check(of_type(out, "execute_result")[0]["data"]["text/plain"] == "nil", "restart: a fresh state")
    finally:
        km.shutdown_kernel(now=False)
    check(not km.is_alive(), "shutdown: the process ended")

    # A kernel under --sandbox keeps the sandbox's limits for each cell.
    sandboxed = os.path.join(tmp, "share", "jupyter", "kernels", "culua-sandbox")
    os.makedirs(sandboxed)
    with open(os.path.join(sandboxed, "kernel.json"), "w") as f:
        json.dump({"argv": [CULUA, "--sandbox", "--max-time", "1", "--jupyter", "{connection_file}"],
                   "display_name": "culua (sandbox)", "language": "lua"}, f)
    km, kc = start_new_kernel(kernel_name="culua-sandbox", startup_timeout=60, env=env, cwd=workdir)
    try:
        t0 = time.time()
        reply, out = run(kc, "while true do end")
        check(reply["status"] == "error" and reply["ename"] == "limit" and time.time() - t0 < 10,
              "sandbox: a cell past its time limit fails: " + reply.get("evalue", ""))
        reply, out = run(kc, "io == nil, 1 + 1")
        check(of_type(out, "execute_result")[0]["data"]["text/plain"] == "true\t2",
              "sandbox: the next cell runs, without io")
    finally:
        km.shutdown_kernel(now=True)
    print(f"{'passed' if not failures else 'FAILED'}: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
