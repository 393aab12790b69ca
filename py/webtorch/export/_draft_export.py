"""torch.export.draft_export's report: what export would have refused, as PyTorch's DraftExportReport
(`ep._report`): a traced tensor's value read as a Python number (the graph keeps this example's branch), a
dynamic dim the graph cannot express (the dim is specialized to the example's size)."""
import enum
import os
import traceback

from .. import fx
from ..overrides import _tracing

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class FailureType(enum.IntEnum):
    MISSING_FAKE_KERNEL = 1
    DATA_DEPENDENT_ERROR = 2
    GUARD_ADDED = 3
    MISMATCHED_FAKE_KERNEL = 4

    def __str__(self):
        return self.name


def _user_stack():
    """The caller's frames outside webtorch (where the user's program read the value)."""
    frames = [f for f in traceback.extract_stack() if not os.path.abspath(f.filename).startswith(_PACKAGE)]
    return [{"filename": f.filename, "line": f.lineno, "name": f.name, "loc": f.line} for f in frames[-3:]]


class FailureReport:
    def __init__(self, failure_type, data, xfail=False):
        self.failure_type, self.data, self.xfail = failure_type, data, xfail

    def __repr__(self):
        return f"FailureReport(failure_type={self.failure_type}, xfail={self.xfail}, data={self.data})"

    def print(self, str_to_filename=None):
        stack = "".join(f"\n        File {f['filename']}, lineno {f['line']}, in {f['name']}\n            {f['loc']}"
                        for f in self.data.get("user_stack", ()))
        if self.failure_type == FailureType.DATA_DEPENDENT_ERROR:
            return (f"Data dependent error.\n    When exporting, we were unable to evaluate the value of "
                    f"`{self.data['expr']}`.\n    This was encountered {self.data['occurrences']} times.\n"
                    f"    This occurred at the following user stacktrace: {stack}\n\n"
                    "    As a result, it was specialized to the example's value and the graph keeps the branch "
                    "this example took.\n")
        return (f"Guard Added.\n    {self.data['expr']}\n    Because of this, we have modified the dynamic shapes "
                f"structure to be the following.\n    ```\n    dynamic_shapes = {self.data['new_dynamic_shapes']}\n"
                "    ```\n")


class DraftExportReport:
    def __init__(self, failures, str_to_filename=None, expressions_created=None, op_profiles=None):
        self.failures = failures
        self.str_to_filename = str_to_filename or {}
        self.expressions_created = expressions_created or {}
        self.op_profiles = op_profiles or {}

    def successful(self):
        return len(self.failures) == 0 or all(f.xfail for f in self.failures)

    def __repr__(self):
        return f"DraftExportReport({self.failures})"

    def __str__(self):
        if self.successful():
            return ("\033[92m\n" + "#" * 94 + "\nCongratulations: No issues are found during export, and it was able "
                    "to soundly produce a graph.\nYou can now change back to torch.export.export()\n" + "#" * 94
                    + "\n\033[0m")
        text = ("\033[93m\n" + "#" * 99 + f"\nWARNING: {len(self.failures)} issue(s) found during export, and it was "
                "not able to soundly produce a graph.\nPlease follow the instructions to fix the errors.\n" + "#" * 99
                + "\n")
        for i, f in enumerate(self.failures):
            text += f"{i + 1}. {f.print(self.str_to_filename)}\n"
        return text + "\033[0m"

    def apply_suggested_fixes(self):
        raise NotImplementedError("Not implemented yet")


@fx.has_side_effect
def _assert_read(t, what, expected):
    """draft_export's runtime assert where the program read a traced value: the value the example read."""
    if getattr(t, what)() != expected:
        raise RuntimeError(f"Runtime assertion failed for expression Tensor.{what}() == {expected!r}: the exported "
                           "program kept the branch of the example draft_export traced")


_assert_read._fx_target_name = "torch.export._draft_export._assert_read"


class _Collector:
    """on_value_read for the tracer: one DATA_DEPENDENT_ERROR per place in the user's program (counted), and a
    runtime assert in the graph that the value read is the example's (as PyTorch's deferred runtime asserts)."""

    def __init__(self):
        self.failures = {}

    def __call__(self, t, what):
        tracer = _tracing[0]
        tracer._depth += 1  # read the value without recording
        try:
            expected = getattr(t, what)()
        finally:
            tracer._depth -= 1
        tracer.graph.call_function(_assert_read, (tracer.node_of(t), what, expected), meta={"val": None})
        stack = _user_stack()
        key = tuple((f["filename"], f["line"]) for f in stack)
        if key in self.failures:
            self.failures[key].data["occurrences"] += 1
            return
        self.failures[key] = FailureReport(FailureType.DATA_DEPENDENT_ERROR, {
            "expr": f"Tensor.{what}", "user_stack": stack, "occurrences": 1})
