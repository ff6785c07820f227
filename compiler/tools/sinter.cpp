// The `sinter` command line: compile, inspect, run.
#include "sinter/Compiler/Config.h"
#include "sinter/Compiler/Diagnostics.h"
#include "sinter/Compiler/Emitter.h"
#include "sinter/Compiler/Inspect.h"
#include "sinter/Compiler/OnnxImporter.h"
#include "sinter/Compiler/Pipeline.h"
#include "sinter/Compiler/Target.h"
#include "GenerateCommand.h"
#include "RunCommand.h"
#include "sinter/sinter.h"

#include "sinter/Dialect/Graph/IR/GraphDialect.h"
#include "sinter/Dialect/Launch/IR/LaunchDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>

#ifndef SINTER_SOURCE_DIR
#error "SINTER_SOURCE_DIR must be defined by the build"
#endif

namespace {

struct CompileArgs {
  std::vector<std::string> models;
  std::string output, compileTo = "binary", configFile, target, precision, activations, weights,
      dtype, weightDtype;
  std::vector<std::string> shapes, dims, inputValues;
  bool noMergeLora = false, sample = false, lastLogits = false, timing = false;
  bool printConstants = false;
  int64_t cacheLength = 0;
};

int userError(const std::string &message) {
  std::cerr << "sinter: error: " << message << "\n";
  return 1;
}

/// The folder holding bin/ (the build tree or an install); falls back to the source tree
/// for the pieces a build tree does not copy.
std::string installRoot() {
  std::string exe = llvm::sys::fs::getMainExecutable("sinter", (void *)&installRoot);
  llvm::SmallString<256> root(exe);
  llvm::sys::path::remove_filename(root);
  llvm::sys::path::remove_filename(root);
  return std::string(root);
}

std::string firstExisting(std::initializer_list<std::string> paths) {
  for (const auto &p : paths)
    if (llvm::sys::fs::exists(p))
      return p;
  return *paths.begin();
}

sinter::Toolchain findToolchain() {
  std::string root = installRoot();
  const char *cuda = getenv("CUDA_HOME");
  std::string cudaHome = cuda ? cuda : "/usr/local/cuda";
  const char *nvcc = getenv("SINTER_NVCC");
  sinter::Toolchain t;
  t.nvcc = nvcc ? nvcc : firstExisting({cudaHome + "/bin/nvcc", "/usr/bin/nvcc"});
  t.includeDir = firstExisting({root + "/share/sinter/include", std::string(SINTER_SOURCE_DIR) + "/runtime/include"});
  t.libDir = root + "/lib";
  t.kernelsDir = firstExisting({root + "/share/sinter/kernels", std::string(SINTER_SOURCE_DIR) + "/runtime/kernels"});
  t.exportMap = firstExisting({root + "/share/sinter/sinter_exports.map",
                               std::string(SINTER_SOURCE_DIR) + "/runtime/sinter_exports.map"});
  t.cudaLibDir = cudaHome + "/lib64";
  return t;
}

std::string targetsDir() {
  return firstExisting({installRoot() + "/share/sinter/targets",
                        std::string(SINTER_SOURCE_DIR) + "/compiler/targets"});
}

class PhaseTimer {
public:
  explicit PhaseTimer(bool enabled) : enabled(enabled) {}
  void done(const char *phase) {
    auto now = std::chrono::steady_clock::now();
    if (enabled)
      std::cerr << "sinter: " << phase << " "
                << std::chrono::duration<double>(now - last).count() << " s\n";
    last = now;
  }

private:
  bool enabled;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
};

int writeText(const std::string &output, const std::string &text) {
  if (output.empty() || output == "-") {
    std::cout << text;
    return 0;
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(output, ec);
  if (ec)
    return userError("cannot write '" + output + "': " + ec.message());
  os << text;
  return 0;
}

int printModule(mlir::ModuleOp module, const std::string &output, bool printConstants) {
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  if (!printConstants)
    flags.elideLargeElementsAttrs(16);
  module.print(os, flags);
  return writeText(output, text);
}

struct EntrySource {
  std::string name, path;
  sinter::ImportOptions::CacheEntry cacheEntry = sinter::ImportOptions::CacheEntry::None;
};

bool isEntryName(llvm::StringRef s) {
  if (s.empty() || !(llvm::isAlpha(s[0]) || s[0] == '_'))
    return false;
  return llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// MODEL or NAME=MODEL arguments: one entry point each ("main" for a bare path).
bool parseEntries(const std::vector<std::string> &models, std::vector<EntrySource> &entries,
                  std::string &error) {
  for (const std::string &m : models) {
    size_t eq = m.find('=');
    EntrySource entry{"main", m};
    if (eq != std::string::npos && isEntryName(llvm::StringRef(m).take_front(eq)))
      entry = {m.substr(0, eq), m.substr(eq + 1)};
    if (entry.path.empty()) {
      error = "entry '" + entry.name + "' names no model file";
      return false;
    }
    for (const EntrySource &seen : entries)
      if (seen.name == entry.name) {
        error = models.size() > 1 && entry.name == "main"
                    ? "several models need an entry name each: NAME=MODEL.onnx"
                    : "entry '" + entry.name + "' is given twice";
        return false;
      }
    entries.push_back(entry);
  }
  return true;
}

int runCompile(const CompileArgs &args) {
  auto phase = sinter::parsePhase(args.compileTo);
  if (!phase)
    return userError("--compile-to must be import, graph, launch, source or binary, got '" +
                     args.compileTo + "'");
  sinter::CompileConfig config;
  std::string error;
  if (!args.configFile.empty() && !sinter::loadConfigFile(args.configFile, config, error))
    return userError(error);
  if (!args.target.empty())
    config.target = args.target;
  if (!args.precision.empty()) {
    if (!sinter::isPrecision(args.precision))
      return userError("--precision must be strict or tf32, got '" + args.precision + "'");
    config.precision = args.precision;
  }
  if (!args.activations.empty()) {
    if (!sinter::isActivations(args.activations))
      return userError("--activations must be model or f32, got '" + args.activations + "'");
    config.activations = args.activations;
  }
  if (!args.dtype.empty()) {
    if (!sinter::isDtype(args.dtype))
      return userError("--dtype must be model, bf16 or f16, got '" + args.dtype + "'");
    config.dtype = args.dtype;
  }
  if (!args.weightDtype.empty()) {
    if (!sinter::isWeightDtype(args.weightDtype))
      return userError("--weight-dtype must be model, bf16, fp8 or int4, got '" +
                       args.weightDtype + "'");
    config.weightDtype = args.weightDtype;
  }
  // Before the model is read: the combination can never compile.
  if ((config.weightDtype == "fp8" || config.weightDtype == "int4") &&
      config.activations == "f32")
    return userError("--weight-dtype " + config.weightDtype +
                     " needs bf16 activations, and --activations=f32 keeps them in fp32; "
                     "compile with --activations=model");
  if (args.noMergeLora)
    config.mergeLora = false;
  if (args.sample)
    config.sample = true;
  if (args.lastLogits)
    config.lastLogits = true;
  if (args.cacheLength != 0) {
    if (args.cacheLength < 2)
      return userError("--cache-length must be at least 2 (a prompt token and one decoded), got " +
                       std::to_string(args.cacheLength));
    config.cacheLength = args.cacheLength;
  }
  if (!args.weights.empty()) {
    if (args.weights != "embedded" && args.weights != "external")
      return userError("--weights must be embedded or external, got '" + args.weights + "'");
    config.weights = args.weights;
  }
  for (const std::string &s : args.shapes) {
    size_t eq = s.find('=');
    std::vector<int64_t> shape;
    if (eq == std::string::npos || eq == 0)
      return userError("--shape must be NAME=AxB..., got '" + s + "'");
    if (!sinter::parseShape(s.substr(eq + 1), shape, error))
      return userError(error);
    config.shapes[s.substr(0, eq)] = shape;
  }
  for (const std::string &d : args.dims) {
    std::string name;
    int64_t value = 0;
    if (!sinter::parseDim(d, name, value, error))
      return userError(error);
    config.dims[name] = value;
  }
  for (const std::string &v : args.inputValues) {
    std::string name;
    std::vector<double> values;
    if (!sinter::parseInputValue(v, name, values, error))
      return userError(error);
    config.inputValues[name] = values;
  }
  sinter::Target target;
  if (!sinter::loadTarget(targetsDir(), config.target, target, error))
    return userError(error);
  if (*phase == sinter::Phase::Binary && args.output.empty())
    return userError("compiling to a binary needs -o OUT.so");

  std::vector<EntrySource> entries;
  if (!parseEntries(args.models, entries, error))
    return userError(error);
  if (config.cacheLength > 0) {
    // One with-past export, two entries: the prompt fills the caches, the step extends them.
    if (entries.size() != 1 || entries[0].name != "main")
      return userError("--cache-length compiles one with-past model (MODEL.onnx, no NAME=) "
                       "into its 'prefill' and 'decode' entries; got " +
                       std::to_string(entries.size()) + " model argument(s)");
    std::string path = entries[0].path;
    entries = {{"prefill", path, sinter::ImportOptions::CacheEntry::Prompt},
               {"decode", path, sinter::ImportOptions::CacheEntry::DecodeStep}};
  }

  mlir::MLIRContext context;
  context.loadDialect<sinter::graph::GraphDialect, sinter::launch::LaunchDialect,
                      mlir::func::FuncDialect, mlir::memref::MemRefDialect>();
  // Pass and emitter errors become the one line userError prints.
  sinter::ErrorCollector errors(context);
  auto phaseError = [&](sinter::Phase p) {
    std::string what = errors.summary();
    return userError(std::string(sinter::phaseName(p)) + " phase: " +
                     (what.empty() ? "failed without a message" : what));
  };
  PhaseTimer timer(args.timing);
  sinter::ImportOptions importOptions;
  importOptions.inputShapes = config.shapes;
  importOptions.dimValues = config.dims;
  importOptions.inputValues = config.inputValues;
  // Every entry point becomes one function of the module, named after the entry.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  for (const EntrySource &entry : entries) {
    importOptions.cacheEntry = entry.cacheEntry;
    importOptions.cacheLength = config.cacheLength;
    auto imported = sinter::importOnnxFile(context, entry.path, importOptions, error);
    if (!imported)
      return userError(config.cacheLength > 0 ? entry.name + " entry: " + error : error);
    auto func = *imported->getOps<mlir::func::FuncOp>().begin();
    func.setName(entry.name);
    if (!module) {
      module = std::move(imported);
      continue;
    }
    func->remove();
    module->push_back(func);
  }
  timer.done("import");
  if (*phase == sinter::Phase::Import)
    return printModule(*module, args.output, args.printConstants);

  for (sinter::Phase p : {sinter::Phase::Graph, sinter::Phase::Launch}) {
    if (failed(sinter::runPhase(*module, p, config, target, args.timing)))
      return phaseError(p);
    timer.done(sinter::phaseName(p));
    if (*phase == p)
      return printModule(*module, args.output, args.printConstants);
  }

  sinter::EmittedProgram program;
  std::string modelName;
  for (const EntrySource &entry : entries)
    if (config.cacheLength == 0 || entry.name == "prefill")
      modelName += (modelName.empty() ? "" : ", ") +
                   (entries.size() > 1 && config.cacheLength == 0 ? entry.name + "=" : std::string()) +
                   llvm::sys::path::filename(entry.path).str();
  if (failed(sinter::emitProgram(*module, target, modelName, config.weights == "external",
                                 program)))
    return phaseError(sinter::Phase::Source);
  timer.done("source");
  if (*phase == sinter::Phase::Source)
    return writeText(args.output, program.source);

  if (!sinter::buildSharedObject(program, findToolchain(), target, args.output, error))
    return userError(error);
  timer.done("binary");
  return 0;
}

int runInspect(const std::string &so, bool json) {
  std::string text, error;
  if (!sinter::readInspectJson(so, text, error))
    return userError(error);
  if (json) {
    std::cout << text << "\n";
    return 0;
  }
  std::string report;
  if (!sinter::formatInspectReport(text, report, error))
    return userError(error);
  std::cout << report;
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Sinter: an ahead-of-time compiler from ONNX to one CUDA shared library"};
  app.require_subcommand(1);
  // Where this compiler takes its targets, headers and runtime library from: next to bin/ (a
  // build tree or an install prefix), else the source tree it was built from. Resolved only
  // when asked for.
  app.set_version_flag("--version", [] {
    sinter::Toolchain t = findToolchain();
    return std::string("sinter ") + SINTER_VERSION + " (runtime ABI " +
           std::to_string(SINTER_ABI_VERSION_MAJOR) + "." +
           std::to_string(SINTER_ABI_VERSION_MINOR) + ")\n  targets: " + targetsDir() +
           "\n  headers: " + t.includeDir + "\n  kernels: " + t.kernelsDir +
           "\n  runtime: " + t.libDir + "/libsinter_runtime.a\n  nvcc: " + t.nvcc;
  });

  CompileArgs compile;
  auto *compileCmd = app.add_subcommand("compile", "Compile an ONNX model to a shared library");
  compileCmd->add_option("model", compile.models,
                         "The ONNX model file (external data beside it), or several as "
                         "NAME=FILE: one entry point each in one library, sharing weights and "
                         "state (e.g. prefill=p.onnx decode=d.onnx)")
      ->required();
  compileCmd->add_option("-o,--output", compile.output,
                         "Output: the .so for --compile-to=binary; the IR or source file otherwise (default stdout)");
  compileCmd->add_option("--compile-to", compile.compileTo,
                         "Stop after this phase and print its result: import, graph, launch, source, binary (default)");
  compileCmd->add_flag("--print-constants", compile.printConstants,
                       "With --compile-to import, graph or launch: print every constant in "
                       "full (default: those of more than 16 elements are elided)");
  compileCmd->add_option(
      "--config", compile.configFile,
      "YAML compile config (keys: precision, activations, dtype, weight_dtype, merge_lora, sample, "
      "last_logits, cache_length, target, weights, shapes, dims, input_values)");
  compileCmd->add_option("--target", compile.target, "Target description name from targets/ (default h200)");
  compileCmd->add_option("--precision", compile.precision,
                         "fp32 matrix math: strict (fp32 accuracy, default) or tf32 (tensor cores, ~1e-3)");
  compileCmd->add_option("--activations", compile.activations,
                         "bf16 models: model (default: bf16 activations, rounded where the graph "
                         "rounds) or f32 (activations between kernels and the outputs in fp32; "
                         "weights and KV caches stay bf16; prompts of up to 16 tokens)");
  compileCmd->add_option("--dtype", compile.dtype,
                         "fp32 models: model (default: as exported) or bf16 / f16 (weights, "
                         "activations, float inputs and outputs and KV caches in that type, "
                         "position and mask math in fp32, as Hugging Face computes that dtype)");
  compileCmd->add_option("--weight-dtype", compile.weightDtype,
                         "bf16 linears' constant weights: model (default: as exported), bf16, "
                         "fp8 (e4m3 with one fp32 scale per output row: half the weight "
                         "bytes) or int4 (symmetric 4-bit integers with one fp32 scale per "
                         "output row and group of 128 k: about a quarter of them; a linear "
                         "whose K is not a multiple of 128 keeps bf16); fp8 and int4 need "
                         "bf16 activations, so fp32 exports need --dtype bf16");
  compileCmd->add_flag("--sample", compile.sample,
                       "Language models: every entry with a 'logits' output and an 'input_ids' "
                       "input also outputs 'next_token' [batch, 1], the argmax or a seeded draw "
                       "(temperature, top-k, top-p, repetition penalty: set per context at run "
                       "time) picked on the GPU, so decode loops never wait on the host");
  compileCmd->add_flag("--last-logits", compile.lastLogits,
                       "Language models: a prompt entry's 'logits' output [batch, seq, vocab] "
                       "becomes [batch, 1, vocab], the last position's, which is all that "
                       "generation reads; the LM head then multiplies one row per sequence "
                       "instead of every position (batches left-padded)");
  compileCmd->add_option("--cache-length", compile.cacheLength,
                         "With-past exports (optimum's text-generation-with-past: caches in as "
                         "past_* inputs, out as Concat(past, new) outputs): compile entries "
                         "'prefill' (the prompt, its length from --dim) and 'decode' (one token "
                         "at the input cache_position) that keep the caches in place in the "
                         "context, L positions each; the decode step's attention_mask covers "
                         "all L positions");
  compileCmd->add_flag("--no-merge-lora", compile.noMergeLora,
                       "Keep LoRA adapters as separate matrix products instead of merging them into the base weight");
  compileCmd->add_option("--shape", compile.shapes,
                         "Static shape for a graph input with dynamic dimensions: NAME=AxB (repeatable)");
  compileCmd->add_option("--dim", compile.dims,
                         "Value of a symbolic dimension in every input that uses it: NAME=N, e.g. "
                         "--dim batch_size=1 --dim sequence_length=128 (repeatable; --shape wins "
                         "for its input)");
  compileCmd->add_option("--input-value", compile.inputValues,
                         "Fix a graph input at compile time: NAME=V[,V...] (numbers, true or "
                         "false; one value fills the input, else one per element), e.g. "
                         "--input-value use_cache_branch=true for optimum's merged decoders; "
                         "the input becomes a constant and leaves the entry's inputs "
                         "(repeatable)");
  compileCmd->add_flag("--timing", compile.timing,
                       "Print the time each phase (and each pass of the graph and launch phases) takes to stderr");
  compileCmd->add_option("--weights", compile.weights,
                         "embedded (default: one self-contained .so) or external (weights in "
                         "OUT.safetensors beside the .so, loaded at run time; needed past 2 GB)");

  std::string inspectPath;
  bool inspectJson = false;
  auto *inspectCmd = app.add_subcommand("inspect", "Describe a compiled model: I/O, launches, arena and weight sizes");
  inspectCmd->add_option("model", inspectPath, "The compiled .so")->required();
  inspectCmd->add_flag("--json", inspectJson, "Print the description as JSON");

  std::string runPath, runMode = "direct", runWeights, runEntry;
  bool allowNewWeights = false;
  int iterations = 100, warmup = 10;
  bool profile = false;
  auto *runCmd = app.add_subcommand("run", "Run a compiled model on random inputs on the GPU and time it");
  runCmd->add_option("model", runPath, "The compiled .so")->required();
  runCmd->add_option("--iterations", iterations, "Timed calls per repetition (default 100)")->check(CLI::Range(1, 1000000));
  runCmd->add_option("--warmup", warmup, "Untimed calls before timing (default 10)")->check(CLI::Range(0, 1000000));
  runCmd->add_option("--mode", runMode, "Launch mode: direct or graph (default direct)")->check(CLI::IsMember({"direct", "graph"}));
  runCmd->add_flag("--profile", profile, "Print a per-launch GPU time table");
  runCmd->add_option("--weights", runWeights,
                     "Weights file (safetensors) for a model compiled with --weights=external "
                     "(default: MODEL.safetensors beside it when the model needs one)");
  runCmd->add_flag("--allow-new-weights", allowNewWeights,
                   "Accept a weights file whose values differ from the compiled ones (same names, dtypes, shapes)");
  runCmd->add_option("--entry", runEntry,
                     "Entry point to run and time, by name (default: the first, what sinter_run runs)");

  std::string generatePath;
  SinterGenerateOptions generate;
  auto *generateCmd = app.add_subcommand(
      "generate", "Generate tokens on the GPU with a library compiled with --sample (prefill and "
                  "decode entries, KV cache in the context): token ids in, token ids out");
  generateCmd->add_option("model", generatePath, "The compiled .so")->required();
  generateCmd->add_option("--prompt-ids", generate.prompt_ids, "The prompt as token ids: 1,2,3");
  generateCmd->add_option("--prompt-file", generate.prompt_file,
                          "A file of prompt token ids (separated by commas or white space)");
  generateCmd->add_option("--max-new-tokens", generate.max_new_tokens,
                          "Most tokens to generate (default 32; fewer when the KV cache is full)");
  generateCmd->add_option("--temperature", generate.temperature,
                          "0 (default): greedy; > 0: sample from softmax(logits / temperature)");
  generateCmd->add_option("--top-k", generate.top_k,
                          "Sample among the k most likely tokens (default 0: all)");
  generateCmd->add_option("--top-p", generate.top_p,
                          "Sample among the most likely tokens whose probability reaches p "
                          "(default 1: all)");
  generateCmd->add_option("--repetition-penalty", generate.repetition_penalty,
                          "Penalty on tokens already in the sequence, as Hugging Face's (default "
                          "1: off)");
  generateCmd->add_option("--seed", generate.seed,
                          "Seed of the draws: the same seed gives the same tokens (default 0)");
  generateCmd->add_option("--stop", generate.stop,
                          "Stop token ids, e.g. 128001,128009 (the stop token is printed)");
  generateCmd->add_option("--mode", generate.mode, "Launch mode: graph (default) or direct");
  generateCmd->add_option("--weights", generate.weights,
                          "Weights file (safetensors) for a model compiled with --weights=external "
                          "(default: MODEL.safetensors beside it when the model needs one)");
  generateCmd->add_flag("--allow-new-weights", generate.allow_new_values,
                        "Accept a weights file whose values differ from the compiled ones");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    std::cerr << "sinter: error: " << e.what() << "\n";
    return 1;
  }

  if (*compileCmd)
    return runCompile(compile);
  if (*inspectCmd)
    return runInspect(inspectPath, inspectJson);
  if (*generateCmd) {
    if (generate.weights.empty()) {
      std::string json, error;
      if (sinter::readInspectJson(generatePath, json, error) &&
          sinter::describesExternalWeights(json))
        generate.weights = sinter::weightsPathFor(generatePath);
    }
    return sinterGenerateCommand(generatePath, generate, std::cout, std::cerr);
  }
  SinterRunOptions runOptions;
  runOptions.iterations = iterations;
  runOptions.warmup = warmup;
  runOptions.mode = runMode;
  runOptions.profile = profile;
  runOptions.weights = runWeights;
  runOptions.allow_new_values = allowNewWeights;
  runOptions.entry = runEntry;
  if (runWeights.empty()) {
    std::string json, error;
    if (sinter::readInspectJson(runPath, json, error) && sinter::describesExternalWeights(json))
      runOptions.weights = sinter::weightsPathFor(runPath);
  }
  return sinterRunCommand(runPath, runOptions, std::cout, std::cerr);
}
