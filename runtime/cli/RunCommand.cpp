// `sinter run`: dlopen a model .so through its C ABI only (as an application would), feed random
// inputs and time calls with CUDA events.
#include "RunCommand.h"

#include "sinter/sinter.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <ostream>
#include <random>
#include <vector>

namespace {

// The ABI functions, resolved with dlsym.
struct Api {
  decltype(&sinter_abi_version) abi_version;
  decltype(&sinter_last_error) last_error;
  decltype(&sinter_build_info) build_info;
  decltype(&sinter_model_load) model_load;
  decltype(&sinter_model_destroy) model_destroy;
  decltype(&sinter_model_num_inputs) num_inputs;
  decltype(&sinter_model_num_outputs) num_outputs;
  decltype(&sinter_model_num_launches) num_launches;
  decltype(&sinter_model_arena_bytes) arena_bytes;
  decltype(&sinter_model_input_info) input_info;
  decltype(&sinter_model_output_info) output_info;
  decltype(&sinter_context_create) context_create;
  decltype(&sinter_context_destroy) context_destroy;
  decltype(&sinter_run) run;
  // ABI 1.1 (null when the library is older).
  decltype(&sinter_model_load_v2) model_load_v2;
  decltype(&sinter_model_launch_info) launch_info;
  decltype(&sinter_context_profile) profile;
  // ABI 1.2 (null when the library is older).
  decltype(&sinter_model_num_entries) num_entries;
  decltype(&sinter_model_entry_name) entry_name;
  decltype(&sinter_model_find_entry) find_entry;
  decltype(&sinter_model_entry_num_inputs) entry_num_inputs;
  decltype(&sinter_model_entry_num_outputs) entry_num_outputs;
  decltype(&sinter_model_entry_input_info) entry_input_info;
  decltype(&sinter_model_entry_output_info) entry_output_info;
  decltype(&sinter_model_entry_num_launches) entry_num_launches;
  // Per-entry profiling (null in libraries built before it).
  decltype(&sinter_context_profile_entry) profile_entry;
  decltype(&sinter_model_entry_launch_info) entry_launch_info;
  decltype(&sinter_model_state_bytes) state_bytes;
  decltype(&sinter_run_entry) run_entry;
  bool has_entries() const {
    return num_entries && entry_name && find_entry && entry_num_inputs && entry_num_outputs &&
           entry_input_info && entry_output_info && entry_num_launches && state_bytes &&
           run_entry;
  }
};

template <typename F> bool bind(void *lib, const char *name, F &fn, const char *&missing) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn && !missing)
    missing = name;
  return fn != nullptr;
}

const char *resolve(void *lib, Api &a) {
  const char *missing = nullptr;
  bind(lib, "sinter_abi_version", a.abi_version, missing);
  bind(lib, "sinter_last_error", a.last_error, missing);
  bind(lib, "sinter_build_info", a.build_info, missing);
  bind(lib, "sinter_model_load", a.model_load, missing);
  bind(lib, "sinter_model_destroy", a.model_destroy, missing);
  bind(lib, "sinter_model_num_inputs", a.num_inputs, missing);
  bind(lib, "sinter_model_num_outputs", a.num_outputs, missing);
  bind(lib, "sinter_model_num_launches", a.num_launches, missing);
  bind(lib, "sinter_model_arena_bytes", a.arena_bytes, missing);
  bind(lib, "sinter_model_input_info", a.input_info, missing);
  bind(lib, "sinter_model_output_info", a.output_info, missing);
  bind(lib, "sinter_context_create", a.context_create, missing);
  bind(lib, "sinter_context_destroy", a.context_destroy, missing);
  bind(lib, "sinter_run", a.run, missing);
  if (missing)
    return missing;
  const char *optional = nullptr;
  bind(lib, "sinter_model_load_v2", a.model_load_v2, optional);
  bind(lib, "sinter_model_launch_info", a.launch_info, optional);
  bind(lib, "sinter_context_profile", a.profile, optional);
  bind(lib, "sinter_model_num_entries", a.num_entries, optional);
  bind(lib, "sinter_model_entry_name", a.entry_name, optional);
  bind(lib, "sinter_model_find_entry", a.find_entry, optional);
  bind(lib, "sinter_model_entry_num_inputs", a.entry_num_inputs, optional);
  bind(lib, "sinter_model_entry_num_outputs", a.entry_num_outputs, optional);
  bind(lib, "sinter_model_entry_input_info", a.entry_input_info, optional);
  bind(lib, "sinter_model_entry_output_info", a.entry_output_info, optional);
  bind(lib, "sinter_model_entry_num_launches", a.entry_num_launches, optional);
  bind(lib, "sinter_context_profile_entry", a.profile_entry, optional);
  bind(lib, "sinter_model_entry_launch_info", a.entry_launch_info, optional);
  bind(lib, "sinter_model_state_bytes", a.state_bytes, optional);
  bind(lib, "sinter_run_entry", a.run_entry, optional);
  return nullptr;
}

uint64_t element_bytes(DLDataType t) { return (uint64_t(t.bits) * t.lanes + 7) / 8; }

uint64_t num_elements(const sinter_tensor_desc &d) {
  uint64_t n = 1;
  for (int i = 0; i < d.ndim; ++i)
    n *= uint64_t(d.shape[i]);
  return n;
}

std::string describe(const sinter_tensor_desc &d) {
  std::string s = std::string(d.name) + " ";
  switch (d.dtype.code) {
  case kDLFloat: s += d.dtype.bits == 32 ? "f32" : "f16"; break;
  case kDLBfloat: s += "bf16"; break;
  case kDLInt: s += d.dtype.bits == 64 ? "i64" : "i32"; break;
  default: s += "code" + std::to_string(d.dtype.code); break;
  }
  s += "[";
  for (int i = 0; i < d.ndim; ++i)
    s += (i ? "x" : "") + std::to_string(d.shape[i]);
  return s + "]";
}

uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u); // round to nearest even (inputs are finite)
  return uint16_t(u >> 16);
}

uint16_t to_f16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const int exp = int((u >> 23) & 0xff) - 127 + 15;
  const uint32_t mant = u & 0x7fffffu;
  if (exp <= 0) return sign; // |f| < 2^-14 flushes to zero: fine for benchmark inputs
  if (exp >= 31) return uint16_t(sign | 0x7c00u);
  return uint16_t(sign | (exp << 10) | (mant >> 13));
}

// Random host bytes: floats uniform in [-1, 1], integers (token ids) in [0, 100).
std::vector<unsigned char> random_bytes(const sinter_tensor_desc &d, std::mt19937 &rng) {
  const uint64_t n = num_elements(d), e = element_bytes(d.dtype);
  std::vector<unsigned char> bytes(n * e);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> ids(0, 99);
  for (uint64_t i = 0; i < n; ++i) {
    unsigned char *p = bytes.data() + i * e;
    if (d.dtype.code == kDLFloat && d.dtype.bits == 32) {
      float v = real(rng); std::memcpy(p, &v, 4);
    } else if (d.dtype.code == kDLFloat && d.dtype.bits == 16) {
      uint16_t v = to_f16(real(rng)); std::memcpy(p, &v, 2);
    } else if (d.dtype.code == kDLBfloat) {
      uint16_t v = to_bf16(real(rng)); std::memcpy(p, &v, 2);
    } else if (d.dtype.code == kDLInt && d.dtype.bits == 64) {
      int64_t v = ids(rng); std::memcpy(p, &v, 8);
    } else if (d.dtype.code == kDLInt && d.dtype.bits == 32) {
      int32_t v = ids(rng); std::memcpy(p, &v, 4);
    } else {
      *p = static_cast<unsigned char>(ids(rng) & 1); // bool and anything else: 0/1 bytes
    }
  }
  return bytes;
}

// Owns every CUDA resource of one run so that each error path cleans up.
struct Session {
  const Api *api = nullptr;
  sinter_model *model = nullptr;
  uint32_t entry = 0; // the entry point run and timed
  sinter_context *ctx = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  std::vector<void *> buffers;
  std::vector<sinter_tensor_desc> in_desc, out_desc;
  std::vector<DLTensor> inputs, outputs;
  ~Session() {
    if (stream) cudaStreamSynchronize(stream);
    if (ctx) api->context_destroy(ctx);
    if (model) api->model_destroy(model);
    for (void *b : buffers) cudaFree(b);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    if (stream) cudaStreamDestroy(stream);
  }
};

bool cuda_ok(cudaError_t e, const char *what, std::ostream &err) {
  if (e == cudaSuccess) return true;
  err << "error: " << what << ": " << cudaGetErrorName(e) << ": " << cudaGetErrorString(e)
      << "\n";
  return false;
}

bool make_tensors(Session &s, bool input, std::mt19937 &rng, std::ostream &err) {
  const Api &a = *s.api;
  // Through the 1.2 per-entry queries when the library has them (same answers for entry 0).
  const bool per_entry = a.has_entries();
  const uint32_t count = per_entry ? (input ? a.entry_num_inputs : a.entry_num_outputs)(s.model,
                                                                                       s.entry)
                                   : (input ? a.num_inputs(s.model) : a.num_outputs(s.model));
  auto &descs = input ? s.in_desc : s.out_desc;
  auto &tensors = input ? s.inputs : s.outputs;
  descs.resize(count);
  tensors.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    sinter_tensor_desc &d = descs[i];
    const sinter_status st =
        per_entry ? (input ? a.entry_input_info : a.entry_output_info)(s.model, s.entry, i, &d)
                  : (input ? a.input_info : a.output_info)(s.model, i, &d);
    if (st != SINTER_OK) {
      err << "error: " << a.last_error() << "\n";
      return false;
    }
    const uint64_t bytes = num_elements(d) * element_bytes(d.dtype);
    void *p = nullptr;
    if (!cuda_ok(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc", err)) return false;
    s.buffers.push_back(p);
    if (input) {
      std::vector<unsigned char> host = random_bytes(d, rng);
      if (!cuda_ok(cudaMemcpy(p, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy", err))
        return false;
    }
    DLTensor &t = tensors[i];
    std::memset(&t, 0, sizeof t);
    t.data = p;
    t.device.device_type = kDLCUDA;
    t.device.device_id = 0;
    int dev = 0;
    if (cudaGetDevice(&dev) == cudaSuccess) t.device.device_id = dev;
    t.ndim = d.ndim;
    t.dtype = d.dtype;
    t.shape = d.shape;
  }
  return true;
}

bool run_once(Session &s, std::ostream &err) {
  const Api &a = *s.api;
  const uint32_t ni = uint32_t(s.inputs.size()), no = uint32_t(s.outputs.size());
  const sinter_status st =
      a.run_entry ? a.run_entry(s.ctx, s.entry, s.inputs.data(), ni, s.outputs.data(), no, s.stream)
                  : a.run(s.ctx, s.inputs.data(), ni, s.outputs.data(), no, s.stream);
  if (st == SINTER_OK)
    return true;
  err << "error: " << (a.run_entry ? "sinter_run_entry" : "sinter_run") << ": " << a.last_error()
      << "\n";
  return false;
}

// Picks the entry named `name` (empty: entry 0) into s.entry.
bool choose_entry(Session &s, const std::string &name, const std::string &soPath,
                  std::ostream &err) {
  const Api &a = *s.api;
  if (name.empty())
    return true;
  if (!a.has_entries()) {
    if (name == "main") // the single entry of a library older than 1.2
      return true;
    const uint32_t abi = a.abi_version();
    err << "error: '" << soPath << "' has sinter ABI " << (abi >> 16) << "." << (abi & 0xffff)
        << " and a single entry point ('main'); --entry " << name << " needs 1.2 or later\n";
    return false;
  }
  if (a.find_entry(s.model, name.c_str(), &s.entry) != SINTER_OK) {
    err << "error: " << a.last_error() << "\n";
    return false;
  }
  return true;
}

// "entries: 2 (prefill, decode); running 'decode'" and "state: N bytes", for a 1.2 library.
void print_entries(const Session &s, std::ostream &out) {
  const Api &a = *s.api;
  if (!a.has_entries())
    return;
  const uint32_t n = a.num_entries(s.model);
  out << "  entries: " << n << " (";
  for (uint32_t i = 0; i < n; ++i) {
    const char *name = a.entry_name(s.model, i);
    out << (i ? ", " : "") << (name ? name : "?");
  }
  const char *running = a.entry_name(s.model, s.entry);
  out << "); running '" << (running ? running : "?") << "'\n";
  out << "  state: " << a.state_bytes(s.model) << " bytes\n";
}

bool print_profile(Session &s, const SinterRunOptions &o, std::ostream &out, std::ostream &err) {
  const Api &a = *s.api;
  // Entry 0 goes through sinter_context_profile, so libraries without the per-entry
  // functions still profile their first entry.
  const bool per_entry = s.entry != 0;
  const uint32_t n = per_entry ? a.entry_num_launches(s.model, s.entry) : a.num_launches(s.model);
  std::vector<std::vector<float>> samples(n);
  std::vector<float> ms(n > 0 ? n : 1);
  for (int r = 0; r < o.profile_repeats; ++r) {
    const sinter_status st =
        per_entry ? a.profile_entry(s.ctx, s.entry, s.inputs.data(), uint32_t(s.inputs.size()),
                                    s.outputs.data(), uint32_t(s.outputs.size()), s.stream,
                                    ms.data(), n)
                  : a.profile(s.ctx, s.inputs.data(), uint32_t(s.inputs.size()), s.outputs.data(),
                              uint32_t(s.outputs.size()), s.stream, ms.data(), n);
    if (st != SINTER_OK) {
      err << "error: sinter_context_profile: " << a.last_error() << "\n";
      return false;
    }
    for (uint32_t i = 0; i < n; ++i) samples[i].push_back(ms[i]);
  }
  std::vector<float> median(n);
  double total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    std::sort(samples[i].begin(), samples[i].end());
    median[i] = samples[i][samples[i].size() / 2];
    total += median[i];
  }
  out << "profile: GPU time per launch, median of " << o.profile_repeats
      << " profiled runs (launches issued directly" << (o.mode == "graph" ? ", also in graph mode" : "")
      << ", events between them)\n";
  out << "  launch  kind    label                     ms     share  onnx sources\n";
  for (uint32_t i = 0; i < n; ++i) {
    sinter_launch_info info{};
    if ((per_entry ? a.entry_launch_info(s.model, s.entry, i, &info)
                   : a.launch_info(s.model, i, &info)) != SINTER_OK) {
      err << "error: " << a.last_error() << "\n";
      return false;
    }
    char line[256];
    std::snprintf(line, sizeof line, "  %6u  %-6s  %-18s %9.4f  %6.1f%%  ", i, info.kind,
                  info.label, double(median[i]), total > 0 ? 100.0 * median[i] / total : 0.0);
    out << line << (*info.sources ? info.sources : "-") << "\n";
  }
  char line[128];
  std::snprintf(line, sizeof line, "  total                              %9.4f  %6.1f%%\n", total,
                100.0);
  out << line;
  return true;
}

} // namespace

int sinterRunCommand(const std::string &soPath, int iterations, int warmup,
                     const std::string &mode, bool profile, std::ostream &out,
                     std::ostream &err) {
  SinterRunOptions o;
  o.iterations = iterations;
  o.warmup = warmup;
  o.mode = mode;
  o.profile = profile;
  return sinterRunCommand(soPath, o, out, err);
}

int sinterRunCommand(const std::string &soPath, const SinterRunOptions &o, std::ostream &out,
                     std::ostream &err) {
  const int iterations = o.iterations, warmup = o.warmup;
  const std::string &mode = o.mode;
  if (iterations < 1 || warmup < 0 || o.profile_repeats < 1) {
    err << "error: iterations must be >= 1 and warmup >= 0\n";
    return 1;
  }
  if (mode != "direct" && mode != "graph") {
    err << "error: unknown mode '" << mode << "' (expected 'direct' or 'graph')\n";
    return 1;
  }
  if (!o.pdl.empty() && o.pdl != "on" && o.pdl != "off") {
    err << "error: unknown pdl setting '" << o.pdl << "' (expected 'on' or 'off')\n";
    return 1;
  }
  if (access(soPath.c_str(), R_OK) != 0) {
    err << "error: cannot read '" << soPath << "': " << std::strerror(errno) << "\n";
    return 1;
  }
  // A bare file name would make dlopen search the library path instead of the directory.
  const std::string path = soPath.find('/') == std::string::npos ? "./" + soPath : soPath;
  // Never dlclose'd: the .so carries its own static CUDA runtime, whose teardown at unload
  // races with process exit; the process ends soon anyway.
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    err << "error: cannot load '" << soPath << "': " << (why ? why : "unknown error") << "\n";
    return 1;
  }
  Api api{};
  if (const char *missing = resolve(lib, api)) {
    err << "error: '" << soPath << "' is not a sinter model library (no " << missing << ")\n";
    return 1;
  }
  const uint32_t abi = api.abi_version();
  if ((abi >> 16) != SINTER_ABI_VERSION_MAJOR) {
    err << "error: '" << soPath << "' has sinter ABI " << (abi >> 16) << "." << (abi & 0xffff)
        << ", this tool needs major " << SINTER_ABI_VERSION_MAJOR << "\n";
    return 1;
  }
  if ((o.profile || !o.weights.empty()) && (!api.model_load_v2 || !api.profile || !api.launch_info)) {
    err << "error: '" << soPath << "' has sinter ABI " << (abi >> 16) << "." << (abi & 0xffff)
        << "; " << (o.profile ? "--profile" : "a weights file") << " needs 1.1 or later\n";
    return 1;
  }
  Session s;
  s.api = &api;
  sinter_status loaded;
  if (o.weights.empty()) {
    loaded = api.model_load(SINTER_ABI_VERSION_MAJOR, &s.model);
  } else {
    sinter_model_load_options lo = SINTER_MODEL_LOAD_OPTIONS_INIT;
    lo.weights_path = o.weights.c_str();
    lo.allow_new_values = o.allow_new_values ? 1 : 0;
    loaded = api.model_load_v2(SINTER_ABI_VERSION_MAJOR, &lo, &s.model);
  }
  if (loaded != SINTER_OK) {
    err << "error: " << api.last_error() << "\n";
    return 1;
  }
  if (!choose_entry(s, o.entry, soPath, err)) return 1;
  if (o.profile && s.entry != 0 && (!api.profile_entry || !api.entry_launch_info)) {
    err << "error: this library profiles entry 0 only (it predates "
           "sinter_context_profile_entry); drop --entry or --profile\n";
    return 1;
  }
  std::mt19937 rng(0);
  if (!make_tensors(s, true, rng, err) || !make_tensors(s, false, rng, err)) return 1;
  sinter_context_options opts = SINTER_CONTEXT_OPTIONS_INIT;
  opts.mode = mode == "graph" ? SINTER_MODE_GRAPH : SINTER_MODE_DIRECT;
  if (!o.pdl.empty())
    setenv("SINTER_PDL", o.pdl == "on" ? "1" : "0", 1); // read by sinter_context_create
  if (api.context_create(s.model, &opts, &s.ctx) != SINTER_OK) {
    err << "error: " << api.last_error() << "\n";
    return 1;
  }
  if (!cuda_ok(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "cudaStreamCreate",
               err) ||
      !cuda_ok(cudaEventCreate(&s.start), "cudaEventCreate", err) ||
      !cuda_ok(cudaEventCreate(&s.stop), "cudaEventCreate", err))
    return 1;

  out << "model: " << soPath << "\n  " << api.build_info() << "\n";
  print_entries(s, out);
  for (const auto &d : s.in_desc) out << "  input  " << describe(d) << "\n";
  for (const auto &d : s.out_desc) out << "  output " << describe(d) << "\n";

  for (int i = 0; i < warmup; ++i)
    if (!run_once(s, err)) return 1;
  if (!cuda_ok(cudaStreamSynchronize(s.stream), "warm-up", err)) return 1;

  constexpr int kRepeats = 5;
  std::vector<float> per_call(kRepeats);
  for (int r = 0; r < kRepeats; ++r) {
    if (!cuda_ok(cudaEventRecord(s.start, s.stream), "cudaEventRecord", err)) return 1;
    for (int i = 0; i < iterations; ++i)
      if (!run_once(s, err)) return 1;
    float ms = 0;
    if (!cuda_ok(cudaEventRecord(s.stop, s.stream), "cudaEventRecord", err) ||
        !cuda_ok(cudaEventSynchronize(s.stop), "running the model", err) ||
        !cuda_ok(cudaEventElapsedTime(&ms, s.start, s.stop), "cudaEventElapsedTime", err))
      return 1;
    per_call[r] = ms / float(iterations);
  }
  std::sort(per_call.begin(), per_call.end());
  out << std::fixed << std::setprecision(4) << "mode " << mode
      << (o.pdl.empty() ? "" : o.pdl == "on" ? " (SINTER_PDL=1)" : " (SINTER_PDL=0)") << ": median "
      << per_call[kRepeats / 2] << " ms per call (min " << per_call.front() << ", max "
      << per_call.back() << "; " << kRepeats << " repeats of " << iterations
      << " calls after " << warmup << " warm-up)\n"
      << "launches: "
      << (api.has_entries() ? api.entry_num_launches(s.model, s.entry) : api.num_launches(s.model))
      << "\n";
  if (o.profile && !print_profile(s, o, out, err))
    return 1;
  return 0;
}
