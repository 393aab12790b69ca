"""WebGPU capture and replay in the browser (py/webtorch/backends/webgpu/capture.py over
browser.py): a captured MLP training step replayed in Pyodide, one JS call per replay, gives
the parameters of the same steps run eagerly; a torch.compile step split at a graph break replays; a compiled
module trained by a loop outside it replays its forward and backward."""
from pwutil import open_playground, py_json

CODE = r'''
import json, random
import torch
import torch.nn.functional as F
from webtorch.backends import webgpu

be = webgpu.get_backend()
random.seed(0)
def rnd(*s, sc=1.0):
    return torch.tensor([random.gauss(0, sc) for _ in range(s[0] * (s[1] if len(s) > 1 else 1))]).reshape(s)
xs = [rnd(16, 64) for _ in range(5)]
ys = [torch.tensor([random.randrange(10) for _ in range(16)]) for _ in range(5)]
init = [rnd(32, 64, sc=0.1), rnd(32, sc=0.01), rnd(10, 32, sc=0.1), rnd(10, sc=0.01)]

def model():
    ps = [p.to("webgpu").requires_grad_() for p in init]
    opt = torch.optim.SGD(ps, lr=0.1, momentum=0.9)
    def step(x, y):
        h = F.dropout((x @ ps[0].t() + ps[1]).relu(), 0.25)
        loss = F.cross_entropy(h @ ps[2].t() + ps[3], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return ps, step

X = [x.to("webgpu") for x in xs]
Y = [y.to("webgpu") for y in ys]
torch.manual_seed(1)
pe, step_e = model()
le = [step_e(x, y).item() for x, y in zip(X, Y)]
torch.manual_seed(1)
pc, step_c = model()
lc = [step_c(X[0], Y[0]).item()]
xin, yin = X[1].clone(), Y[1].clone()
with be.capture() as cap:
    loss = step_c(xin, yin)
prog = cap.program(inputs=[xin, yin], outputs=[loss])
lc.append(loss.item())
impl = prog._impl
calls = [0]
fn = impl.fn
def counted(*a):
    calls[0] += 1
    return fn(*a)
impl.fn = counted
d = be.driver
s0 = d.submits
outs = [prog.replay([X[i], Y[i]])[0] for i in range(2, 5)]
submits = d.submits - s0
lc += [o.item() for o in outs]
diff = max(abs(float(a) - float(b)) for p, q in zip(pc, pe)
           for a, b in zip(p.detach().cpu().flatten().tolist(), q.detach().cpu().flatten().tolist()))
print(json.dumps({"le": le, "lc": lc, "diff": diff, "calls": calls[0], "submits": submits,
                  "dispatches": prog.dispatches, "eliminated": prog.eliminated, "kind": type(impl).__name__}))
'''


def test_replay_training_step_in_pyodide(playground):
    check_replay(py_json(playground.run_ok(CODE)))


def test_replay_evaluated_without_the_workers_function(browser, server):
    """A bare Pyodide (no CSP, no `webtorchReplay` from the playground's bundle): the driver
    evaluates its replay.js itself."""
    pg = open_playground(browser, server, worker_eval=True)
    try:
        r = pg.run_ok("from pyodide.code import run_js\nrun_js('delete globalThis.webtorchReplay')\n"
                      "import js\nassert not hasattr(js, 'webtorchReplay')\n" + CODE)
        check_replay(py_json(r))
    finally:
        pg.context.close()


def check_replay(j):
    assert j["kind"] == "_BrowserReplay"
    assert j["calls"] == 3                      # one JS call per replay
    assert j["submits"] == 3                     # one per replay
    assert j["diff"] < 1e-5, j
    for a, b in zip(j["lc"], j["le"]):
        assert abs(a - b) < 1e-5 * max(1.0, abs(b)), j


BREAK_CODE = r'''
import json
import torch
import torch.nn.functional as F
from webtorch._dynamo.eval_frame import compiled_state
from webtorch._dynamo.utils import counters

def run(compiled):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).to("webgpu")
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    losses = []

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        return loss
    fn = torch.compile(step) if compiled else step
    g = torch.Generator().manual_seed(1)
    for _ in range(8):
        fn(torch.randn(4, 8, generator=g).to("webgpu"), torch.randint(0, 3, (4,), generator=g).to("webgpu"))
    return losses, fn

counters.clear()
le, _ = run(False)
lc, fn = run(True)
plan = compiled_state(fn).plan
print(json.dumps({"le": le, "lc": lc, "segments": plan and [s.eager for s in plan.segments],
                  "replays": counters["webgpu"]["replays"], "refused": dict(counters["replay_refused"])}))
'''


def test_compiled_step_with_break_splits_in_pyodide(playground):
    """In the playground (source known through linecache, Pyodide's Python), a compiled step with
    `losses.append(loss.item())` after opt.step() splits there: the step before it replays, the losses equal eager."""
    j = py_json(playground.run_ok(BREAK_CODE))
    assert j["segments"] == [False, True, False], j
    assert j["replays"] >= 4, j
    for a, b in zip(j["lc"], j["le"]):
        assert abs(a - b) < 1e-5 * max(1.0, abs(b)), j


MODULE_CODE = r'''
import json
import torch
import torch.nn.functional as F
import torch._inductor.config
from webtorch._dynamo.utils import counters

torch.set_float32_matmul_precision("high")  # a training script's preamble (the config modules are in the wheel)
torch._inductor.config.coordinate_descent_tuning = True
torch._dynamo.config.cache_size_limit = 16

def run(compiled):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).to("webgpu")
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    f = torch.compile(model) if compiled else model
    g = torch.Generator().manual_seed(1)
    losses, nodes = [], []
    for _ in range(8):
        x, y = torch.randn(4, 8, generator=g).to("webgpu"), torch.randint(0, 3, (4,), generator=g).to("webgpu")
        opt.zero_grad()
        out = f(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        nodes.append(out.grad_fn.name())
    return losses, nodes

counters.clear()
le, _ = run(False)
lc, nodes = run(True)
print(json.dumps({"le": le, "lc": lc, "nodes": nodes, "replays": counters["webgpu"]["replays"],
                  "refused": dict(counters["replay_refused"]), "precision": torch.get_float32_matmul_precision(),
                  "limit": torch._dynamo.config.recompile_limit}))
'''


def test_compiled_module_trained_outside_in_pyodide(playground):
    """torch.compile(model) with zero_grad / backward / step in the user's loop: calls 4+ replay the forward and,
    through a CompiledFunctionBackward node, the backward; the losses equal eager."""
    j = py_json(playground.run_ok(MODULE_CODE))
    assert j["replays"] == 5, j
    assert j["nodes"][3:] == ["CompiledFunctionBackward"] * 5, j
    assert (j["precision"], j["limit"]) == ("high", 16), j
    for a, b in zip(j["lc"], j["le"]):
        assert abs(a - b) < 1e-5 * max(1.0, abs(b)), j


ADAM_CODE = r'''
import json, random
import torch
from webtorch.backends import webgpu

be = webgpu.get_backend()
random.seed(2)
shapes = [(6, 5), (5,)]
def rnd(s):
    return torch.tensor([random.gauss(0, 1) for _ in range(s[0] * (s[1] if len(s) > 1 else 1))]).reshape(s)
init = [rnd(s) for s in shapes]
grads = [[rnd(s) for s in shapes] for _ in range(6)]

def run(dev, capture):
    ps = [p.detach().clone().to(dev).requires_grad_() for p in init]
    opt = torch.optim.AdamW(ps, lr=0.05, weight_decay=0.1, amsgrad=True)
    gs = [[g.to(dev) for g in step] for step in grads]
    def step(i):
        for p, g in zip(ps, gs[i]):
            p.grad = g
        opt.step()
    counts = []
    for i in range(3 if capture else 6):
        d0 = webgpu.dispatch_count()
        step(i)
        counts.append(webgpu.dispatch_count() - d0)
    if capture:                 # step 4 recorded (the step count moves to the device), 5-6 replayed
        with be.capture() as cap:
            step(3)
        prog = cap.program()
        for i in (4, 5):
            for p, g in zip(ps, gs[i]):
                p.grad.copy_(g)  # the recorded gradient buffers, refilled
            prog.replay()
    return [p.detach().cpu().flatten().tolist() for p in ps], counts

want, _ = run("cpu", False)
eager, counts = run("webgpu", False)
replayed, _ = run("webgpu", True)
diff = lambda a, b: max(abs(x - y) for p, q in zip(a, b) for x, y in zip(p, q))
print(json.dumps({"eager": diff(eager, want), "replayed": diff(replayed, want), "counts": counts}))
'''


def test_fused_adamw_eager_and_replayed_in_pyodide(playground):
    """The fused AdamW step (amsgrad, weight decay) in the browser: one dispatch per parameter
    eagerly, and replayed with its step count on the device; both equal the cpu backend's."""
    j = py_json(playground.run_ok(ADAM_CODE))
    assert j["counts"][1:] == [2] * 5, j
    assert j["eager"] < 1e-6 and j["replayed"] < 1e-5, j
