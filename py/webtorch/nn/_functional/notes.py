"""nn.functional's documentation dicts (PyTorch formats its docstrings with them) and two TorchScript-era
helpers it exports: assert_int_or_pair and boolean_dispatch."""

reproducibility_notes = {
    "forward_reproducibility_note": "This operation may behave nondeterministically when given tensors on a CUDA "
                                    "device. See :doc:`/notes/randomness` for more information.",
    "backward_reproducibility_note": "This operation may produce nondeterministic gradients when given tensors on a "
                                     "CUDA device. See :doc:`/notes/randomness` for more information.",
    "cudnn_reproducibility_note": "In some circumstances when given tensors on a CUDA device and using CuDNN, this "
                                  "operator may select a nondeterministic algorithm to increase performance. If this "
                                  "is undesirable, you can try to make the operation deterministic (potentially at a "
                                  "performance cost) by setting ``torch.backends.cudnn.deterministic = True``. See "
                                  ":doc:`/notes/randomness` for more information.",
}

sparse_support_notes = {
    "sparse_beta_warning": "\n.. warning::\n    Sparse support is a beta feature and some layout(s)/dtype/device "
                           "combinations may not be supported,\n    or may not have autograd support. If you notice "
                           "missing functionality please\n    open a feature request.",
}

tf32_notes = {"tf32_note": "This operator supports :ref:`TensorFloat32<tf32_on_ampere>`."}


def assert_int_or_pair(arg, arg_name, message):
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


boolean_dispatched = {}  # fn -> its two functions and flag (TorchScript reads it)


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function calling if_true or if_false by a boolean argument (by name, else position, else default)."""
    def fn(*args, **kwargs):
        flag = kwargs[arg_name] if arg_name in kwargs else args[arg_index] if arg_index < len(args) else default
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is not None and if_false.__doc__ is not None:
        raise RuntimeError("only one function can have a docstring")
    doc = if_true.__doc__ if if_true.__doc__ is not None else if_false.__doc__
    if_true.__doc__ = if_false.__doc__ = fn.__doc__ = doc
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    boolean_dispatched[fn] = {"if_true": if_true, "if_false": if_false, "index": arg_index, "default": default,
                              "arg_name": arg_name}
    return fn
