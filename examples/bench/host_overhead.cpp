// host_overhead: host microseconds per sinter_run call, direct and graph mode; optionally GPU
// milliseconds per call and the programmatic-dependent-launch (PDL) comparison.
//
//   host_overhead model.so [--calls N] [--batches N] [--json] [--weights F.safetensors]
//                 [--pdl on|off|both] [--gpu-iters N] [--raw]
//
// Host time: each batch times (steady_clock) the issue of `calls` back-to-back sinter_run calls
// on fixed I/O buffers without synchronizing, then waits for the stream outside the timed
// region. Batches are kept short enough (calls x launches <= ~400) that the launch queue never
// fills, so a call never waits for the GPU. Reports the median and the minimum over the
// batches, per call and per launch.
//
// --pdl on|off|both: creates the contexts with SINTER_PDL=1 / 0 (the runtime reads it at
// context creation; without --pdl the environment is left as it is: PDL on where the device has
// it, sm_90+). --gpu-iters N (default 100 with --pdl, else 0 = skipped): GPU milliseconds per
// call, CUDA events around N back-to-back calls, median of 5 repeats. With --pdl, every
// configuration also runs the model once on the same deterministic inputs and its outputs are
// compared bit for bit with the first configuration's (contexts of one model share their
// cuBLASLt algorithms, so they must agree exactly). --raw: also the floor of this machine, host
// us per launch of an empty kernel (a PTX module loaded through the driver API) issued with
// cuLaunchKernel and cuLaunchKernelEx (with and without the PDL attribute), timed the same way.
// Built by examples/cpp/CMakeLists.txt.
#include "example_util.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>

namespace {

struct Stats {
  double median_us = 0, min_us = 0;
  double gpu_ms = -1; // median GPU ms per call (-1: not measured)
  std::vector<uint64_t> checksums;
};

struct Io {
  std::vector<std::unique_ptr<example::DeviceTensor>> buffers;
  std::vector<DLTensor> in, out;
  std::vector<std::vector<unsigned char>> input_bytes;
};

Stats measure(sinter::Model &model, int mode, Io &io, int calls, int batches, int gpu_iters,
              bool checksums) {
  sinter::Context ctx(model, mode);
  cudaStream_t stream = nullptr;
  example::cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  std::vector<DLTensor> &in = io.in, &out = io.out;
  Stats st;
  if (checksums) {
    // Fresh inputs and zeroed outputs, one run, every output hashed.
    for (size_t i = 0; i < in.size(); ++i) io.buffers[i]->upload(io.input_bytes[i]);
    for (size_t i = 0; i < out.size(); ++i)
      example::cuda_check(cudaMemset(io.buffers[in.size() + i]->data(), 0,
                                     io.buffers[in.size() + i]->bytes()), "cudaMemset");
    ctx.run(in, out, stream);
    example::cuda_check(cudaStreamSynchronize(stream), "checked run");
    for (size_t i = 0; i < out.size(); ++i) {
      const std::vector<unsigned char> host = io.buffers[in.size() + i]->download();
      st.checksums.push_back(example::fnv1a64(host.data(), host.size()));
    }
  }
  for (int i = 0; i < 50; ++i) ctx.run(in, out, stream); // graph built, pointers checked
  example::cuda_check(cudaStreamSynchronize(stream), "warm-up");
  std::vector<double> per_call;
  const sinter::Api &api = model.api();
  sinter_context *c = ctx.get();
  const uint32_t ni = uint32_t(in.size()), no = uint32_t(out.size());
  for (int b = 0; b < batches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
      if (api.run(c, in.data(), ni, out.data(), no, stream) != SINTER_OK)
        throw sinter::Error(SINTER_CUDA_ERROR, api.last_error());
    const auto t1 = std::chrono::steady_clock::now();
    example::cuda_check(cudaStreamSynchronize(stream), "batch");
    per_call.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
  }
  std::sort(per_call.begin(), per_call.end());
  st.median_us = per_call[per_call.size() / 2];
  st.min_us = per_call.front();
  if (gpu_iters > 0) {
    cudaEvent_t start = nullptr, stop = nullptr;
    example::cuda_check(cudaEventCreate(&start), "cudaEventCreate");
    example::cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
    std::vector<float> ms(5);
    for (float &m : ms) {
      example::cuda_check(cudaEventRecord(start, stream), "cudaEventRecord");
      for (int i = 0; i < gpu_iters; ++i)
        if (api.run(c, in.data(), ni, out.data(), no, stream) != SINTER_OK)
          throw sinter::Error(SINTER_CUDA_ERROR, api.last_error());
      example::cuda_check(cudaEventRecord(stop, stream), "cudaEventRecord");
      example::cuda_check(cudaEventSynchronize(stop), "GPU timing");
      example::cuda_check(cudaEventElapsedTime(&m, start, stop), "cudaEventElapsedTime");
      m /= float(gpu_iters);
    }
    std::sort(ms.begin(), ms.end());
    st.gpu_ms = ms[2];
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  cudaStreamDestroy(stream);
  return st;
}

// Host us per launch of an empty kernel straight through the driver: what any runtime pays on
// this machine. Returns {cuLaunchKernel, cuLaunchKernelEx, cuLaunchKernelEx + PDL attribute}.
std::vector<double> raw_launch_floor(int per_batch, int batches) {
  auto entry = [](const char *name) {
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    example::cuda_check(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableLegacyStream, &q),
                        name);
    if (!fn || q != cudaDriverEntryPointSuccess) throw std::runtime_error(std::string("no ") + name);
    return fn;
  };
  auto load = reinterpret_cast<PFN_cuModuleLoadData_v2000>(entry("cuModuleLoadData"));
  auto get = reinterpret_cast<PFN_cuModuleGetFunction_v2000>(entry("cuModuleGetFunction"));
  auto launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(entry("cuLaunchKernel"));
  auto launch_ex = reinterpret_cast<PFN_cuLaunchKernelEx_v11060>(entry("cuLaunchKernelEx"));
  auto unload = reinterpret_cast<PFN_cuModuleUnload_v2000>(entry("cuModuleUnload"));
  static const char kPtx[] = ".version 7.0\n.target sm_70\n.address_size 64\n"
                             ".visible .entry sinter_empty()\n{\n\tret;\n}\n";
  example::cuda_check(cudaFree(nullptr), "cudaFree(0)"); // the primary context is current
  CUmodule mod = nullptr;
  CUfunction fn = nullptr;
  if (load(&mod, kPtx) != CUDA_SUCCESS || get(&fn, mod, "sinter_empty") != CUDA_SUCCESS)
    throw std::runtime_error("loading the empty PTX kernel failed");
  cudaStream_t stream = nullptr;
  example::cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  CUlaunchAttribute pdl{};
  pdl.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  pdl.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig cfg{};
  cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = 32;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.hStream = reinterpret_cast<CUstream>(stream);
  cfg.attrs = &pdl;
  std::vector<double> result;
  for (int variant = 0; variant < 3; ++variant) {
    cfg.numAttrs = variant == 2 ? 1 : 0;
    auto one = [&]() {
      const CUresult r = variant == 0 ? launch(fn, 1, 1, 1, 32, 1, 1, 0, cfg.hStream, nullptr, nullptr)
                                      : launch_ex(&cfg, fn, nullptr, nullptr);
      if (r != CUDA_SUCCESS) throw std::runtime_error("raw launch failed: " + std::to_string(int(r)));
    };
    for (int i = 0; i < 200; ++i) one();
    example::cuda_check(cudaStreamSynchronize(stream), "raw warm-up");
    std::vector<double> per_launch;
    for (int b = 0; b < batches; ++b) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < per_batch; ++i) one();
      const auto t1 = std::chrono::steady_clock::now();
      example::cuda_check(cudaStreamSynchronize(stream), "raw batch");
      per_launch.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / per_batch);
    }
    std::sort(per_launch.begin(), per_launch.end());
    result.push_back(per_launch[per_launch.size() / 2]);
  }
  cudaStreamDestroy(stream);
  unload(mod);
  return result;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0]
              << " model.so [--calls N] [--batches N] [--json] [--weights F] [--pdl on|off|both]"
                 " [--gpu-iters N] [--raw]\n";
    return 2;
  }
  int calls = 0, batches = 200, gpu_iters = -1;
  bool json = false, raw = false;
  std::string weights, pdl;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--calls" && i + 1 < argc) calls = std::atoi(argv[++i]);
    else if (a == "--batches" && i + 1 < argc) batches = std::atoi(argv[++i]);
    else if (a == "--gpu-iters" && i + 1 < argc) gpu_iters = std::atoi(argv[++i]);
    else if (a == "--weights" && i + 1 < argc) weights = argv[++i];
    else if (a == "--pdl" && i + 1 < argc) pdl = argv[++i];
    else if (a == "--json") json = true;
    else if (a == "--raw") raw = true;
    else { std::cerr << "unknown option " << a << "\n"; return 2; }
  }
  if (!pdl.empty() && pdl != "on" && pdl != "off" && pdl != "both") {
    std::cerr << "--pdl takes on, off or both\n";
    return 2;
  }
  if (gpu_iters < 0) gpu_iters = pdl.empty() ? 0 : 100;
  try {
    sinter::Library lib(argv[1]);
    sinter::Model model = weights.empty() ? sinter::Model::load(lib.api())
                                          : sinter::Model::load(lib.api(), weights);
    const int device = example::current_device();
    Io io;
    for (uint32_t i = 0; i < model.num_inputs(); ++i) {
      io.buffers.push_back(std::make_unique<example::DeviceTensor>(model.input(i), device));
      io.input_bytes.push_back(example::pattern(model.input(i), i));
      io.buffers.back()->upload(io.input_bytes.back());
      io.in.push_back(io.buffers.back()->dl());
    }
    for (uint32_t i = 0; i < model.num_outputs(); ++i) {
      io.buffers.push_back(std::make_unique<example::DeviceTensor>(model.output(i), device));
      io.out.push_back(io.buffers.back()->dl());
    }
    const uint32_t launches = model.num_launches();
    if (calls <= 0) calls = std::max(1, std::min(50, int(400 / std::max(1u, launches))));
    if (raw) {
      const std::vector<double> f = raw_launch_floor(320, batches);
      std::printf("raw driver floor (empty kernel, batches of 320 launches, median of %d): "
                  "cuLaunchKernel %.3f us, cuLaunchKernelEx %.3f us, cuLaunchKernelEx+PDL %.3f "
                  "us per launch\n",
                  batches, f[0], f[1], f[2]);
    }

    if (pdl.empty()) {
      const Stats direct = measure(model, SINTER_MODE_DIRECT, io, calls, batches, gpu_iters, false);
      const Stats graph = measure(model, SINTER_MODE_GRAPH, io, calls, batches, gpu_iters, false);
      if (json) {
        std::printf("{\"model\": \"%s\", \"launches\": %u, \"calls_per_batch\": %d, \"batches\": %d, "
                    "\"direct_us_per_call\": %.3f, \"direct_us_per_call_min\": %.3f, "
                    "\"direct_us_per_launch\": %.3f, \"graph_us_per_call\": %.3f, "
                    "\"graph_us_per_call_min\": %.3f, \"direct_gpu_ms_per_call\": %.5f, "
                    "\"graph_gpu_ms_per_call\": %.5f}\n",
                    argv[1], launches, calls, batches, direct.median_us, direct.min_us,
                    direct.median_us / launches, graph.median_us, graph.min_us, direct.gpu_ms,
                    graph.gpu_ms);
      } else {
        std::printf("model %s: %u launches; host time per sinter_run call (median of %d batches "
                    "of %d calls, min in parentheses)\n",
                    argv[1], launches, batches, calls);
        std::printf("  direct: %8.3f us per call (%.3f)  = %.3f us per launch\n", direct.median_us,
                    direct.min_us, direct.median_us / launches);
        std::printf("  graph:  %8.3f us per call (%.3f)\n", graph.median_us, graph.min_us);
        if (gpu_iters > 0)
          std::printf("  GPU ms per call (%d back-to-back calls, median of 5): direct %.5f, graph "
                      "%.5f\n",
                      gpu_iters, direct.gpu_ms, graph.gpu_ms);
      }
      return 0;
    }

    // PDL comparison: every mode with PDL on and/or off, outputs checked against the first.
    cudaDeviceProp prop{};
    example::cuda_check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    std::vector<const char *> settings;
    if (pdl != "off") settings.push_back("1");
    if (pdl != "on") settings.push_back("0");
    struct Row {
      const char *mode, *pdl;
      Stats st;
    };
    std::vector<Row> rows;
    for (int mode : {SINTER_MODE_DIRECT, SINTER_MODE_GRAPH})
      for (const char *s : settings) {
        setenv("SINTER_PDL", s, 1);
        rows.push_back({mode == SINTER_MODE_GRAPH ? "graph" : "direct", s,
                        measure(model, mode, io, calls, batches, gpu_iters, true)});
      }
    bool all_same = true;
    for (const Row &r : rows) all_same = all_same && r.st.checksums == rows.front().st.checksums;
    if (json) {
      std::printf("{\"model\": \"%s\", \"device\": \"%s\", \"cc\": \"%d.%d\", \"launches\": %u, "
                  "\"calls_per_batch\": %d, \"batches\": %d, \"gpu_iters\": %d, "
                  "\"outputs_identical\": %s, \"configs\": [",
                  argv[1], prop.name, prop.major, prop.minor, launches, calls, batches, gpu_iters,
                  all_same ? "true" : "false");
      for (size_t i = 0; i < rows.size(); ++i)
        std::printf("%s{\"mode\": \"%s\", \"pdl\": %s, \"host_us_per_call\": %.3f, "
                    "\"host_us_per_call_min\": %.3f, \"host_us_per_launch\": %.3f, "
                    "\"gpu_ms_per_call\": %.5f}",
                    i ? ", " : "", rows[i].mode, rows[i].pdl[0] == '1' ? "true" : "false",
                    rows[i].st.median_us, rows[i].st.min_us, rows[i].st.median_us / launches,
                    rows[i].st.gpu_ms);
      std::printf("]}\n");
    } else {
      std::printf("model %s: %u launches; %s (sm_%d%d: PDL %s)\n", argv[1], launches, prop.name,
                  prop.major, prop.minor, prop.major >= 9 ? "available" : "not available");
      std::printf("  host: median (min) of %d batches of %d calls; GPU: %d back-to-back calls, "
                  "median of 5\n",
                  batches, calls, gpu_iters);
      std::printf("  mode    PDL  host us/call        host us/launch  GPU ms/call  outputs\n");
      for (const Row &r : rows)
        std::printf("  %-6s  %-3s  %9.3f (%9.3f)  %14.3f  %11.5f  %s\n", r.mode,
                    r.pdl[0] == '1' ? "on" : "off", r.st.median_us, r.st.min_us,
                    r.st.median_us / launches, r.st.gpu_ms,
                    r.st.checksums == rows.front().st.checksums ? "identical" : "DIFFER");
      std::printf("outputs: %s\n", all_same ? "bit-identical in every configuration"
                                            : "DIFFER between configurations");
    }
    return all_same ? 0 : 3;
  } catch (const std::exception &e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
