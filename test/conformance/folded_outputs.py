"""The outputs of a model that folded to constants, read from `sinter compile --compile-to=graph
--print-constants` (run_node_tests.py --phase fold): every input made an initializer, the graph
phase evaluates each import on the host, so an import's decomposition is checked against the
ONNX node tests' expected outputs on a machine without a GPU."""

import re

import numpy as np

# MLIR element type -> (numpy dtype of the printed bits, the node tests' dtype name)
ELEMENT_TYPES = {
    "f32": ("<f4", "float32"), "f16": ("<f2", "float16"), "bf16": ("<u2", "bfloat16"),
    "f64": ("<f8", "float64"), "i64": ("<i8", "int64"), "i32": ("<i4", "int32"),
    "i16": ("<i2", "int16"), "i8": ("<i1", "int8"), "ui8": ("<u1", "uint8"), "i1": ("?", "bool"),
    "ui16": ("<u2", "uint16"), "ui32": ("<u4", "uint32"), "ui64": ("<u8", "uint64"),
}
_INT_BITS_AS = {"f32": "<u4", "f16": "<u2", "bf16": "<u2", "f64": "<u8"}


def _tensor_type(text):
    """'2x3xf32' -> ((2, 3), 'f32'); 'f32' -> ((), 'f32')."""
    parts = text.split("x")
    return tuple(int(p) for p in parts[:-1]), parts[-1]


def _parse_dense(body, shape, element):
    """The value of dense<BODY> : tensor<SHAPE x ELEMENT>."""
    np_dtype, _ = ELEMENT_TYPES[element]
    count = int(np.prod(shape)) if shape else 1
    if body.startswith('"0x'):
        raw = bytes.fromhex(body[3:-1])
        if element == "i1":  # one bit an element, the lowest first; one byte for a splat
            bits = np.frombuffer(raw, dtype=np.uint8)
            arr = (bits != 0) if bits.size == 1 else np.unpackbits(bits, bitorder="little")[:count].astype(bool)
        else:
            arr = np.frombuffer(raw, dtype=np_dtype)
        if arr.size == 1 and count != 1:  # a splat stored once
            arr = np.full(count, arr[0], dtype=arr.dtype)
        return arr.reshape(shape)
    tokens = re.findall(r"0x[0-9A-Fa-f]+|true|false|[-+]?(?:inf|nan)|[-+]?[0-9.]+(?:[eE][-+]?\d+)?",
                        body)
    if element == "bf16":
        # printed as decimal: round to the nearest bf16 bits (the printer prints them exactly)
        vals = []
        for t in tokens:
            if t.startswith("0x"):
                vals.append(int(t, 16))
            else:
                f = np.array([float(t)], dtype=np.float32).view(np.uint32)[0]
                vals.append(int((f + 0x7FFF + ((f >> 16) & 1)) >> 16) & 0xFFFF)
        arr = np.array(vals, dtype=np.uint16)
    elif element == "i1":
        arr = np.array([t == "true" for t in tokens], dtype=bool)
    elif element in _INT_BITS_AS:
        vals = [np.array([int(t, 16)], dtype=_INT_BITS_AS[element]).view(np_dtype)[0]
                if t.startswith("0x") else float(t) for t in tokens]
        arr = np.array(vals, dtype=np_dtype)
    else:
        arr = np.array([int(t, 16) if t.startswith("0x") else int(t) for t in tokens],
                       dtype=np_dtype)
    if arr.size == 1 and count != 1:
        arr = np.full(count, arr[0], dtype=arr.dtype)
    return arr.reshape(shape)


def folded_outputs(text):
    """[(dtype name, array)] per output of @main, or (None, reason) when an output is not a
    constant (the graph did not fold)."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if "func.func @main(" in ln), None)
    if start is None:
        return None, "no @main in the graph"
    defs, ops, returned = {}, {}, None
    for ln in lines[start + 1:]:
        s = ln.strip()
        m = re.match(r"(%[\w.]+) = sinter\.constant dense<(.*)> : tensor<([^>]*)>$", s)
        if m:
            defs[m.group(1)] = (m.group(2), m.group(3))
            continue
        m = re.match(r"(%[\w.]+)(?::\d+)? = ([\w.]+)", s)
        if m:
            ops[m.group(1)] = m.group(2)
        if s.startswith("return"):
            returned = re.findall(r"%[\w.]+", s.split(":")[0])
            break
    if returned is None:
        return None, "no return in @main"
    out = []
    for name in returned:
        if name not in defs:
            return None, f"an output is computed by {ops.get(name, 'an op')} (no host folder)"
        body, type_text = defs[name]
        shape, element = _tensor_type(type_text)
        if element not in ELEMENT_TYPES:
            return None, f"output element type {element} is not read"
        out.append((ELEMENT_TYPES[element][1], _parse_dense(body, shape, element)))
    return out, None
