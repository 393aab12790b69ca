"""The playground itself: loading offline, device, running Python, errors, Stop, share links, files.
These need no webtorch library (plain Python in Pyodide)."""
import base64
import time

from pwutil import open_playground


def test_page_loads_offline(playground):
    assert playground.requests, "no requests were recorded"
    outside = [u for u in playground.requests if not u.startswith("http://127.0.0.1:")
               and not u.startswith(("data:", "blob:"))]
    assert outside == [], f"requests that left the machine: {outside}"
    assert playground.blocked == []
    # The log includes the worker's requests (Pyodide's runtime is fetched by the worker).
    assert any(u.endswith("/pyodide/pyodide.asm.wasm") for u in playground.requests)
    assert any("/dist/worker.js" in u for u in playground.requests)


def test_ready_and_versions(playground):
    info = playground.info
    assert info["versions"]["python"].startswith("3.")
    assert info["versions"]["pyodide"]
    assert playground.page.evaluate("() => self.crossOriginIsolated") is True
    assert playground.errors == [], playground.errors


def test_device_is_webgpu(playground):
    dev = playground.info["device"]
    assert dev["kind"] == "webgpu", dev
    assert dev["jspi"] is True
    # headless Chromium here gets SwiftShader
    assert "swiftshader" in (dev["info"]["architecture"] + dev["info"]["description"] + dev["label"]).lower()
    badge = playground.page.inner_text("#device")
    assert badge.startswith("WebGPU"), badge


def test_plain_python_prints(playground):
    r = playground.run_ok("import sys\nfor i in range(3):\n    print('line', i)\nprint('err!', file=sys.stderr)\n")
    assert r["stdout"] == "line 0\nline 1\nline 2\n"
    assert "err!" in r["stderr"]
    text = playground.output_text()
    assert "line 2" in text and "err!" in text


def test_top_level_await_and_run_sync(playground):
    # JSPI: pyodide.ffi.run_sync works inside user code (the GPU driver's waits need it).
    r = playground.run_ok(
        "import asyncio, js\nfrom pyodide.ffi import run_sync\n"
        "await asyncio.sleep(0.01)\n"
        "print(run_sync(js.Promise.resolve(42)))\n")
    assert r["stdout"].strip() == "42"


def test_page_and_worker_allow_no_eval(playground):
    # The CSP allows WebAssembly ('wasm-unsafe-eval') but no eval where Python runs (the worker);
    # the browser driver's replay (torch.compile) is the worker's bundled `webtorchReplay`.
    r = playground.run_ok("import js\nfrom pyodide.code import run_js\n"
                          "print(callable(js.webtorchReplay))\n"
                          "try:\n    run_js('1')\nexcept Exception as e:\n    print(str(e).split(':')[0])\n")
    assert r["stdout"] == "True\nEvalError\n", r


def test_syntax_error_then_next_run(playground):
    r = playground.run("def f(:\n    pass\n")
    assert r["ok"] is False
    assert "SyntaxError" in r["stderr"] and "<playground>" in r["stderr"]
    assert "_pyodide" not in r["stderr"]  # the runner's own frames are hidden
    r = playground.run_ok("print(1 + 1)")
    assert r["stdout"] == "2\n"


def test_exception_traceback_then_next_run(playground):
    r = playground.run("def g(x):\n    return 1 / x\n\nprint('before')\ng(0)\n")
    assert r["ok"] is False
    assert r["stdout"] == "before\n"
    err = r["stderr"]
    assert err.startswith("Traceback (most recent call last):"), err
    assert 'File "<playground>", line 5' in err and 'line 2, in g' in err
    assert err.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "ZeroDivisionError" in playground.output_text()
    assert playground.run_ok("print('next')")["stdout"] == "next\n"


def test_each_run_gets_a_fresh_namespace(playground):
    playground.run_ok("leftover = 1")
    r = playground.run("print(leftover)")
    assert not r["ok"] and "NameError" in r["stderr"]


def test_stop_interrupts_infinite_loop(playground):
    page = playground.page
    page.evaluate("() => { window.__stopRun = window.webtorchPlayground.run('print(\"start\", flush=True)\\nwhile True:\\n    pass\\n'); }")
    page.wait_for_function("() => window.webtorchPlayground.running")
    # the loop is running once "start" is printed (on a loaded machine the worker may take a while to reach it)
    page.wait_for_function("() => document.querySelector('#output').innerText.includes('start')", timeout=60000)
    time.sleep(0.3)
    assert page.is_enabled("#stop")
    t0 = time.time()
    page.click("#stop")
    r = page.evaluate("() => window.__stopRun")
    assert time.time() - t0 < 2.4, "the interrupt did not stop the loop (hard stop was needed)"
    assert r["ok"] is False
    assert "KeyboardInterrupt" in r["stderr"]
    assert r["stdout"] == "start\n"
    assert not page.is_enabled("#stop")
    assert playground.run_ok("print('after stop')")["stdout"] == "after stop\n"


def test_hard_stop_restarts_python(browser, server):
    """Code stuck in JavaScript never checks the interrupt: Stop terminates and restarts the
    worker, and the page stays usable."""
    pg = open_playground(browser, server)
    try:
        page = pg.page
        # blocked in JavaScript for ever (an Atomics.wait nobody wakes; the CSP allows no eval)
        page.evaluate("() => { window.__r = window.webtorchPlayground.run('import js\\nprint(\"spin\", flush=True)\\n"
                      "js.Atomics.wait(js.Int32Array.new(js.SharedArrayBuffer.new(4)), 0, 0)'); }")
        page.wait_for_function("() => document.querySelector('#output').textContent.includes('spin')")
        page.evaluate("() => window.webtorchPlayground.stop()")
        r = page.evaluate("() => window.__r")
        assert r["ok"] is False and "restarted" in r["stderr"]
        assert page.evaluate("() => 1 + 1") == 2  # the page itself never froze
        assert pg.run_ok("print('alive')")["stdout"] == "alive\n"
    finally:
        pg.context.close()


def test_share_link_round_trip(browser, playground):
    code = "# ünïcode ✓ and symbols +/=\nprint('shared', 6 * 7)\n"
    page = playground.page
    page.evaluate("code => window.webtorchPlayground.setCode(code)", code)
    url = page.evaluate("() => window.webtorchPlayground.shareUrl()")
    assert url.startswith(playground.base + "/#code=")
    enc = url.split("#code=", 1)[1]
    assert set(enc) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert base64.urlsafe_b64decode(enc + "=" * (-len(enc) % 4)).decode() == code
    pg2 = open_playground(browser, playground.base, path=url[len(playground.base):], wait_ready=False)
    try:
        pg2.page.wait_for_function("() => window.webtorchPlayground !== undefined")
        assert pg2.page.evaluate("() => window.webtorchPlayground.getCode()") == code
        pg2.ready()
        r = pg2.run_ok(pg2.page.evaluate("() => window.webtorchPlayground.getCode()"))
        assert r["stdout"] == "shared 42\n"
        # The Run button takes the same path.
        pg2.page.click("#run")
        pg2.page.wait_for_function("() => document.querySelector('#output').textContent.includes('shared 42')")
    finally:
        pg2.context.close()


def test_examples_listed_in_picker(playground):
    names = playground.page.evaluate("() => window.webtorchPlayground.examples.map(e => e.name)")
    assert len(names) >= 4
    options = playground.page.eval_on_selector_all("#examples option", "os => os.map(o => o.value).filter(Boolean)")
    assert options == names
    # picking one loads it into the editor (after asking, when the code there was edited)
    playground.page.once("dialog", lambda d: d.accept())
    playground.page.select_option("#examples", names[1])
    code = playground.page.evaluate("() => window.webtorchPlayground.getCode()")
    assert code.startswith("# title:")


def test_graph_and_plot_helpers_without_library(playground):
    """show_graph walks grad_fn/next_functions duck-typed; plot posts points."""
    code = '''
class Fn:
    def __init__(self, name, nxt=(), variable=None):
        self._n, self.next_functions = name, tuple((f, 0) for f in nxt)
        if variable is not None:
            self.variable = variable
    def name(self):
        return self._n
class T:
    def __init__(self, shape, grad_fn=None):
        self.shape, self.grad_fn, self.requires_grad = shape, grad_fn, True
x = T((2,))
acc = Fn("AccumulateGrad", variable=x)
pow_ = Fn("PowBackward0", [acc])
mul = Fn("MulBackward0", [None, acc])
add = Fn("AddBackward0", [pow_, mul])
show_graph(T((2,), add), title="y")
for i in range(5):
    plot(1.0 / (i + 1))
plot_point("acc", 0, 0.5)
plot_point("acc", 4, 0.9)
'''
    playground.run_ok(code)
    page = playground.page
    page.wait_for_function("() => window.webtorchPlayground.graphData() && document.querySelectorAll('#graph svg .graph-node').length == 5")
    labels = page.eval_on_selector_all("#graph svg .graph-node", "ns => ns.map(n => n.dataset.label)")
    assert sorted(labels) == sorted(["tensor (2)", "AddBackward0", "PowBackward0", "MulBackward0", "AccumulateGrad"])
    g = page.evaluate("() => window.webtorchPlayground.graphData()")
    assert len(g["edges"]) == 5
    pts = page.evaluate("() => window.webtorchPlayground.plotData()")
    assert [p[1] for p in pts["loss"]] == [1.0, 0.5, 1 / 3, 0.25, 0.2]
    assert pts["acc"] == [[0, 0.5], [4, 0.9]]


def test_output_streams_while_running(playground):
    page = playground.page
    page.evaluate("() => { window.__s = window.webtorchPlayground.run('import time\\nprint(\"first\")\\nt = time.time()\\nwhile time.time() - t < 3: pass\\nprint(\"second\")'); }")
    page.wait_for_function("() => document.querySelector('#output').textContent.includes('first')", timeout=2500)
    assert page.evaluate("() => window.webtorchPlayground.running") is True
    assert "second" not in playground.output_text()
    r = page.evaluate("() => window.__s")
    assert r["ok"] and r["stdout"] == "first\nsecond\n"


def test_stop_a_printing_loop(playground):
    page = playground.page
    page.evaluate("() => { window.__p = window.webtorchPlayground.run('i = 0\\nwhile True:\\n    print(i)\\n    i += 1\\n'); }")
    page.wait_for_function("() => document.querySelector('#output').textContent.length > 100000")
    page.click("#stop")
    r = page.evaluate("() => window.__p")
    assert r["ok"] is False and "KeyboardInterrupt" in r["stderr"]
    assert len(playground.output_text()) <= 300_000
    assert playground.run_ok("print('ok')")["stdout"] == "ok\n"


def test_cpu_fallback_is_shown_with_reason(browser, server):
    """Without WebGPU headless Chromium has no adapter: the page says CPU and why."""
    from pwutil import CHROMIUM, CHROMIUM_ARGS
    args = [a for a in CHROMIUM_ARGS if a != "--enable-unsafe-webgpu"] + ["--disable-features=WebGPU"]
    b = browser.browser_type.launch(executable_path=CHROMIUM, headless=True, args=args)
    try:
        pg = open_playground(b, server)
        dev = pg.info["device"]
        assert dev["kind"] == "cpu" and dev["reason"], dev
        badge = pg.page.inner_text("#device")
        assert badge.startswith("CPU (") and dev["reason"] in badge
        assert pg.run_ok("print('cpu ok')")["stdout"] == "cpu ok\n"
    finally:
        b.close()


def test_files_upload_drop_and_download(playground):
    """Upload (button) and drop put files in Python's working directory; what the code writes
    there is listed with download links."""
    page = playground.page
    files = lambda: page.evaluate("() => window.webtorchPlayground.files()")  # noqa: E731
    page.set_input_files("#upload", files=[
        {"name": "data.txt", "mimeType": "text/plain", "buffer": b"uploaded \xc3\xa9\n"}])
    page.wait_for_function("() => window.webtorchPlayground.files().some(f => f.name === 'data.txt')")
    assert "Uploaded data.txt" in page.inner_text("#status-text")

    code_before = page.evaluate("() => window.webtorchPlayground.getCode()")
    page.evaluate("""() => {
        const dt = new DataTransfer();
        dt.items.add(new File(['dropped!'], 'drop.txt'));
        document.querySelector('#editor .cm-content').dispatchEvent(
            new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
    }""")
    page.wait_for_function("() => window.webtorchPlayground.files().some(f => f.name === 'drop.txt')")
    assert page.evaluate("() => window.webtorchPlayground.getCode()") == code_before

    r = playground.run_ok(
        "import os\n"
        "os.chdir('/tmp')  # the next run starts in the working directory again\n"
        "print(open('/home/pyodide/data.txt', encoding='utf-8').read(), end='')\n")
    assert r["stdout"] == "uploaded \u00e9\n"
    r = playground.run_ok(
        "import os\n"
        "print(open('drop.txt').read())\n"
        "os.makedirs('out', exist_ok=True)\n"
        "with open('out/result.bin', 'wb') as f:\n"
        "    f.write(bytes(range(256)))\n")
    assert r["stdout"] == "dropped!\n"
    listed = {f["name"]: f["size"] for f in files()}
    assert {"data.txt": 12, "drop.txt": 8, "out/result.bin": 256}.items() <= listed.items(), listed

    with page.expect_download() as dl:
        page.locator("#files a", has_text="out/result.bin").click()
    assert dl.value.suggested_filename == "result.bin"
    with open(dl.value.path(), "rb") as f:
        assert f.read() == bytes(range(256))
    with page.expect_download() as dl:
        page.locator("#files a", has_text="data.txt").click()
    with open(dl.value.path(), "rb") as f:
        assert f.read() == b"uploaded \xc3\xa9\n"

    playground.run_ok("import os, shutil\nos.remove('data.txt'); os.remove('drop.txt'); shutil.rmtree('out')")
    assert not {"data.txt", "drop.txt", "out/result.bin"} & {f["name"] for f in files()}
    assert playground.errors == [], playground.errors
