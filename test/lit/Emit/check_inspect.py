#!/usr/bin/env python3
"""Checks the structure of `sinter inspect --json` output (used by lit tests)."""
import argparse
import json
import sys

p = argparse.ArgumentParser()
p.add_argument("path")
p.add_argument("--launches", type=int, required=True)
p.add_argument("--kind", required=True)
p.add_argument("--inputs", nargs="+", required=True)
p.add_argument("--outputs", nargs="+", required=True)
a = p.parse_args()
d = json.load(open(a.path))
errors = []
for key in ("inputs", "outputs", "launches", "arena_bytes", "weight_bytes", "target", "abi_version"):
    if key not in d:
        errors.append(f"missing key {key}")
if [t["name"] for t in d.get("inputs", [])] != a.inputs:
    errors.append(f"inputs {d.get('inputs')}")
if [t["name"] for t in d.get("outputs", [])] != a.outputs:
    errors.append(f"outputs {d.get('outputs')}")
launches = d.get("launches", [])
if len(launches) != a.launches:
    errors.append(f"{len(launches)} launches, expected {a.launches}")
for i, l in enumerate(launches):
    if l.get("kind") != a.kind:
        errors.append(f"launch {i} kind {l.get('kind')}")
    if not l.get("sources"):
        errors.append(f"launch {i} has no ONNX source nodes")
    for buf in ("input", "output"):
        b = l.get(buf) or {}
        if b.get("space") not in ("input", "output", "arena", "weights"):
            errors.append(f"launch {i} {buf} space {b.get('space')}")
arena_offsets = {l["output"]["offset"] for l in launches if l["output"]["space"] == "arena"}
if any(o + 1 > d.get("arena_bytes", 0) for o in arena_offsets):
    errors.append("an arena offset lies outside arena_bytes")
if d.get("weight_bytes", 0) <= 0:
    errors.append("no weights")
tensors = d.get("weight_tensors", [])
if not tensors:
    errors.append("no weight_tensors")
for t in tensors:
    if not t.get("sources"):
        errors.append(f"weight {t.get('name')} has no ONNX sources")
    if t.get("offset", -1) < 0 or t.get("offset", 0) + t.get("bytes", 0) > d.get("weight_bytes", 0):
        errors.append(f"weight {t.get('name')} lies outside weight_bytes")
if errors:
    print("\n".join(errors))
    sys.exit(1)
print("ok")
