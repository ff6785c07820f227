#!/usr/bin/env python3
"""Writes the seed corpus of sinter-weights-fuzz: safetensors files holding the fuzzer's table
(f32 [4,4] "w1", f32 [4] "b1", bf16 [2,3] "w2", an fp8 weight as --weight-dtype fp8 writes
it: e4m3 [2,64] "w3.fp8" with f32 [2] "w3.fp8_scale", and an int4 weight as --weight-dtype int4
writes it: u8 [2,64] "w4.int4" (K = 128, two 4-bit values a byte) with f32 [2,1]
"w4.int4_scale"; byte j of each tensor is (j * 7 + 1) & 0xff).
Run from fuzz/: python3 make_weights_seeds.py. The outputs are committed (without the
.safetensors extension, which .gitignore excludes)."""
import json
import os
import struct

TABLE = [("w1", "F32", [4, 4], 64), ("b1", "F32", [4], 16), ("w2", "BF16", [2, 3], 12),
         ("w3.fp8", "F8_E4M3", [2, 64], 128), ("w3.fp8_scale", "F32", [2], 8),
         ("w4.int4", "U8", [2, 64], 128), ("w4.int4_scale", "F32", [2, 1], 8)]


def values(n):
    return bytes((j * 7 + 1) & 0xFF for j in range(n))


def write(path, order, metadata=None, extra=()):
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, nbytes in [t for n in order for t in TABLE if t[0] == n] + list(extra):
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + nbytes]}
        data += values(nbytes)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def main():
    os.makedirs("corpus/weights", exist_ok=True)
    write("corpus/weights/table-order",
          ["w1", "b1", "w2", "w3.fp8", "w3.fp8_scale", "w4.int4", "w4.int4_scale"])
    write("corpus/weights/reversed",
          ["w4.int4_scale", "w4.int4", "w3.fp8_scale", "w3.fp8", "w2", "b1", "w1"],
          {"format": "pt"})
    write("corpus/weights/extra-tensor",
          ["b1", "w3.fp8", "w4.int4", "w1", "w3.fp8_scale", "w2", "w4.int4_scale"],
          extra=[("lora_A", "F16", [2, 2], 8)])


if __name__ == "__main__":
    main()
