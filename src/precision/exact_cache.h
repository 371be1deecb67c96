// The exact reference's outputs of a solve's samples, cached in a file beside the envelope
// (ENVELOPE.exact.safetensors), so that a second solve on the same envelope, `explain PROGRAM`,
// the ε curve and --narrow do not run the reference again. The file is keyed by everything the
// outputs depend on (the program's hash, the weights' and data's SHA-256, the bindings, the
// entry, the bits, the samples, presk's version), written atomically and checked on read: a
// key that differs, or a file that is missing, truncated or corrupt, is a miss (with a one-line
// note, except for a missing file), never a crash and never a wrong reuse.
// docs/precision.md "solve" (the exact outputs' cache) describes the file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "precision/measure.h"

namespace presk::precision {

struct ExactCache {
  std::string path;  // the cache file
  std::string key;   // canonical text of what the outputs depend on (exact_cache_key)
  std::function<void(const std::string&)> note;  // one line: why the file was ignored or not written
};

// The cache file of an envelope: ENVELOPE.exact.safetensors, in the envelope's folder.
std::string exact_cache_path(const std::string& envelope_path);

// The exact outputs of `count` samples at `bits` when `cache.path` holds them under exactly
// `cache.key`; nullopt otherwise (a note says why, unless the file does not exist). A sample the
// file does not hold yet (a run stopped midway) is an empty list of results. In a distributed
// run rank 0 reads the file and hands what it holds to every rank.
std::optional<ExactOutputs> read_exact_cache(const ExactCache& cache, int64_t count, long bits);

// Writes `outputs` under `cache.key`, atomically; a failure to write (a read-only folder, a full
// disk) is a note, not an error: the solve goes on without the cache.
void write_exact_cache(const ExactCache& cache, const ExactOutputs& outputs);

// Fills every sample of `all` that has no results yet (sample k on inputs(k)) from run_exactly,
// split across the ranks of a distributed run. A distributed run computes them in rounds (at
// least one sample per rank and thread, at most 8 rounds) and rewrites `cache` after each, so
// that a run stopped midway (a rank killed) resumes from what was done; one process computes
// them at once and writes once. `cache` null: no cache.
void complete_exact_outputs(const ExactCache* cache, ExactOutputs& all, const ir::Program& program,
                            const ir::Function& entry, const reference::ParameterStore& parameters,
                            const SampleInputs& inputs, int threads);

// One sample's exact outputs as bytes and back, in the cache's words (tuples too): what the
// ranks of a distributed run exchange (support/ranks.h).
std::string encode_exact_sample(const std::vector<reference::Value<reference::MpfrArith>>& sample, long bits);
std::vector<reference::Value<reference::MpfrArith>> decode_exact_sample(std::string_view bytes, long bits);

}  // namespace presk::precision
