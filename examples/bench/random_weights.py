#!/usr/bin/env python3
"""Writes a safetensors file with the header of another one and random values.

For timing a model compiled with --weights=external on a machine the real weights file cannot
travel to: only the header (a few kB) has to. Load the result with
`sinter run MODEL.so --weights OUT --allow-new-weights`. The values are bf16/f16/f32 numbers of
magnitude in [1/128, 1/64) and e4m3 numbers (`--weight-dtype fp8`, scaled by their f32 row
scales) in [1, 2), with random signs; U8 tensors (`--weight-dtype int4`: two 4-bit codes a
byte) get uniform random bytes, every code alike; other dtypes get random bytes 0..3: finite, so
no kernel sees NaN or infinity, and meaningless, so use them for timing only. numpy makes it
fast (2.5 GB in ~10 s); without it a pure-Python path does the same, slowly.

    python3 random_weights.py --like model.safetensors --out random.safetensors
    python3 random_weights.py --like-header header.bin --out random.safetensors
    python3 random_weights.py --save-header model.safetensors header.bin
"""
import argparse
import array
import json
import os
import struct
import sys

try:
    import numpy as np
except ImportError:  # pure Python below: slow, fine for small files (the tests)
    np = None

# Bytes per element, then the exponent bits of values in [2^-7, 2^-6) ([1, 2) for e4m3, which
# its row scale multiplies) and the mask of the random bits kept (sign and mantissa), per dtype.
PATTERNS = {"BF16": (2, 0x3C00, 0x807F), "F16": (2, 0x2000, 0x83FF),
            "F32": (4, 0x3C000000, 0x807FFFFF), "F8_E4M3": (1, 0x38, 0x87),
            "U8": (1, 0x00, 0xFF)}
WORDS = {1: ("B", "uint8"), 2: ("H", "uint16"), 4: ("I", "uint32")}
CHUNK = 64 << 20


def random_chunk(rng, n, dtype):
    """n bytes of random values of `dtype` (n a multiple of its size), as bytes."""
    if dtype not in PATTERNS:
        return bytes(b % 4 for b in os.urandom(n)) if np is None else \
            rng.integers(0, 4, n, dtype=np.uint8).tobytes()
    size, base, mask = PATTERNS[dtype]
    typecode, numpy_type = WORDS[size]
    if np is None:
        words = array.array(typecode, os.urandom(n))
        return array.array(words.typecode, ((w & mask) | base for w in words)).tobytes()
    t = getattr(np, numpy_type)
    v = (rng.integers(0, np.iinfo(t).max, n // size, dtype=t) & t(mask)) | t(base)
    return v.tobytes()


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
    rng = np.random.default_rng(seed) if np is not None else None
    tensors = sorted((v["data_offsets"][0], v["data_offsets"][1], v["dtype"])
                     for k, v in header.items() if k != "__metadata__")
    with open(out, "wb") as f:
        f.write(header_bytes)
        pos = 0
        for begin, end, dtype in tensors:
            if begin != pos:
                sys.exit(f"random_weights: data offsets are not contiguous at byte {begin}")
            left = end - begin
            size = PATTERNS.get(dtype, (1,))[0]
            if left % size:
                sys.exit(f"random_weights: a {dtype} tensor of {left} bytes")
            while left:
                n = min(left, CHUNK)
                f.write(random_chunk(rng, n, dtype))
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
    try:
        tensors = {k: v for k, v in header.items() if k != "__metadata__"}
        for k, v in tensors.items():
            if not isinstance(v, dict) or len(v.get("data_offsets", [])) != 2:
                raise ValueError(k)
    except (AttributeError, ValueError) as e:
        sys.exit(f"random_weights: malformed header entry {e}")
    write_random(raw, header, a.out, a.seed)


if __name__ == "__main__":
    main()
