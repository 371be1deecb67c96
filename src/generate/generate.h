// Generation: a program's `decode` entry (docs/language.md, "State") run one token after
// another, its caches handed from each step to the next (the native executor writes them in
// place), the checkpoint's vocabulary, a seeded sampler, and the per-step comparison of two
// realizations (presk generate --compare). Errors E1510–E1519.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exec/native/executor.h"
#include "exec/native/realization.h"
#include "exec/reference/parameters.h"
#include "ir/ir.h"

namespace presk::generate {

// The characters of a checkpoint (docs/data.md): token k is the k-th byte.
struct Vocabulary {
  std::vector<uint8_t> characters;
  std::array<int32_t, 256> token_of{};
  // The tokens of `text`; a byte outside the vocabulary is E1510, naming it and its position.
  std::vector<int64_t> encode(std::string_view text) const;
  std::string decode(int64_t token) const;  // one byte
};
// The `vocabulary` a weights file of `presk train --weights-out` records (E1511 when it records
// none, E1512 when it is not a JSON string of distinct Latin-1 characters or its size is not `size`).
Vocabulary read_vocabulary(const std::string& weights_path, int64_t size);

// A program's decode entry: `decode(state…, at : Z, token : Z[1]) -> (R[1, V], state…)`, each
// state an R tensor returned in its next form (E1513 for an entry of another form, or none).
struct DecodeEntry {
  const ir::Function* function = nullptr;
  size_t states = 0;       // leading arguments carried from step to step
  int64_t context = 0;     // positions the caches hold: the largest `at` is context − 1
  int64_t vocabulary = 0;  // V
};
DecodeEntry find_decode_entry(const ir::Program& program);

// One generation's state: the position reached and the caches.
class Stepper {
 public:
  virtual ~Stepper() = default;
  // Feeds `token` at the current position and returns the next token's logits (as doubles,
  // each exactly the executor's value); E1514 past the context.
  virtual std::vector<double> step(int64_t token) = 0;
  int64_t position() const { return position_; }

 protected:
  int64_t position_ = 0;
};

// What every generation of one program under one realization shares (read-only, so requests on
// several threads share it).
struct NativeModel {
  const ir::Program* program = nullptr;
  DecodeEntry entry;
  exec::native::Realization realization;
  exec::native::PreparedParameters parameters;
  exec::native::ExecuteOptions options;
};
NativeModel prepare_native(const ir::Program& program, const reference::ParameterStore& weights,
                           const exec::native::Realization& realization, int threads);
std::unique_ptr<Stepper> native_stepper(const NativeModel& model);
// The exact reference (MPFR at `bits`): each logit correctly rounded to binary64.
std::unique_ptr<Stepper> exact_stepper(const ir::Program& program, const reference::ParameterStore& weights, long bits);

// How the next token is chosen: greedy (temperature 0: the largest logit, the lowest index on a
// tie), or drawn from softmax(logits / temperature) over the top_k largest (0: all) with the
// uniform draw of step s taken from (seed, s): the same seed gives the same text.
struct Sampling {
  double temperature = 0;
  int64_t top_k = 0;
  uint64_t seed = 0;
};
int64_t choose(const std::vector<double>& logits, const Sampling& sampling, int64_t step);

// Feeds the prompt, then generates `count` tokens, calling on_token(token) after each (false:
// stop). Returns the generated tokens. The prompt is at least one token (E1515) and prompt and
// tokens fit the context (E1514).
std::vector<int64_t> generate(Stepper& stepper, const std::vector<int64_t>& prompt, int64_t count,
                              const Sampling& sampling, const std::function<bool(int64_t)>& on_token);
void check_fits(const DecodeEntry& entry, size_t prompt, int64_t count);

// Two generations of the same prompt in lockstep, both fed the first one's tokens: per step the
// largest |logit difference|, each one's choice (the same draw), and whether they differ.
struct CompareStep {
  int64_t position = 0;
  double gap = 0;
  int64_t first = 0, second = 0;
};
struct Comparison {
  std::vector<CompareStep> steps;
  int64_t flips = 0;
  std::optional<int64_t> first_divergence;  // the first step whose choices differ
  double largest_gap = 0;
};
Comparison compare(Stepper& first, Stepper& second, const std::vector<int64_t>& prompt, int64_t count,
                   const Sampling& sampling, const std::function<void(const CompareStep&)>& on_step);

}  // namespace presk::generate
