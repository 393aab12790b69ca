"""`np`: numpy, imported at the first attribute read. The element-wise records' numpy forms
(`elementwise.py`, `_special.py`) name it without making `import webtorch` import numpy (the numpy
backend imports it when the first cpu tensor is made) or need it at all (Pyodide offline has none)."""


class _Numpy:
    def __getattr__(self, name):
        import numpy  # an optional dependency
        value = getattr(numpy, name)
        setattr(self, name, value)  # read from the instance from now on
        return value


np = _Numpy()
