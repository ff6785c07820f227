#!/usr/bin/env python3
"""Writes a safetensors file with the header of another one and random values.

For timing a model compiled with --weights=external on a machine the real weights file cannot
travel to: only the header (a few kB) has to. Load the result with
`sinter run MODEL.so --weights OUT --allow-new-weights`. The values are bf16/f16/f32 numbers of
magnitude in [1/128, 1/64) with random signs (integer tensors get small non-negative values):
finite, so no kernel sees NaN or infinity, and meaningless, so use them for timing only.

    python3 random_weights.py --like model.safetensors --out random.safetensors
    python3 random_weights.py --like-header header.bin --out random.safetensors
    python3 random_weights.py --save-header model.safetensors header.bin
"""
import argparse
import json
import struct
import sys

import numpy as np

# Sign | exponent bits of values in [2^-7, 2^-6), per dtype: the random low bits fill the mantissa.
PATTERNS = {"BF16": (np.uint16, 0x3C00, 0x807F), "F16": (np.uint16, 0x2000, 0x83FF),
            "F32": (np.uint32, 0x3C000000, 0x807FFFFF)}
CHUNK = 64 << 20


def read_header(path):
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            sys.exit(f"random_weights: {path}: not a safetensors file (shorter than 8 bytes)")
        (n,) = struct.unpack("<Q", raw)
        if n > 100 << 20:
            sys.exit(f"random_weights: {path}: header of {n} bytes is implausible")
        text = f.read(n)
    if len(text) != n:
        sys.exit(f"random_weights: {path}: truncated header")
    return raw + text, json.loads(text)


def write_random(header_bytes, header, out, seed):
    rng = np.random.default_rng(seed)
    tensors = sorted((v["data_offsets"][0], v["data_offsets"][1], v["dtype"])
                     for k, v in header.items() if k != "__metadata__")
    with open(out, "wb") as f:
        f.write(header_bytes)
        pos = 0
        for begin, end, dtype in tensors:
            if begin != pos:
                sys.exit(f"random_weights: data offsets are not contiguous at byte {begin}")
            left = end - begin
            while left:
                n = min(left, CHUNK)
                if dtype in PATTERNS:
                    t, base, mask = PATTERNS[dtype]
                    words = n // np.dtype(t).itemsize
                    v = (rng.integers(0, np.iinfo(t).max, words, dtype=t) & t(mask)) | t(base)
                    f.write(v.tobytes())
                    f.write(bytes(n - v.nbytes))
                else:
                    f.write((rng.integers(0, 4, n, dtype=np.uint8)).tobytes())
                left -= n
            pos = end


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--like", help="safetensors file whose header to copy")
    g.add_argument("--like-header", help="header file written by --save-header")
    g.add_argument("--save-header", nargs=2, metavar=("SAFETENSORS", "OUT"),
                   help="write the header of SAFETENSORS to OUT and exit")
    p.add_argument("--out", help="safetensors file to write")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    if a.save_header:
        raw, _ = read_header(a.save_header[0])
        with open(a.save_header[1], "wb") as f:
            f.write(raw)
        return
    if not a.out:
        p.error("--out is required")
    raw, header = read_header(a.like or a.like_header)
    write_random(raw, header, a.out, a.seed)


if __name__ == "__main__":
    main()
