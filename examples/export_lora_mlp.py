#!/usr/bin/env python3
"""Export the PEFT LoRA MLP benchmark model to ONNX (deterministic per seed, fp32).

Model: torch.nn.Sequential(Linear(in, hidden), Linear(hidden, hidden), Linear(hidden, out)),
all with bias and no activation, wrapped by peft LoraConfig(r, lora_alpha, target_modules=all
three linears, lora_dropout=0). lora_B is initialised NON-zero (normal, std 0.02) so the adapter
contributes. Input x [1, rows, in] float32 -> output y [1, rows, out] float32, static shapes.

Defaults are the benchmark (3584 -> 256 -> 256 -> 3584, r 16, alpha 32, 4096 rows). Example
(the tiny committed fixture):
  python3 examples/export_lora_mlp.py --in-features 64 --hidden 32 --out-features 64 --r 8 \\
      --alpha 16 --rows 4 --save-reference --out examples/fixtures/lora_mlp_tiny.onnx

Writes PATH.onnx, a sidecar PATH.json (config, seed, exporter details) and, with
--save-reference, PATH.input.npy and PATH.output.npy (the PEFT model's own output for one fixed
random input). Prints the op types (domain:op) of the graph.
"""
import argparse
import hashlib
import json
import os
import sys


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--in-features", type=int, default=3584,
                   help="input features of the first Linear (default 3584)")
    p.add_argument("--hidden", type=int, default=256,
                   help="hidden width of the two inner Linears (default 256)")
    p.add_argument("--out-features", type=int, default=3584,
                   help="output features of the last Linear (default 3584)")
    p.add_argument("--r", type=int, default=16, help="LoRA rank r (default 16)")
    p.add_argument("--alpha", type=float, default=32.0,
                   help="lora_alpha; the adapter scaling is alpha / r (default 32)")
    p.add_argument("--rows", type=int, default=4096,
                   help="rows of the static input [1, rows, in_features] (default 4096)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed for base weights, LoRA A/B and the reference input (default 0)")
    p.add_argument("--opset", type=int, default=18, help="ONNX opset version (default 18)")
    p.add_argument("--save-reference", action="store_true",
                   help="also write PATH.input.npy and PATH.output.npy (float32) for one fixed "
                        "random input (seed + 1) and the PEFT model's output for it")
    p.add_argument("--dump", metavar="TXT", default=None,
                   help="also write a node-by-node text dump of the exported graph to TXT")
    p.add_argument("--keep-stack-traces", action="store_true",
                   help="keep the exporter's per-node pkg.torch.onnx.stack_trace metadata "
                        "(stripped by default: it holds machine-specific file paths)")
    p.add_argument("--out", required=True, help="output path, PATH.onnx")
    return p.parse_args(argv)


def build_model(a):
    import torch
    from peft import LoraConfig, get_peft_model
    torch.manual_seed(a.seed)
    base = torch.nn.Sequential(
        torch.nn.Linear(a.in_features, a.hidden, bias=True),
        torch.nn.Linear(a.hidden, a.hidden, bias=True),
        torch.nn.Linear(a.hidden, a.out_features, bias=True),
    ).float()
    cfg = LoraConfig(r=a.r, lora_alpha=a.alpha, target_modules=["0", "1", "2"],
                     lora_dropout=0.0, bias="none")
    model = get_peft_model(base, cfg)  # lora_A: kaiming-uniform from the global RNG
    g = torch.Generator().manual_seed(a.seed + 2)
    n_b = 0
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float32) * 0.02)
                n_b += 1
    assert n_b == 3, f"expected 3 lora_B weights, found {n_b}"
    model.eval()
    return model, cfg


def strip_stack_traces(model_proto):
    for n in model_proto.graph.node:
        keep = [(p.key, p.value) for p in n.metadata_props
                if p.key != "pkg.torch.onnx.stack_trace"]
        del n.metadata_props[:]
        for k, v in keep:
            n.metadata_props.add(key=k, value=v)
        n.doc_string = ""


def op_types(model_proto):
    return sorted({f"{n.domain or 'ai.onnx'}:{n.op_type}" for n in model_proto.graph.node})


def dump_onnx(model_proto, path, max_vals=8):
    """Node-by-node listing: inputs/outputs, attributes, initializers, value_info."""
    import numpy as np
    from onnx import helper, numpy_helper, TensorProto

    def tname(elem):
        return TensorProto.DataType.Name(elem)

    def vi_str(v):
        t = v.type.tensor_type
        dims = [d.dim_param if d.dim_param else (str(d.dim_value) if d.HasField("dim_value")
                                                  else "?") for d in t.shape.dim]
        shape = "[" + ",".join(dims) + "]" if t.HasField("shape") else "<no shape>"
        return f"{v.name}: {tname(t.elem_type)}{shape}"

    def tensor_str(t):
        s = f"{tname(t.data_type)}{list(t.dims)}"
        try:
            arr = numpy_helper.to_array(t)
            if arr.size <= max_vals:
                s += f" = {arr.tolist()}"
        except Exception as e:
            s += f" (<{type(e).__name__}>)"
        return s

    def attr_str(at):
        v = helper.get_attribute_value(at)
        if at.type == at.TENSOR:
            return f"{at.name}={tensor_str(at.t)}"
        if isinstance(v, bytes):
            v = v.decode(errors="replace")
        return f"{at.name}={v}"

    m = model_proto
    g = m.graph
    lines = [f"ir_version={m.ir_version} producer={m.producer_name} {m.producer_version}",
             "opset_import: " + ", ".join(f"{o.domain or 'ai.onnx'}={o.version}"
                                           for o in m.opset_import),
             f"graph {g.name}: {len(g.node)} nodes, {len(g.initializer)} initializers, "
             f"{len(g.value_info)} value_info",
             "op types: " + ", ".join(op_types(m)), "", "== inputs"]
    lines += ["  " + vi_str(v) for v in g.input]
    lines.append("== outputs")
    lines += ["  " + vi_str(v) for v in g.output]
    lines.append("== initializers")
    for t in g.initializer:
        meta = {p.key: p.value for p in t.metadata_props}
        lines.append(f"  {t.name}: {tensor_str(t)}" + (f"  {meta}" if meta else ""))
    lines.append("== nodes")
    for i, n in enumerate(g.node):
        lines.append(f"  [{i}] {n.domain or 'ai.onnx'}:{n.op_type} name={n.name}")
        lines.append(f"       in : {list(n.input)}")
        lines.append(f"       out: {list(n.output)}")
        for at in n.attribute:
            lines.append(f"       attr {attr_str(at)}")
        meta = {p.key: p.value for p in n.metadata_props}
        if "pkg.torch.onnx.fx_node" in meta:
            lines.append(f"       fx : {meta['pkg.torch.onnx.fx_node'][:300]}")
        if "pkg.torch.onnx.name_scopes" in meta:
            lines.append(f"       scope: {meta['pkg.torch.onnx.name_scopes']}")
    lines.append("== value_info")
    lines += ["  " + vi_str(v) for v in g.value_info]
    non_static = [v.name for v in list(g.value_info) + list(g.input) + list(g.output)
                  if (not v.type.tensor_type.HasField("shape")) or any(
                      d.dim_param or not d.HasField("dim_value")
                      for d in v.type.tensor_type.shape.dim)]
    lines.append(f"== non-static value_info/io entries: {len(non_static)} {non_static[:20]}")
    known = {v.name for v in g.value_info} | {v.name for v in g.output}
    missing = sorted(o for n in g.node for o in n.output if o and o not in known)
    lines.append(f"== node outputs without value_info: {len(missing)} {missing[:20]}")
    text = "\n".join(lines) + "\n"
    with open(path, "w") as f:
        f.write(text)
    return len(text)


def main(argv=None):
    a = parse_args(argv)
    import numpy as np
    import torch
    import onnx
    import peft

    if a.r > min(a.in_features, a.hidden, a.out_features):
        print(f"warning: r={a.r} exceeds a layer dimension", file=sys.stderr)
    out = a.out
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    model, cfg = build_model(a)
    inner = model.base_model.model  # the Sequential with lora.Linear layers injected
    g = torch.Generator().manual_seed(a.seed + 1)
    x = torch.randn(1, a.rows, a.in_features, generator=g, dtype=torch.float32)
    with torch.no_grad():
        y_peft = model(x)
        y_inner = inner(x)
    assert torch.equal(y_peft, y_inner)

    prog = torch.onnx.export(inner, (x,), dynamo=True, opset_version=a.opset,
                             input_names=["x"], output_names=["y"], optimize=True)
    prog.save(out, external_data=False)
    mp = onnx.load(out, load_external_data=True)
    if not a.keep_stack_traces:
        strip_stack_traces(mp)
    onnx.save(mp, out, save_as_external_data=False)
    mp = onnx.load(out)
    try:
        onnx.checker.check_model(mp)
        checker = "ok"
    except Exception as e:
        checker = f"{type(e).__name__}: {e}"[:500]
    ops = op_types(mp)
    print(f"[export_lora_mlp] {out}: opset={a.opset} bytes={os.path.getsize(out)} "
          f"checker={checker}")
    print("[export_lora_mlp] op types (%d): %s" % (len(ops), " ".join(ops)))

    ort_result = "skipped"
    try:
        import onnxruntime as ort
        sess = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
        got = sess.run(None, {"x": x.numpy()})[0]
        ref = y_peft.numpy()
        ort_result = (f"max_abs_diff={float(np.max(np.abs(got - ref))):.3e} "
                      f"(ref max |y| {float(np.max(np.abs(ref))):.3e})")
    except Exception as e:
        ort_result = f"failed: {type(e).__name__}: {str(e)[:300]}"
    print(f"[export_lora_mlp] onnxruntime CPU vs PEFT: {ort_result}")

    stem = out[:-5] if out.endswith(".onnx") else out
    if a.save_reference:
        np.save(stem + ".input.npy", x.numpy())
        np.save(stem + ".output.npy", y_peft.numpy())
    if a.dump:
        n = dump_onnx(mp, a.dump)
        print(f"[export_lora_mlp] dump: {a.dump} ({n} bytes)")

    h = hashlib.sha256()
    for name, t in sorted(inner.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().contiguous().numpy().tobytes())
    side = {
        "model": "Sequential(Linear(in,hidden), Linear(hidden,hidden), Linear(hidden,out)) + "
                 "PEFT LoRA on all three",
        "seed": a.seed,
        "init": "torch.manual_seed(seed): base Linear init then PEFT lora_A init; lora_B = "
                "0.02 * randn from Generator(seed + 2), in sorted parameter-name order; "
                "reference input = randn from Generator(seed + 1)",
        "in_features": a.in_features, "hidden": a.hidden, "out_features": a.out_features,
        "r": a.r, "lora_alpha": a.alpha, "lora_scaling": a.alpha / a.r, "lora_dropout": 0.0,
        "rows": a.rows, "opset": a.opset, "dtype": "f32",
        "inputs": {"x": [1, a.rows, a.in_features, "float32"]},
        "outputs": {"y": [1, a.rows, a.out_features, "float32"]},
        "weights_sha256": h.hexdigest(),
        "op_types": ops,
        "onnx_checker": checker,
        "onnxruntime_check": ort_result,
        "reference": ({"input": os.path.basename(stem) + ".input.npy",
                       "output": os.path.basename(stem) + ".output.npy"}
                      if a.save_reference else None),
        "state_dict": {k: list(v.shape) for k, v in sorted(inner.state_dict().items())},
        "versions": {"torch": torch.__version__, "peft": peft.__version__,
                     "onnx": onnx.__version__},
        "argv": {k: (os.path.basename(v) if k in ("out", "dump") and v else v)
                 for k, v in vars(a).items()},
    }
    with open(stem + ".json", "w") as f:
        json.dump(side, f, indent=1, sort_keys=True, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
