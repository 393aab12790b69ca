"""The webtorch playground server: a small FastAPI app that serves the playground (web/),
the Pyodide runtime (node_modules/pyodide) and the webtorch wheel. It runs no user code:
user code runs in the browser, inside Pyodide."""

from .app import create_app

__all__ = ["create_app"]
