"""torch._dynamo.exc: the exceptions torch.compile raises (PyTorch's classes and bases)."""


class TorchDynamoException(RuntimeError):
    pass


class Unsupported(TorchDynamoException):
    """What the compiler cannot capture in one graph (raised with fullgraph=True, naming the user's line)."""

    def __init__(self, msg, gb_type=""):
        super().__init__(msg)
        self.msg, self.gb_type = msg, gb_type


class InvalidBackend(TorchDynamoException):
    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available backends.")


class RecompileError(TorchDynamoException):
    pass


class FailOnRecompileLimitHit(Exception):
    pass
