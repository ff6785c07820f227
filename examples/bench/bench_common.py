"""Timing and measurement helpers shared by the benchmark scripts (run on the GPU machine).

Every system in a table is timed the same way: CUDA events around `calls` back-to-back calls,
median of `reps` repetitions after 10 warm-up calls; kernel counts and GPU time come from the
PyTorch profiler for every system, Sinter included.
"""
import statistics


def time_calls(fn, calls, reps, torch):
    """Median over `reps` of the mean ms per call of `calls` back-to-back calls."""
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / calls)
    return statistics.median(times)


def device_events(fn, torch):
    """The GPU events of one profiled call of `fn` (after one warm-up call), user annotations
    excluded."""
    fn()
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [e for e in prof.events()
            if "cuda" in str(getattr(e, "device_type", "")).lower()
            and not getattr(e, "is_user_annotation", False)]


def profile_kernels(fn, torch, by_name=None):
    """(kernel count, summed kernel ms) of one call, memcpy/memset excluded. A dict passed as
    `by_name` receives each kernel name's [launches, ms]."""
    n, us = 0, 0.0
    for e in device_events(fn, torch):
        name = e.name.lower()
        if "memcpy" in name or "memset" in name:
            continue
        n += 1
        t = getattr(e, "device_time", 0.0) or getattr(e, "cuda_time", 0.0) or 0.0
        us += t
        if by_name is not None:
            entry = by_name.setdefault(e.name, [0, 0.0])
            entry[0] += 1
            entry[1] += t / 1e3
    return n, us / 1e3


def kernel_timeline(fn, torch, short=None):
    """Where one call's time goes along the GPU's critical path: the kernels in start order,
    each charged with how far it moves the latest end time so far (under programmatic dependent
    launch a kernel starts before its predecessor ends, so its own duration would count the
    overlap twice). Returns [(name, launches, critical-path us, summed duration us)], largest
    first; `short` maps a kernel name to the key it is grouped by."""
    spans = [(e.time_range.start, e.time_range.end, e.name) for e in device_events(fn, torch)
             if getattr(e, "time_range", None) is not None]
    return critical_path(spans, short)


def critical_path(spans, short=None):
    """kernel_timeline's grouping of (start, end, name) spans."""
    spans = sorted(spans)
    groups, last_end = {}, None
    for start, end, name in spans:
        key = short(name) if short else name
        # The gap before a kernel that starts after every earlier one ended is its launch's.
        charged = end - start if last_end is None else max(0.0, end - last_end)
        last_end = end if last_end is None else max(last_end, end)
        g = groups.setdefault(key, [0, 0.0, 0.0])
        g[0] += 1
        g[1] += charged
        g[2] += end - start
    return sorted(((k, v[0], v[1], v[2]) for k, v in groups.items()), key=lambda r: -r[2])


def short_kernel_name(name):
    """A Sinter kernel's template and its first arguments (the shape), a generated kernel's
    name, or PyTorch's kernel name cut at 60 characters."""
    head = name.split("(")[0] if "<" not in name else name
    head = head.replace("sinter::kernels::", "").replace("void ", "")
    if "<" in head:
        base, args = head.split("<", 1)
        return base + "<" + ",".join(args.split(",")[:4]) + ">"
    return head[:60]


def copy_bandwidth(torch):
    """Device-to-device copy bandwidth in bytes/s (bytes read + written) of a 1 GiB copy."""
    n = 1 << 30
    a = torch.empty(n, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    ms = time_calls(lambda: b.copy_(a), 20, 5, torch)
    return 2 * n / (ms * 1e-3)


def matrix_rate(torch, sizes=(4096, 8192, 16384)):
    """Dense bf16 matrix rate in FLOP/s: the best of square torch.matmul (cuBLAS, fp32
    accumulate) products of the given sizes, so that a floor computed from it is not flattered
    by one size's tile quantization."""
    best = 0.0
    for n in sizes:
        a = torch.randn(n, n, dtype=torch.bfloat16, device="cuda")
        b = torch.randn(n, n, dtype=torch.bfloat16, device="cuda")
        c = torch.empty(n, n, dtype=torch.bfloat16, device="cuda")
        ms = time_calls(lambda: torch.matmul(a, b, out=c), 20, 5, torch)
        best = max(best, 2 * n ** 3 / (ms * 1e-3))
        del a, b, c
    return best


def save_results(out_dir, name, table, data):
    """Writes OUT_DIR/NAME.md (the markdown table) and OUT_DIR/NAME.json (the raw numbers)."""
    import json
    import os
    with open(os.path.join(out_dir, name + ".md"), "w") as f:
        f.write(table + "\n")
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(data, f, indent=1)


def rel_err(out, ref, torch):
    """Relative L2 error of `out` against `ref`, computed in float64."""
    return (torch.linalg.vector_norm((out.float() - ref).double()) /
            torch.linalg.vector_norm(ref.double())).item()


def near_tie(ref_row, tok_a, tok_b, torch):
    """How close the fp32 reference's logits of two tokens are, relative to the logit scale."""
    top2 = ref_row.topk(2)
    scale = float(ref_row.abs().max())
    gap_ab = abs(float(ref_row[tok_a]) - float(ref_row[tok_b]))
    return {"fp32_top2_tokens": [int(i) for i in top2.indices.tolist()],
            "fp32_top2_gap": float(top2.values[0] - top2.values[1]),
            "fp32_gap_between_the_two": gap_ab, "fp32_logit_scale": scale,
            "gap_over_scale": gap_ab / scale if scale else None,
            "fp32_argmax": int(ref_row.argmax()),
            # bf16 logits carry ~0.4 % relative rounding: a gap under ~1 % of the scale is noise
            "near_tie": bool(gap_ab <= 0.01 * scale
                             and {tok_a, tok_b} <= set(int(i) for i in ref_row.topk(3).indices))}
