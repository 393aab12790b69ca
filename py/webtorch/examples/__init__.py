"""Runnable examples: `python -m webtorch.examples.digits --device webgpu`."""
