"""GPU drivers of the WebGPU backend: the protocol (`driver.py`) and its two implementations,
`native.py` (wgpu-py) and `browser.py` (navigator.gpu through pyodide.ffi)."""
