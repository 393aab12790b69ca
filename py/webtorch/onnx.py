"""torch.onnx: importable, so files that import it at the top load; export is not implemented."""


def export(*args, **kwargs):
    raise NotImplementedError("torch.onnx.export is not implemented in webtorch yet: export the model from "
                              "PyTorch (load its state_dict there; state dicts load both ways)")
