"""The playground as a new user meets it: start stages and the Run button while loading, code
kept across reloads, confirm before an example replaces edits, tracebacks at the user's line,
tqdm/einops and the no-numpy error, the layout at desktop and phone widths, the graph's fit."""
import re

from pwutil import open_playground

STAGES = """() => {
  window.__stages = [];
  new MutationObserver(() => {
    const t = document.getElementById('status-text'), p = document.getElementById('progress');
    if (t) window.__stages.push([t.textContent, p ? p.value : null]);
  }).observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
}"""


def test_start_stages_run_state_persistence_and_confirm(browser, server):
    pg = open_playground(browser, server, wait_ready=False, init_script=f"({STAGES})()")
    page = pg.page
    try:
        page.wait_for_selector("#run")
        assert page.is_disabled("#run") and page.inner_text("#run") == "Loading…"
        page.wait_for_function("() => window.webtorchPlayground !== undefined")
        page.evaluate("() => window.webtorchPlayground.ready")
        assert page.is_enabled("#run") and "Run" in page.inner_text("#run")
        stages = page.evaluate("() => window.__stages")
        texts = [t for t, _ in stages]
        assert any(re.fullmatch(r"Downloading Python and webtorch: [0-9.]+ of [0-9.]+ MB", t) for t in texts), texts
        restored = "python restored (shipped)" in [n for n, _ in pg.ready()["stages"]]
        order = [next(i for i, t in enumerate(texts) if t.startswith(s))  # a restored snapshot has webtorch imported
                 for s in ("Downloading", "Starting Python", *([] if restored else ["Importing webtorch"]), "Ready")]
        assert order == sorted(order), texts
        progress = [p for _, p in stages if p is not None]
        assert progress == sorted(progress) and progress[-1] == 1, stages

        # an example's name shows only while its code is unedited; edits survive a reload
        examples = page.evaluate("() => window.webtorchPlayground.examples")
        assert page.input_value("#examples") == examples[0]["name"]
        page.click(".cm-content")
        page.keyboard.press("Control+End")
        page.keyboard.type("\nprint('mine')")
        assert page.input_value("#examples") == ""
        code = page.evaluate("() => window.webtorchPlayground.getCode()")
        dialogs = []

        def answer(d, accept):
            dialogs.append(d.message)
            d.accept() if accept else d.dismiss()

        page.once("dialog", lambda d: answer(d, False))
        page.select_option("#examples", examples[1]["name"])
        assert dialogs and "Replace your code" in dialogs[0]
        assert page.evaluate("() => window.webtorchPlayground.getCode()") == code
        assert page.input_value("#examples") == ""
        page.wait_for_timeout(400)  # the code is stored 200 ms after the last edit
        page.reload()
        page.wait_for_function("() => window.webtorchPlayground && window.webtorchPlayground.examples.length")
        assert page.evaluate("() => window.webtorchPlayground.getCode()") == code
        page.once("dialog", lambda d: answer(d, True))
        page.select_option("#examples", examples[1]["name"])
        assert page.evaluate("() => window.webtorchPlayground.getCode()") == examples[1]["code"]
        assert page.input_value("#examples") == examples[1]["name"]
        # Ctrl+Enter runs
        page.evaluate("() => window.webtorchPlayground.ready")
        page.evaluate("() => window.webtorchPlayground.setCode('print(6 * 7)')")
        page.click(".cm-content")
        page.keyboard.press("Control+Enter")
        page.wait_for_function("() => document.getElementById('output').textContent.includes('42')")
        assert pg.errors == [], pg.errors
    finally:
        pg.context.close()


def test_traceback_shows_the_users_frames_and_marks_the_line(playground, webtorch_loaded):
    page = playground.page
    code = "import torch\n\nlin = torch.nn.Linear(4, 3)\nx = torch.randn(2, 5)\ny = lin(x)\n"
    page.evaluate("c => window.webtorchPlayground.setCode(c)", code)
    r = page.evaluate("() => window.webtorchPlayground.run()")
    assert r["ok"] is False
    err = r["stderr"]
    assert err.count('File "') == 1 and 'File "<playground>", line 5' in err, err
    assert err.rstrip().endswith("RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x5 and 4x3)"), err
    assert "webtorch" not in err, err
    marked = page.eval_on_selector_all(".cm-error-line", "ls => ls.map(l => l.textContent)")
    assert marked == ["y = lin(x)"], marked
    toggle = page.locator("#output details.full-traceback")
    assert re.match(r"\d+ frames? inside webtorch hidden", toggle.locator("summary").inner_text())
    toggle.locator("summary").click()
    assert "webtorch/nn/" in toggle.inner_text()
    playground.run_ok("print('next')")
    assert page.eval_on_selector_all(".cm-error-line", "ls => ls.length") == 0


def test_tqdm_einops_and_no_numpy(playground, webtorch_loaded):
    r = playground.run_ok(
        "import torch\nfrom tqdm import tqdm\nfrom einops import rearrange\n"
        "for i in tqdm(range(3), desc='steps'):\n    pass\n"
        "print(rearrange(torch.arange(6).reshape(2, 3), 'a b -> b a').tolist())\n"
        "try:\n    torch.ones(2).numpy()\nexcept ModuleNotFoundError as e:\n    print(type(e).__name__, e)\n")
    out = r["stdout"].splitlines()
    assert out[0] == "[[0, 3], [1, 4], [2, 5]]", r
    assert out[1].startswith("ModuleNotFoundError numpy is not installed here") and "tolist()" in out[1], r
    assert "steps: 100%" in r["stderr"] and "3/3" in r["stderr"], r
    assert "Warning" not in r["stderr"], r
    # the bar redraws in place ("\r"): the output panel shows its last state, once
    text = playground.output_text()
    assert text.count("steps:") == 1 and "steps: 100%" in text, text


def test_layout_desktop_and_phone(playground):
    page = playground.page
    assert page.evaluate("() => getComputedStyle(document.querySelector('.panel-head')).textTransform") == "none"
    playground.run_ok("print('no plot, no graph')")
    # the empty plot and graph panels fold to their title bars: the output takes the room
    heights = {p: page.locator(f"#{p}-panel").bounding_box()["height"] for p in ("output", "plot", "graph")}
    assert heights["plot"] < 40 and heights["graph"] < 40 and heights["output"] > 400, heights
    try:
        for width in (1280, 420):
            page.set_viewport_size({"width": width, "height": 800})
            page.wait_for_timeout(100)
            assert page.evaluate("() => document.documentElement.scrollWidth") <= width
            box = page.locator("#run").bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= width and box["y"] < 800, (width, box)
        page.set_viewport_size({"width": 1280, "height": 800})
        # the split between editor and panels moves with a drag
        split = page.locator("#split").bounding_box()
        before = page.locator("#editor-pane").bounding_box()["width"]
        page.mouse.move(split["x"] + 2, split["y"] + 100)
        page.mouse.down()
        page.mouse.move(split["x"] - 200, split["y"] + 100)
        page.mouse.up()
        assert abs(page.locator("#editor-pane").bounding_box()["width"] - (before - 202)) < 10
        # long lines wrap in the editor: no horizontal scroll
        page.evaluate("() => window.webtorchPlayground.setCode('x = ' + '1 + '.repeat(400) + '1')")
        assert page.evaluate("() => { const s = document.querySelector('.cm-scroller'); "
                             "return s.scrollWidth <= s.clientWidth; }")
    finally:
        page.set_viewport_size({"width": 1280, "height": 800})
        page.evaluate("() => document.documentElement.style.removeProperty('--editor-width')")


def test_graph_fits_the_panel_and_zooms(playground):
    page = playground.page
    # a wide graph: a chain of 30 nodes
    playground.run_ok("import torch\nx = torch.ones(2, requires_grad=True)\ny = x\n"
                      "for i in range(30):\n    y = y * 1.5 + 1\nshow_graph(y.sum(), title='y = chain')\n")
    assert page.inner_text("#graph-panel .panel-head").startswith("Autograd graph: y = chain")
    panel = page.locator("#graph").bounding_box()
    svg = page.locator("#graph svg")
    nodes = page.locator("#graph svg .graph-node").evaluate_all(
        "ns => ns.map(n => { const b = n.getBoundingClientRect(); return [b.left, b.right, b.top, b.bottom]; })")
    assert len(nodes) > 30
    left, right = panel["x"] - 1, panel["x"] + panel["width"] + 1
    assert all(left <= a and b <= right for a, b, _, _ in nodes), (panel, nodes[:3])
    view = svg.get_attribute("viewBox")
    page.click("#zoom-in")
    assert svg.get_attribute("viewBox") != view
    page.click("#zoom-fit")
    assert svg.get_attribute("viewBox") == view
