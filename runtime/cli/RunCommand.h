// `sinter run`: load a compiled model .so, run it on random inputs and time it.
#pragma once

#include <iosfwd>
#include <string>

struct SinterRunOptions {
  int iterations = 100;
  int warmup = 10;
  std::string mode = "direct"; // "direct" or "graph"
  // Per-launch GPU time table (launch, kind, label, ONNX sources, ms, share of the total):
  // median over `profile_repeats` profiled runs (sinter_context_profile, ABI >= 1.1).
  bool profile = false;
  int profile_repeats = 5;
  // Weights file for a library compiled with --weights=external (or to replace embedded
  // weights); empty = the library's embedded weights.
  std::string weights;
  bool allow_new_values = false; // a checkpoint with other values (same names/dtypes/shapes)
  // Programmatic dependent launch: "on" / "off" set SINTER_PDL=1 / 0 for the context (the
  // runtime reads it at context creation); empty = leave the environment as it is.
  std::string pdl;
  // Entry point to run and time, by name (ABI >= 1.2 for anything but the first entry); empty =
  // entry 0, what sinter_run runs.
  std::string entry;
};

// Returns the process exit code (0 on success, 1 on any error, reported on `err`). Prints the
// model's entries and state bytes (ABI >= 1.2), the chosen entry's I/O, the median milliseconds
// per call over 5 repeats of `iterations` back-to-back calls (after `warmup` calls), the launch
// count, and with `profile` the per-launch table, on `out`.
int sinterRunCommand(const std::string &soPath, const SinterRunOptions &options,
                     std::ostream &out, std::ostream &err);

// The original entry point (no weights file).
int sinterRunCommand(const std::string &soPath, int iterations, int warmup,
                     const std::string &mode, bool profile, std::ostream &out,
                     std::ostream &err);
