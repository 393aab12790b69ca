"""Write web/data/digits.bin: a compact copy of scikit-learn's bundled 8x8 digits.

The browser has no scikit-learn, so the playground ships the data set as a web asset.
Source: `sklearn/datasets/data/digits.csv.gz` (1797 rows of 64 pixel values 0..16 and a
label 0..9), read directly with the standard library (scikit-learn need only be installed).

Format (little endian):
    bytes 0..3   magic b"DIG1"
    bytes 4..7   n   (uint32, 1797)
    bytes 8..11  d   (uint32, 64)
    n*d bytes    pixels, uint8 0..16, row-major
    n bytes      labels, uint8 0..9

Run: python web/tools/make_digits.py   (writes web/data/digits.bin)
"""
import csv
import gzip
import os
import struct
import sys


def main():
    import importlib.util
    spec = importlib.util.find_spec("sklearn")
    if spec is None:
        sys.exit("scikit-learn is not installed")
    src = os.path.join(os.path.dirname(spec.origin), "datasets", "data", "digits.csv.gz")
    with gzip.open(src, "rt") as f:
        rows = [[int(float(v)) for v in r] for r in csv.reader(f) if r]
    n, d = len(rows), len(rows[0]) - 1
    pixels = bytes(v for r in rows for v in r[:d])
    labels = bytes(r[d] for r in rows)
    assert max(pixels) <= 16 and max(labels) <= 9
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "digits.bin")
    with open(out, "wb") as f:
        f.write(b"DIG1" + struct.pack("<II", n, d) + pixels + labels)
    print(f"wrote {os.path.normpath(out)}: {n} x {d}")


if __name__ == "__main__":
    main()
