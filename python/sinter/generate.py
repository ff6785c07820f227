"""Text generation with a library compiled with `sinter compile --sample prefill=P decode=D`.

    gen = sinter.Generator("llama.so")                    # tokenizer: llama.tokenizer.json if there
    ids = gen.generate([1, 2, 3], max_new_tokens=32)      # greedy: a list of new token ids
    text = gen.generate("Once upon a time", temperature=0.8, top_p=0.95, seed=1)
    for piece in gen.generate("Hello", stream=True):      # text pieces (ids for an id prompt)
        print(piece, end="", flush=True)
    gen.last_stats                                        # GenerationStats(... tokens_per_s ...)

The library's contract (batch 1): entry "decode" (input_ids int64 [1, 1], cache_position int64
[1] -> logits [1, 1, V], next_token int64 [1, 1]) and optionally "prefill" (input_ids int64
[1, S] -> logits [1, S, V], next_token [1, 1]; writes cache positions [0, S)) and "chunk"
(input_ids [1, C], cache_position [C] -> next_token [1, 1]; writes the C positions given:
export_llama.py --chunk); the KV cache is the context's state, its length the third dimension
of the state regions.

A library compiled from a with-past export with `--cache-length` also takes attention_mask
(prefill [1, S]: ones; decode [1, L]: ones at the slots written so far and at this one) and
position_ids (prefill 0 .. S-1; decode the position): the generator feeds them too.

The loop: reset the state, set the sampler, prefill the first S prompt tokens when there are at
least S, the rest through chunk runs of C tokens (the last one ending at the prompt's end) when
there is a chunk entry, else through decode one at a time (plan_prompt; sinter::plan_prompt in
C++ is the same), then decode with one device buffer as both
the decode input_ids and every run's next_token output, so that the device feeds itself. The
host only writes the position (an async copy from pinned memory) and reads each token back
(async copy + event, a few steps in flight), so the GPU does not wait on the host. Generation
stops at a stop id (included in the output), after max_new_tokens, or when the cache is full.

Uses the CUDA runtime through ctypes (sinter._cuda), not torch.
"""

import ctypes
import os
import time
from typing import NamedTuple

from . import _cuda
from ._ctypes_api import Model, sampling_params
from ._dlpack import DeviceTensor
from ._errors import SinterArgumentError, SinterError


class GenerationStats(NamedTuple):
    prompt_tokens: int
    new_tokens: int
    prefill_tokens: int       # prompt tokens run through the prefill entry (0 or S)
    time_to_first_token_s: float
    decode_s: float           # from the first token to the last
    tokens_per_s: float       # (new_tokens - 1) / decode_s: the decode rate (0 for < 2 tokens)
    total_s: float
    stop_reason: str          # "stop", "max_new_tokens", "cache_full" or "closed"
    chunk_runs: int = 0       # runs of the chunk entry for the prompt


def plan_prompt(prompt_length, prefill_length, chunk_length):
    """[(entry, start, count)]: the runs that put a prompt into the cache, in order. The prefill
    entry (tokens [0, S)) when the prompt has at least S; chunks of C for the rest, the last one
    ending at the prompt's end (it rewrites slots the run before wrote, from the same tokens: the
    same keys and values); decode runs of one token for a rest shorter than C, or all of it
    without a chunk entry. A length of 0: no such entry (runtime/include/sinter/prompt_plan.hpp
    is the same rule)."""
    runs, fed = [], 0
    if 0 < prefill_length <= prompt_length:
        runs.append(("prefill", 0, prefill_length))
        fed = prefill_length
    if 0 < chunk_length <= prompt_length:
        while prompt_length - fed >= chunk_length:
            runs.append(("chunk", fed, chunk_length))
            fed += chunk_length
        if fed < prompt_length:
            runs.append(("chunk", prompt_length - chunk_length, chunk_length))
            fed = prompt_length
    runs += [("decode", p, 1) for p in range(fed, prompt_length)]
    return runs


def load_tokenizer(path):
    """A tokenizers.Tokenizer from a tokenizer.json; ValueError naming the file when it is
    missing or does not parse."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such tokenizer file")
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise ImportError(f"{path}: reading a tokenizer needs the 'tokenizers' package "
                          f"(pip install tokenizers)") from None
    try:
        return Tokenizer.from_file(path)
    except Exception as e:
        lines = str(e).strip().splitlines()
        raise ValueError(f"{path}: not a valid tokenizer.json "
                         f"({lines[0] if lines else type(e).__name__})") from None


def default_tokenizer_path(so_path):
    """<so stem>.tokenizer.json beside the library (what export_llama.py --from-pretrained
    writes as OUT_STEM.tokenizer.json)."""
    stem = so_path[:-3] if so_path.endswith(".so") else so_path
    return stem + ".tokenizer.json"


def _entry_or_none(model, name):
    return next((model.entry(e) for e in model.entries if e == name), None)


def _io(infos, name):
    return next((i for i in infos if i.name == name), None)


class Generator:
    """Generation with a sampling library; one generation at a time (not thread-safe)."""

    def __init__(self, model, weights=None, mode="graph", tokenizer=None,
                 allow_new_values=False, in_flight=4):
        if isinstance(model, Model):
            if weights is not None:
                raise ValueError("weights= is for a library path; this Model is already loaded")
            self.model, self._own_model = model, False
        else:
            self.model = Model(os.fspath(model), weights=weights,
                               allow_new_values=allow_new_values)
            self._own_model = True
        self.ctx = None
        self._stream = None
        self._rt = None
        self._host = []
        self._events = []
        self._active = None
        self.last_stats = None
        self.last_ids = None
        try:
            self._describe()
            self.tokenizer = self._tokenizer(tokenizer)
            self._setup(mode, max(int(in_flight), 1))
        except BaseException:
            self.close()
            raise

    # ---- setup --------------------------------------------------------------------------------
    def _describe(self):
        m = self.model
        where = f"'{m.path}'"
        if not m.has_sampler:
            raise SinterError(1, f"{where} has no sampler (compile it with `sinter compile "
                                 f"--sample prefill=P.onnx decode=D.onnx`)")
        dec = _entry_or_none(m, "decode")
        if dec is None:
            raise SinterError(1, f"{where} has no 'decode' entry (entries: "
                                 f"{', '.join(m.entries)})")
        pre = _entry_or_none(m, "prefill")
        chunk = _entry_or_none(m, "chunk")
        for e, names in ((dec, ("input_ids", "cache_position")), (pre, ("input_ids",)),
                         (chunk, ("input_ids", "cache_position"))):
            if e is None:
                continue
            for n in names:
                if _io(e.inputs, n) is None:
                    raise SinterError(1, f"{where}: entry '{e.name}' has no input '{n}' "
                                         f"(inputs: {', '.join(i.name for i in e.inputs)})")
            nt = _io(e.outputs, "next_token")
            if nt is None or _io(e.outputs, "logits") is None:
                raise SinterError(1, f"{where}: entry '{e.name}' needs outputs logits and "
                                     f"next_token (outputs: "
                                     f"{', '.join(o.name for o in e.outputs)})")
            ids = _io(e.inputs, "input_ids")
            if ids.dtype != "int64" or nt.dtype != "int64" or len(ids.shape) != 2 or \
                    ids.shape[0] != 1 or tuple(nt.shape) != (1, 1):
                raise SinterError(1, f"{where}: entry '{e.name}': the generator needs batch 1 "
                                     f"with int64 input_ids [1, S] and next_token [1, 1] (got "
                                     f"input_ids {ids.dtype}{list(ids.shape)}, next_token "
                                     f"{nt.dtype}{list(nt.shape)})")
        if tuple(_io(dec.inputs, "input_ids").shape) != (1, 1) or \
                tuple(_io(dec.inputs, "cache_position").shape) != (1,):
            raise SinterError(1, f"{where}: decode needs input_ids [1, 1] and cache_position [1]")
        self.decode_entry, self.prefill_entry, self.chunk_entry = dec, pre, chunk
        self.prefill_len = pre and _io(pre.inputs, "input_ids").shape[1] or 0
        self.chunk_len = chunk and _io(chunk.inputs, "input_ids").shape[1] or 0
        self.vocab_size = _io(dec.outputs, "logits").shape[-1]
        caches = [s for s in m.states if not s.name.startswith(".") and len(s.shape) == 4]
        if not caches:
            raise SinterError(1, f"{where} holds no KV-cache state regions (state: "
                                 f"{[s.name for s in m.states]})")
        self.cache_len = min(s.shape[2] for s in caches)
        # A --cache-length library of a with-past export: the mask and positions, fed here.
        expected = {dec.name: {"input_ids": (1, 1), "cache_position": (1,),
                               "attention_mask": (1, self.cache_len), "position_ids": (1, 1)}}
        if pre is not None:
            S = self.prefill_len
            expected[pre.name] = {"input_ids": (1, S), "attention_mask": (1, S),
                                  "position_ids": (1, S)}
        if chunk is not None:
            C = self.chunk_len
            if not 2 <= C <= self.cache_len:
                raise SinterError(1, f"{where}: entry 'chunk': input_ids [1, {C}]: a chunk takes "
                                     f"2 to {self.cache_len} (the cache length) tokens")
            expected[chunk.name] = {"input_ids": (1, C), "cache_position": (C,)}
        for e in (dec, pre, chunk):
            if e is None:
                continue
            for i in e.inputs:
                shape = expected[e.name].get(i.name)
                if shape is None or i.dtype != "int64" or tuple(i.shape) != shape:
                    raise SinterError(1, f"{where}: entry '{e.name}': the generator cannot feed "
                                         f"input {i.name} {i.dtype}{list(i.shape)} (it feeds "
                                         + ", ".join(f"{n} int64{list(v)}" for n, v in
                                                     expected[e.name].items()) + ")")
        self.feeds_mask = _io(dec.inputs, "attention_mask") is not None
        self.feeds_positions = _io(dec.inputs, "position_ids") is not None

    def _tokenizer(self, tokenizer):
        if tokenizer is None:
            auto = default_tokenizer_path(self.model.path)
            return load_tokenizer(auto) if os.path.isfile(auto) else None
        if isinstance(tokenizer, (str, os.PathLike)):
            return load_tokenizer(tokenizer)
        if not (hasattr(tokenizer, "encode") and hasattr(tokenizer, "decode")):
            raise TypeError("tokenizer must be a tokenizer.json path or an object with "
                            "encode/decode (tokenizers.Tokenizer)")
        return tokenizer

    def _setup(self, mode, in_flight):
        rt = self._rt = _cuda.runtime()
        self._stream = rt.stream_create()
        self.ctx = self.model.context(mode)
        L = self.cache_len
        self._pinned = {}
        for name, n in (("pos", L), ("prompt", L), ("out", L + 1), ("ones", L), ("zeros", L)):
            p = rt.host_alloc(8 * n)
            self._host.append(p)
            self._pinned[name] = (ctypes.c_int64 * n).from_address(p)
        for i in range(L):
            self._pinned["pos"][i] = i
            self._pinned["ones"][i] = 1
            self._pinned["zeros"][i] = 0
        self._events = [rt.event_create() for _ in range(in_flight)]
        self._tok = DeviceTensor.empty((1, 1), "int64", rt)   # decode input_ids == next_token
        self._pos = DeviceTensor.empty((1,), "int64", rt)
        feeds = {"input_ids": self._tok, "cache_position": self._pos}
        if self.feeds_mask:  # the slots written so far: set one by one as decode writes them
            self._mask = feeds["attention_mask"] = DeviceTensor.empty((1, L), "int64", rt)
        if self.feeds_positions:
            self._step_pos = feeds["position_ids"] = DeviceTensor.empty((1, 1), "int64", rt)
        dec = self.decode_entry
        outs = {o.name: (self._tok if o.name == "next_token" else
                         DeviceTensor.empty(o.shape, o.dtype, rt)) for o in dec.outputs}
        self._decode = self.ctx.bind_entry("decode", {i.name: feeds[i.name] for i in dec.inputs},
                                           outs, stream=self._stream)
        self._prefill = None
        if self.prefill_entry is not None:
            pre, S = self.prefill_entry, self.prefill_len
            self._prefill_ids = DeviceTensor.empty((1, S), "int64", rt)
            pfeeds = {"input_ids": self._prefill_ids}
            for name, table in (("attention_mask", "ones"), ("position_ids", "pos")):
                if _io(pre.inputs, name) is not None:  # the same every call
                    t = pfeeds[name] = DeviceTensor.empty((1, S), "int64", rt)
                    rt.memcpy(t.ptr, ctypes.addressof(self._pinned[table]), 8 * S, _cuda.H2D)
            pouts = {o.name: (self._tok if o.name == "next_token" else
                              DeviceTensor.empty(o.shape, o.dtype, rt)) for o in pre.outputs}
            self._prefill = self.ctx.bind_entry("prefill", {i.name: pfeeds[i.name]
                                                            for i in pre.inputs},
                                                pouts, stream=self._stream)
        self._chunk = None
        if self.chunk_entry is not None:
            ch, C = self.chunk_entry, self.chunk_len
            self._chunk_ids = DeviceTensor.empty((1, C), "int64", rt)
            self._chunk_pos = DeviceTensor.empty((C,), "int64", rt)
            couts = {o.name: (self._tok if o.name == "next_token" else
                              DeviceTensor.empty(o.shape, o.dtype, rt)) for o in ch.outputs}
            cfeeds = {"input_ids": self._chunk_ids, "cache_position": self._chunk_pos}
            self._chunk = self.ctx.bind_entry("chunk", {i.name: cfeeds[i.name] for i in ch.inputs},
                                              couts, stream=self._stream)

    def _decode_at(self, position):
        """Enqueues the decode run that writes cache slot `position` (its input_ids already
        in the token buffer)."""
        rt, s = self._rt, self._stream
        src = ctypes.addressof(self._pinned["pos"]) + 8 * position
        rt.memcpy_async(self._pos.ptr, src, 8, _cuda.H2D, s)
        if self.feeds_positions:
            rt.memcpy_async(self._step_pos.ptr, src, 8, _cuda.H2D, s)
        if self.feeds_mask:
            rt.memcpy_async(self._mask.ptr + 8 * position, ctypes.addressof(self._pinned["ones"]),
                            8, _cuda.H2D, s)
        self._decode()

    # ---- generation ---------------------------------------------------------------------------
    def encode(self, text):
        if self.tokenizer is None:
            raise ValueError(f"a text prompt needs a tokenizer (tokenizer=PATH, or "
                             f"{default_tokenizer_path(self.model.path)})")
        return list(self.tokenizer.encode(text).ids)

    def decode(self, ids):
        if self.tokenizer is None:
            raise ValueError("decoding ids to text needs a tokenizer")
        return self.tokenizer.decode(list(ids), skip_special_tokens=True)

    def generate(self, prompt, max_new_tokens=32, temperature=0.0, top_k=0, top_p=1.0,
                 repetition_penalty=1.0, seed=0, stop=(), stream=False):
        """New tokens after `prompt` (a str, encoded with the tokenizer, or token ids).

        Returns the new text for a str prompt, else the list of new ids; with stream=True an
        iterator of text pieces (str prompt) or ids, as they come. `stop`: token ids (or, with a
        tokenizer, token strings) that end the generation; the stop token is part of the
        output. Statistics of the last generation: .last_stats; its ids: .last_ids."""
        if self.ctx is None:
            raise SinterError(1, "the generator is closed")
        params = sampling_params(temperature, top_k, top_p, repetition_penalty, seed)
        try:
            max_new = int(max_new_tokens)
        except (TypeError, ValueError):
            raise SinterArgumentError(f"max_new_tokens must be an integer, got "
                                      f"{max_new_tokens!r}") from None
        if max_new < 0:
            raise SinterArgumentError(f"max_new_tokens must be >= 0, got {max_new_tokens!r}")
        text = isinstance(prompt, str)
        ids = self.encode(prompt) if text else [int(t) for t in prompt]
        if not ids:
            raise SinterArgumentError("the prompt is empty")
        bad = [t for t in ids if not 0 <= t < self.vocab_size]
        if bad:
            raise SinterArgumentError(f"prompt token {bad[0]} is outside the vocabulary "
                                      f"[0, {self.vocab_size})")
        if len(ids) > self.cache_len:
            raise SinterArgumentError(f"the prompt has {len(ids)} tokens; the KV cache holds "
                                      f"{self.cache_len}")
        stop_ids = set()
        for s in (stop or ()):
            if isinstance(s, str):
                tid = self.tokenizer.token_to_id(s) if self.tokenizer is not None else None
                if tid is None:
                    raise SinterArgumentError(f"stop token {s!r} is not in the tokenizer's "
                                              f"vocabulary")
                stop_ids.add(int(tid))
            else:
                stop_ids.add(int(s))
        if self._active is not None:  # an unfinished stream: end it first
            self._active.close()
        it = self._run(ids, max_new, params, stop_ids)
        self._active = it
        if stream:
            return self._pieces(it) if text else it
        out = list(it)
        return self.decode(out) if text else out

    def _pieces(self, it):
        """Text pieces of the ids from `it`: each decode of all ids so far, minus what was
        already given (held back while it ends in an incomplete character)."""
        ids, given = [], ""
        for t in it:
            ids.append(t)
            full = self.decode(ids)
            if full.endswith("\ufffd") or not full.startswith(given):
                continue
            if len(full) > len(given):
                yield full[len(given):]
                given = full
        full = self.decode(ids) if ids else ""
        if full.startswith(given) and len(full) > len(given):
            yield full[len(given):]

    def _run(self, ids, max_new, params, stop_ids):
        rt, s, ctx = self._rt, self._stream, self.ctx
        n, L, S = len(ids), self.cache_len, self.prefill_len
        prompt_h, out_h = self._pinned["prompt"], self._pinned["out"]
        ev = self._events
        depth = len(ev)
        prompt_base = ctypes.addressof(prompt_h)
        out_base = ctypes.addressof(out_h)
        tok = self._tok.ptr
        out = []
        reason = "closed"
        t0 = time.perf_counter()
        t_first = t_end = None
        prefilled = chunk_runs = 0
        total = min(max_new, L - n + 1)  # decode writes positions n .. n + total - 2 < L
        if total <= 0:
            self._finish(ids, out, prefilled, 0, t0, t0, t0, "max_new_tokens")
            return
        try:
            for i, t in enumerate(ids):
                prompt_h[i] = t
            ctx.reset_state(stream=s)
            ctx.set_sampling(params.temperature, params.top_k, params.top_p,
                             params.repetition_penalty, params.seed, stream=s)
            if self.feeds_mask:
                rt.memcpy_async(self._mask.ptr, ctypes.addressof(self._pinned["zeros"]), 8 * L,
                                _cuda.H2D, s)
            for entry, start, count in plan_prompt(n, S if self._prefill is not None else 0,
                                                   self.chunk_len if self._chunk is not None else 0):
                if entry == "decode":
                    # The prompt token replaces the next_token of the run before (stream order).
                    rt.memcpy_async(tok, prompt_base + 8 * start, 8, _cuda.H2D, s)
                    self._decode_at(start)
                    continue
                if entry == "prefill":
                    rt.memcpy_async(self._prefill_ids.ptr, prompt_base, 8 * count, _cuda.H2D, s)
                    self._prefill()
                    prefilled = count
                else:
                    rt.memcpy_async(self._chunk_ids.ptr, prompt_base + 8 * start, 8 * count,
                                    _cuda.H2D, s)
                    rt.memcpy_async(self._chunk_pos.ptr,
                                    ctypes.addressof(self._pinned["pos"]) + 8 * start, 8 * count,
                                    _cuda.H2D, s)
                    self._chunk()
                    chunk_runs += 1
                if self.feeds_mask:  # the decode steps after it see the slots it wrote
                    rt.memcpy_async(self._mask.ptr + 8 * start,
                                    ctypes.addressof(self._pinned["ones"]), 8 * count, _cuda.H2D, s)

            def read_back(g):
                rt.memcpy_async(out_base + 8 * g, tok, 8, _cuda.D2H, s)
                rt.event_record(ev[g % depth], s)

            read_back(0)  # the token after the prompt
            produced, consumed = 1, 0
            while consumed < produced:
                while produced < total and produced - consumed < depth:
                    # Token `produced` from the decode run at position n + produced - 1, fed
                    # the token before it (already in `tok`).
                    self._decode_at(n + produced - 1)
                    read_back(produced)
                    produced += 1
                rt.event_synchronize(ev[consumed % depth])
                t = int(out_h[consumed])
                consumed += 1
                if t_first is None:
                    t_first = time.perf_counter()
                out.append(t)
                yield t
                if t in stop_ids:
                    reason = "stop"
                    break
            else:
                reason = "max_new_tokens" if total == max_new else "cache_full"
        finally:
            try:
                rt.stream_synchronize(s)  # runs queued past a stop id end before the next use
            finally:
                t_end = time.perf_counter()
                self._finish(ids, out, prefilled, chunk_runs, t0, t_first or t_end, t_end, reason)

    def _finish(self, ids, out, prefilled, chunk_runs, t0, t_first, t_end, reason):
        dec = t_end - t_first
        self.last_ids = list(out)
        self.last_stats = GenerationStats(
            prompt_tokens=len(ids), new_tokens=len(out), prefill_tokens=prefilled,
            time_to_first_token_s=t_first - t0, decode_s=dec,
            tokens_per_s=(len(out) - 1) / dec if len(out) > 1 and dec > 0 else 0.0,
            total_s=t_end - t0, stop_reason=reason, chunk_runs=chunk_runs)

    # ---- lifetime -----------------------------------------------------------------------------
    def close(self):
        if self._active is not None:
            try:
                self._active.close()
            except Exception:
                pass
            self._active = None
        rt = self._rt
        if rt is not None and self._stream is not None:
            try:
                rt.stream_synchronize(self._stream)
            except Exception:
                pass
        self._decode = self._prefill = self._chunk = None
        if self.ctx is not None:
            self.ctx.close()
            self.ctx = None
        if rt is not None:
            for e in self._events:
                rt.event_destroy(e)
            self._events = []
            self._pinned = {}
            for p in self._host:
                rt.free_host(p)
            self._host = []
            if self._stream is not None:
                rt.stream_destroy(self._stream)
                self._stream = None
        self._tok = self._pos = self._prefill_ids = self._chunk_ids = self._chunk_pos = None
        if self._own_model and self.model is not None:
            self.model.close()
            self.model = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
