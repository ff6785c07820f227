// sinter_stress: many threads and contexts on one model, checked bit for bit against a
// single-threaded run.
//
//   sinter_stress model.so [--threads 8] [--contexts 8] [--runs 10000] [--inputs 16]
//                 [--weights file.safetensors]
//
// One model is loaded and shared. A single-threaded pass first computes the reference outputs
// of `inputs` distinct deterministic inputs (direct mode), and checks a graph-mode context gives
// the same bytes. Then every thread creates `contexts` contexts, each on its own stream,
// alternating direct and graph mode, and issues `runs` runs on each, round-robin, without any
// host synchronization:
//   - direct contexts use input (g + r) % inputs for run r and write straight into a per-run
//     record slot (every run has new I/O addresses);
//   - graph contexts switch input every 10 runs (graph node updates) and write a fixed output
//     buffer that is copied into the run's record slot on the same stream.
// At the end every recorded run is compared with its reference with memcmp. Exit code 0 only if
// all runs are bit-identical.
#include "example_util.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

namespace {

struct Options {
  std::string so, weights;
  int threads = 8, contexts = 8, runs = 10000, inputs = 16;
};

struct Shared {
  sinter::Model *model = nullptr;
  int device = 0;
  std::vector<std::vector<std::unique_ptr<example::DeviceTensor>>> inputs; // [k][input]
  std::vector<sinter_tensor_desc> out_desc;
  uint64_t out_bytes = 0;                                   // all outputs of one run
  std::vector<std::vector<unsigned char>> reference;        // [k]: concatenated outputs
};

uint64_t align256(uint64_t n) { return (n + 255) & ~uint64_t(255); }

// One context of a worker thread and the device records of its runs.
struct Worker {
  std::unique_ptr<sinter::Context> ctx;
  int global = 0;
  bool graph = false;
  cudaStream_t stream = nullptr;
  void *records = nullptr; // runs x out_bytes (each output 256-aligned inside a run's slot)
  void *fixed = nullptr;   // graph mode: the output buffers the graph writes
  uint64_t slot = 0;
  std::vector<DLTensor> in, out;
  std::vector<int64_t> shapes; // backing for out[].shape
};

int input_of(const Worker &w, int r, int inputs) {
  return w.graph ? (w.global + r / 10) % inputs : (w.global + r) % inputs;
}

void point_outputs(Worker &w, const Shared &s, char *base) {
  uint64_t off = 0;
  for (size_t o = 0; o < s.out_desc.size(); ++o) {
    w.out[o].data = base + off;
    off += align256(example::tensor_bytes(s.out_desc[o]));
  }
}

void set_inputs(Worker &w, const Shared &s, int k) {
  for (size_t i = 0; i < w.in.size(); ++i) w.in[i] = s.inputs[k][i]->dl();
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (argc < 2) {
    std::cerr << "usage: " << argv[0]
              << " model.so [--threads N] [--contexts N] [--runs N] [--inputs N] [--weights F]\n";
    return 2;
  }
  o.so = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--threads") o.threads = std::atoi(argv[i + 1]);
    else if (a == "--contexts") o.contexts = std::atoi(argv[i + 1]);
    else if (a == "--runs") o.runs = std::atoi(argv[i + 1]);
    else if (a == "--inputs") o.inputs = std::atoi(argv[i + 1]);
    else if (a == "--weights") o.weights = argv[i + 1];
    else { std::cerr << "unknown option " << a << "\n"; return 2; }
  }
  try {
    sinter::Library lib(o.so);
    sinter::Model model = o.weights.empty() ? sinter::Model::load(lib.api())
                                            : sinter::Model::load(lib.api(), o.weights);
    Shared s;
    s.model = &model;
    s.device = example::current_device();
    for (uint32_t i = 0; i < model.num_outputs(); ++i) {
      s.out_desc.push_back(model.output(i));
      s.out_bytes += align256(example::tensor_bytes(s.out_desc.back()));
    }
    s.inputs.resize(o.inputs);
    for (int k = 0; k < o.inputs; ++k)
      for (uint32_t i = 0; i < model.num_inputs(); ++i) {
        const sinter_tensor_desc d = model.input(i);
        s.inputs[k].push_back(std::make_unique<example::DeviceTensor>(d, s.device));
        s.inputs[k].back()->upload(example::pattern(d, unsigned(k * 131 + i)));
      }

    // Single-threaded reference, and graph mode agreeing with it.
    auto reference_pass = [&](int mode) {
      Worker w;
      w.ctx = std::make_unique<sinter::Context>(model, mode);
      w.in.resize(model.num_inputs());
      w.out.resize(model.num_outputs());
      std::vector<std::unique_ptr<example::DeviceTensor>> outs;
      for (uint32_t i = 0; i < model.num_outputs(); ++i) {
        outs.push_back(std::make_unique<example::DeviceTensor>(s.out_desc[i], s.device));
        w.out[i] = outs.back()->dl();
      }
      std::vector<std::vector<unsigned char>> result(o.inputs);
      for (int k = 0; k < o.inputs; ++k) {
        set_inputs(w, s, k);
        w.ctx->run(w.in, w.out);
        example::cuda_check(cudaDeviceSynchronize(), "reference run");
        for (uint32_t i = 0; i < model.num_outputs(); ++i) {
          std::vector<unsigned char> h = outs[i]->download();
          h.resize(align256(h.size()), 0);
          result[k].insert(result[k].end(), h.begin(), h.end());
        }
      }
      return result;
    };
    s.reference = reference_pass(SINTER_MODE_DIRECT);
    if (reference_pass(SINTER_MODE_GRAPH) != s.reference) {
      std::cout << "FAIL: graph mode differs from direct mode on the reference inputs\n";
      return 1;
    }

    // Workers.
    const int total = o.threads * o.contexts;
    std::vector<Worker> workers(total);
    std::atomic<int> failures{0};
    std::string first_error;
    std::mutex error_mutex;
    auto record_error = [&](const std::string &what) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (first_error.empty()) first_error = what;
      failures++;
    };
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < o.threads; ++t)
      threads.emplace_back([&, t] {
        try {
          example::cuda_check(cudaSetDevice(s.device), "cudaSetDevice");
          std::vector<Worker *> mine;
          for (int c = 0; c < o.contexts; ++c) {
            Worker &w = workers[t * o.contexts + c];
            w.global = t * o.contexts + c;
            w.graph = (w.global % 2) == 1;
            w.ctx = std::make_unique<sinter::Context>(model, w.graph ? SINTER_MODE_GRAPH
                                                                     : SINTER_MODE_DIRECT);
            example::cuda_check(cudaStreamCreateWithFlags(&w.stream, cudaStreamNonBlocking),
                                "cudaStreamCreate");
            example::cuda_check(cudaMalloc(&w.records, s.out_bytes * uint64_t(o.runs)),
                                "cudaMalloc records");
            if (w.graph)
              example::cuda_check(cudaMalloc(&w.fixed, s.out_bytes), "cudaMalloc output");
            w.in.resize(s.inputs[0].size());
            w.out.resize(s.out_desc.size());
            w.shapes.resize(s.out_desc.size() * SINTER_TENSOR_MAX_NDIM);
            for (size_t i = 0; i < s.out_desc.size(); ++i) {
              std::memset(&w.out[i], 0, sizeof(DLTensor));
              std::memcpy(&w.shapes[i * SINTER_TENSOR_MAX_NDIM], s.out_desc[i].shape,
                          sizeof(int64_t) * SINTER_TENSOR_MAX_NDIM);
              w.out[i].device = {kDLCUDA, s.device};
              w.out[i].ndim = s.out_desc[i].ndim;
              w.out[i].dtype = s.out_desc[i].dtype;
              w.out[i].shape = &w.shapes[i * SINTER_TENSOR_MAX_NDIM];
            }
            if (w.graph) point_outputs(w, s, static_cast<char *>(w.fixed));
            mine.push_back(&w);
          }
          for (int r = 0; r < o.runs; ++r)
            for (Worker *w : mine) {
              set_inputs(*w, s, input_of(*w, r, o.inputs));
              char *slot = static_cast<char *>(w->records) + uint64_t(r) * s.out_bytes;
              if (!w->graph) point_outputs(*w, s, slot);
              w->ctx->run(w->in, w->out, w->stream);
              if (w->graph)
                example::cuda_check(cudaMemcpyAsync(slot, w->fixed, s.out_bytes,
                                                    cudaMemcpyDeviceToDevice, w->stream),
                                    "cudaMemcpyAsync");
            }
          for (Worker *w : mine)
            example::cuda_check(cudaStreamSynchronize(w->stream), "running");
        } catch (const std::exception &e) {
          record_error(std::string("thread ") + std::to_string(t) + ": " + e.what());
        }
      });
    for (std::thread &th : threads) th.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (failures) {
      std::cout << "FAIL: " << failures << " threads failed; first: " << first_error << "\n";
      return 1;
    }

    // Compare every run with its reference.
    uint64_t mismatches = 0, checked = 0;
    std::string first_mismatch;
    std::vector<unsigned char> host(s.out_bytes * uint64_t(o.runs));
    for (Worker &w : workers) {
      example::cuda_check(cudaMemcpy(host.data(), w.records, host.size(), cudaMemcpyDeviceToHost),
                          "reading records");
      for (int r = 0; r < o.runs; ++r) {
        const int k = input_of(w, r, o.inputs);
        // Compare only the meaningful bytes of each output (padding is not written).
        uint64_t off = 0;
        bool same = true;
        for (const auto &d : s.out_desc) {
          const uint64_t b = example::tensor_bytes(d);
          same = same && std::memcmp(host.data() + uint64_t(r) * s.out_bytes + off,
                                     s.reference[k].data() + off, b) == 0;
          off += align256(b);
        }
        ++checked;
        if (!same && mismatches++ == 0)
          first_mismatch = "context " + std::to_string(w.global) + (w.graph ? " (graph)" : " (direct)") +
                           " run " + std::to_string(r);
      }
      cudaStreamDestroy(w.stream);
      cudaFree(w.records);
      if (w.fixed) cudaFree(w.fixed);
      w.ctx.reset();
    }
    std::cout << "stress: " << o.threads << " threads x " << o.contexts << " contexts x " << o.runs
              << " runs = " << checked << " runs (" << model.num_launches()
              << " launches each; half direct, half graph) in " << seconds << " s ("
              << double(checked) / seconds << " runs/s)\n";
    if (mismatches) {
      std::cout << "FAIL: " << mismatches << " runs differ from the single-threaded reference; first: "
                << first_mismatch << "\n";
      return 1;
    }
    std::cout << "PASS: every run bit-identical to the single-threaded reference\n";
    return 0;
  } catch (const std::exception &e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
