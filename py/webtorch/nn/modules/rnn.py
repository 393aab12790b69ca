"""RNN, LSTM, GRU and their cells (as torch/nn/modules/rnn.py), composed from differentiable ops.

A layer direction computes the input projection of every time step at once (one matmul over the
whole sequence, `x @ W_ih^T + b_ih`); each step then costs one matmul (`h @ W_hh^T`) and the
gate math, whose element-wise ops all have the step's (batch, hidden) shape and read the
projections through plain slices, so on webgpu they fuse into one kernel (backends/webgpu/lazy.py).
Sequences of different lengths (PackedSequence) run as one batch that shrinks (forward
direction) or grows (reverse direction) where sequences end.
"""
import math
import numbers
import warnings

from ...ops import _creation, linalg as _la, shape as _shape
from .. import functional as F, init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .linear import _empty
from .module import Module, _keep, _repr_unless_default

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


def apply_permutation(tensor, permutation, dim=1):
    warnings.warn("`apply_permutation` is deprecated, please use `tensor.index_select(dim, permutation)` instead",
                  FutureWarning, stacklevel=2)
    return _apply_permutation(tensor, permutation, dim)


def _fold_bias(mode, b_ih, b_hh):
    """(bias of the input projection, b_hn): b_hh joins b_ih, but for GRU's new gate, where it is scaled by r."""
    if b_hh is None:
        return b_ih, None
    if mode != "GRU":
        return b_ih + b_hh, None
    H = b_hh.shape[0] // 3
    return b_ih + F.pad(b_hh[:2 * H], (0, H)), b_hh[2 * H:]


def _cell_math(mode, xg, hg, b_hn, h, c):
    """One step's gate math from xg = x W_ih^T + b_ih (+ b_hh) and hg = h W_hh^T: (h', c'), c' None but for
    LSTM; b_hn is GRU's b_hh of the new gate."""
    n = _GATES[mode]
    xs, hs = xg.chunk(n, 1), hg.chunk(n, 1)
    if mode == "GRU":
        r, z = (xs[0] + hs[0]).sigmoid(), (xs[1] + hs[1]).sigmoid()
        n_ = (xs[2] + r * (hs[2] if b_hn is None else hs[2] + b_hn)).tanh()
        return n_ + z * (h - n_), None
    pre = [a + b for a, b in zip(xs, hs)]
    if mode == "LSTM":
        i, f, g, o = pre[0].sigmoid(), pre[1].sigmoid(), pre[2].tanh(), pre[3].sigmoid()
        c = f * c + i * g
        return o * c.tanh(), c
    return (pre[0].tanh() if mode == "RNN_TANH" else F.relu(pre[0])), None


def _direction(mode, x, batch_sizes, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, reverse):
    """One layer, one direction over packed rows x (sum(batch_sizes), in): (output rows, h_n, c_n)."""
    b_x, b_hn = _fold_bias(mode, b_ih, b_hh)
    xs = F.linear(x, w_ih, b_x).split(batch_sizes)
    w_hh_t = w_hh.t()
    w_hr_t = None if w_hr is None else w_hr.t()
    T = len(batch_sizes)
    steps = range(T - 1, -1, -1) if reverse else range(T)
    n0 = batch_sizes[steps[0]]
    h, c = h0[:n0], (None if c0 is None else c0[:n0])
    outs, done_h, done_c = [None] * T, [], []
    for t in steps:
        bs, cur = batch_sizes[t], h.shape[0]
        if bs < cur:      # forward direction: sequences that ended keep their last state
            done_h.append(h[bs:])
            h = h[:bs]
            if c is not None:
                done_c.append(c[bs:])
                c = c[:bs]
        elif bs > cur:    # reverse direction: sequences that start here begin from h0
            h = _shape.cat([h, h0[cur:bs]])
            if c is not None:
                c = _shape.cat([c, c0[cur:bs]])
        h, c = _cell_math(mode, xs[t], _la.matmul(h, w_hh_t), b_hn, h, c)
        if w_hr_t is not None:
            h = _la.matmul(h, w_hr_t)
        outs[t] = h
    done_h.append(h)
    done_c.append(c)

    def joined(parts):
        return parts[0] if len(parts) == 1 else _shape.cat(parts[::-1])
    return _shape.cat(outs), joined(done_h), (None if c is None else joined(done_c))


def _rnn(mode, x, batch_sizes, hx, cx, weights, has_bias, has_proj, num_layers, dropout, train, bidirectional):
    """All layers over packed rows x: (output rows, h_n, c_n)."""
    D = 2 if bidirectional else 1
    nw = 2 + 2 * has_bias + has_proj
    hs, cs = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(D):
            k = layer * D + d
            w = weights[k * nw:(k + 1) * nw]
            b_ih, b_hh = (w[2], w[3]) if has_bias else (None, None)
            out, h, c = _direction(mode, x, batch_sizes, hx[k], None if cx is None else cx[k], w[0], w[1], b_ih, b_hh,
                                   w[-1] if has_proj else None, d == 1)
            outs.append(out)
            hs.append(h)
            cs.append(c)
        x = outs[0] if D == 1 else _shape.cat(outs, 1)
        if dropout > 0 and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    return x, _shape.stack(hs), (None if cx is None else _shape.stack(cs))


def _run_sequence(mode, input, batch_sizes, hx, cx, weights, has_bias, has_proj, num_layers, dropout, train,
                  bidirectional, batch_first):
    """The layers on a (seq, batch, feature) input ((batch, seq, feature) when batch_first), or on packed rows
    (rows, feature) given their batch_sizes (a list): (output, h_n, c_n)."""
    packed = batch_sizes is not None
    if not packed:
        if batch_first:
            input = input.transpose(0, 1)
        T, B = input.shape[0], input.shape[1]
        batch_sizes = [B] * T
        input = input.reshape(T * B, input.shape[2])
    out, h, c = _rnn(mode, input, batch_sizes, hx, cx, weights, has_bias, has_proj, num_layers, dropout, train,
                     bidirectional)
    if not packed:
        out = out.reshape(T, B, out.shape[-1])
        if batch_first:
            out = out.transpose(0, 1)
    return out, h, c


def _sequence_function(mode):
    """torch.rnn_tanh / rnn_relu / lstm / gru: ATen's `input` overload (input, hx, params, has_biases, num_layers,
    dropout, train, bidirectional, batch_first) and its `data` one (data, batch_sizes, hx, params, has_biases,
    num_layers, dropout, train, bidirectional) over a packed sequence's rows. LSTM's hx is [h, c] and it returns
    (output, h_n, c_n); the others (output, h_n). params: each layer and direction's w_ih, w_hh[, b_ih, b_hh]
    [, w_hr]."""
    def fn(input, *args):
        if isinstance(args[2], (list, tuple)):  # the data overload: batch_sizes before hx
            batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = args
            batch_sizes, batch_first = batch_sizes.tolist(), False
        else:
            hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = args
            batch_sizes = None
        h0, c0 = (hx[0], hx[1]) if mode == "LSTM" else (hx, None)
        has_proj = len(params) > num_layers * (2 if bidirectional else 1) * (2 + 2 * has_biases)
        out, h, c = _run_sequence(mode, input, batch_sizes, h0, c0, list(params), has_biases, has_proj, num_layers,
                                  dropout, train, bidirectional, batch_first)
        return (out, h, c) if mode == "LSTM" else (out, h)
    fn.__name__ = fn.__qualname__ = mode.lower()
    return fn


def _cell_step(mode, input, h, c, w_ih, w_hh, b_ih, b_hh):
    b_x, b_hn = _fold_bias(mode, b_ih, b_hh)
    return _cell_math(mode, F.linear(input, w_ih, b_x), _la.matmul(h, w_hh.t()), b_hn, h, c)


def _cell_function(mode):
    """torch.rnn_tanh_cell / rnn_relu_cell / gru_cell (input, hx, w_ih, w_hh, b_ih=None, b_hh=None) -> h', and
    torch.lstm_cell (input, [h, c], ...) -> (h', c')."""
    def fn(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
        h, c = (hx[0], hx[1]) if mode == "LSTM" else (hx, None)
        for k, state in enumerate((h, c)[:1 + (mode == "LSTM")]):
            if input.size(0) != state.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{k} batch size "
                                   f"{state.size(0)}")
        h, c = _cell_step(mode, input, h, c, w_ih, w_hh, b_ih, b_hh)
        return (h, c) if mode == "LSTM" else h
    fn.__name__ = fn.__qualname__ = mode.lower() + "_cell"
    return fn


def _check_sizes(bias, batch_first, input_size, hidden_size, num_layers, proj_size):
    """RNNBase's argument checks, with PyTorch's messages."""
    if not isinstance(bias, bool):
        raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
    if not isinstance(batch_first, bool):
        raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
    if not isinstance(input_size, int):
        raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
    if input_size <= 0:
        raise ValueError("input_size must be greater than zero")
    if not isinstance(hidden_size, int):
        raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


class RNNBase(Module):
    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        _keep(self, mode=mode, input_size=input_size, hidden_size=hidden_size, num_layers=num_layers, bias=bias,
              batch_first=batch_first, dropout=float(dropout), bidirectional=bidirectional, proj_size=proj_size)
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        _check_sizes(bias, batch_first, input_size, hidden_size, num_layers, proj_size)
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes = [("weight_ih_l{}{}", (gate_size, layer_input_size)),
                          ("weight_hh_l{}{}", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n, _ in shapes]
                for name, (_, shape) in zip(names, shapes):
                    setattr(self, name, Parameter(_empty(*shape, **fk)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, w) for w in weights] for weights in self._all_weights]

    def flatten_parameters(self):
        """A no-op, as in PyTorch without cuDNN: the weights are used where they are."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input, batch_sizes):
        w = self._flat_weights[0]
        if input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). Convert input: "
                             f"input.to({w.dtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def _mini_batch(self, input, batch_sizes):
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.size(0) if self.batch_first else input.size(1)

    def get_expected_hidden_size(self, input, batch_sizes):
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, self._mini_batch(input, batch_sizes),
                self.proj_size if self.proj_size > 0 else self.hidden_size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self):
        return _repr_unless_default(self, "{input_size}, {hidden_size}", (
            ("proj_size", 0), ("num_layers", 1), ("bias", True), ("batch_first", False), ("dropout", 0),
            ("bidirectional", False)))

    def _zeros(self, input, batch, size):
        num_directions = 2 if self.bidirectional else 1
        return _creation.zeros(self.num_layers * num_directions, batch, size, dtype=input.dtype, device=input.device)

    def _run(self, input, batch_sizes, hx, cx):
        return _run_sequence(self.mode, input, batch_sizes, hx, cx, self._flat_weights, self.bias, self.proj_size > 0,
                             self.num_layers, self.dropout, self.training, self.bidirectional, self.batch_first)

    def _forward(self, input, hx):
        """RNN and GRU (LSTM overrides): (output, h_n) for a tensor or a PackedSequence."""
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is None:
                hx = self._zeros(data, int(batch_sizes[0]), self.hidden_size)
            else:
                hx = self.permute_hidden(hx, sorted_indices)
            self.check_forward_args(data, hx, batch_sizes)
            out, h, _ = self._run(data, batch_sizes.tolist(), hx, None)
            return PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden(h, unsorted_indices)
        if input.dim() not in (2, 3):
            tail = " tensor instead" if name == "RNN" else " instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tail}")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
        elif hx is not None and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        if hx is None:
            hx = self._zeros(input, self._mini_batch(input, None), self.hidden_size)
        self.check_forward_args(input, hx, None)
        out, h, _ = self._run(input, None, hx, None)
        if not is_batched:
            out, h = out.squeeze(batch_dim), h.squeeze(1)
        return out, h


class RNN(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, self._mini_batch(input, batch_sizes), self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def _zero_state(self, input, batch):
        return (self._zeros(input, batch, self.proj_size if self.proj_size > 0 else self.hidden_size),
                self._zeros(input, batch, self.hidden_size))

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is None:
                hx = self._zero_state(data, int(batch_sizes[0]))
            else:
                hx = self.permute_hidden(hx, sorted_indices)
            self.check_forward_args(data, hx, batch_sizes)
            out, h, c = self._run(data, batch_sizes.tolist(), hx[0], hx[1])
            return PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden((h, c), unsorted_indices)
        if input.dim() not in (2, 3):
            raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        if hx is None:
            hx = self._zero_state(input, self._mini_batch(input, None))
        else:
            want = 3 if is_batched else 2
            if hx[0].dim() != want or hx[1].dim() != want:
                kind = "batched 3-D" if is_batched else "unbatched 2-D"
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            if not is_batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx, None)
        out, h, c = self._run(input, None, hx[0], hx[1])
        if not is_batched:
            out, h, c = out.squeeze(batch_dim), h.squeeze(1), c.squeeze(1)
        return out, (h, c)


class RNNCellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_empty(num_chunks * hidden_size, input_size, **fk))
        self.weight_hh = Parameter(_empty(num_chunks * hidden_size, hidden_size, **fk))
        if bias:
            self.bias_ih = Parameter(_empty(num_chunks * hidden_size, **fk))
            self.bias_hh = Parameter(_empty(num_chunks * hidden_size, **fk))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check(self, input, states):
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for what, s in states:
            if s is not None and s.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {s.dim()}D instead")
        return input.dim() == 2

    def _step(self, mode, input, h, c):
        return _cell_step(mode, input, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)

    def _zero(self, input):
        return _creation.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)

    def _single(self, mode, input, hx):
        """RNNCell and GRUCell: h' for a (batch, in) or (in,) input."""
        is_batched = self._check(input, [("hidden", hx)])
        if not is_batched:
            input = input.unsqueeze(0)
        hx = self._zero(input) if hx is None else (hx if is_batched else hx.unsqueeze(0))
        ret = self._step(mode, input, hx, None)[0]
        return ret if is_batched else ret.squeeze(0)


class RNNCell(RNNCellBase):
    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return self._single("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", input, hx)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._single("GRU", input, hx)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        is_batched = self._check(input, [] if hx is None else [(f"hx[{i}]", v) for i, v in enumerate(hx)])
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = self._zero(input)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = self._step("LSTM", input, hx[0], hx[1])
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))
