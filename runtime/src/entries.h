// A program's entry points as the runtime sees them (ABI 1.2): its entry table, or, for code
// emitted before the table existed (num_entries == 0), one entry called "main" made of the
// legacy single-entry fields. Plain reads of the program: no CUDA, usable on any machine.
#pragma once

#include "sinter/program.h"

#include <cstddef>
#include <string>

namespace sinter::rt {

// The name of the single entry of a program without an entry table.
constexpr const char *kLegacyEntryName = "main";

// Number of entries, >= 1.
uint32_t entry_count(const sinter_program &program);

// Entry `index` (< entry_count); by value, so the legacy entry needs no storage.
sinter_entry entry_at(const sinter_program &program, uint32_t index);

// The entry made of the legacy fields, named "main".
sinter_entry legacy_entry(const sinter_program &program);

// Writes "'prefill', 'decode'" (the entries' names, for error messages) into buf, cut short
// with "..." when it does not fit; returns buf. Never allocates or throws.
const char *entry_names(const sinter_program &program, char *buf, size_t size);

// What a launch error names: "launch 3 (label)", or "entry 'decode' launch 3 (label)" when
// the program has several entries; `fallback` stands for a launch without a label.
std::string launch_name(const sinter_program &program, uint32_t entry, uint32_t index,
                        const char *fallback);

// Room for entry_names in a message (the last-error buffer holds 1024 bytes).
constexpr size_t kEntryNamesBytes = 512;

} // namespace sinter::rt
