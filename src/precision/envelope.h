// The magnitude envelope (DESIGN.md §6; docs/precision.md): what `presk calibrate --precision`
// measures on the exact reference over a set of samples, and what `presk check --precision`
// propagates errors through. Every bound computed from an envelope is conditional on it: on
// its samples, its weights and its date. Stored as JSON (`"format": 1`), validated on read
// with errors (E09xx) that name the field.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace presk::precision {

// For a sum or contraction site: over every output element of every sample (and every call
// and layer of the site), the largest of each term statistic (reference/observer.h,
// TermStatistics), with tᵢ = xᵢ·wᵢ (a sum: tᵢ = xᵢ, and no second operand).
struct TermEnvelope {
  int64_t terms = 0;                  // k: the number of terms added per output element
  double sum_abs_terms = 0;           // max Σ|tᵢ|, the condition number's numerator
  double root_sum_squares = 0;        // max √Σtᵢ²
  double operand_factors[2] = {0, 0};  // max Σ|wᵢ| (the factor x's error is multiplied by), max Σ|xᵢ|
};

// The largest rounding error of the site's sampled values in each machine type,
// max |fl_d(x) − x| with fl_d round-to-nearest-even (bf16: from the exact value, once).
struct RoundingEnvelope {
  double f64 = 0;
  double f32 = 0;
  double bf16 = 0;
};

struct SiteEnvelope {
  std::string site;             // "<function>/%<let>", the key a realization types
  std::string op;               // the primitive's IR name ("contract", "exp", …)
  std::string type;             // the let's IR type, "R[256, 64]"
  double max_abs = 0;           // the largest |v| over all samples, calls and layers
  int64_t elements = 0;         // elements computed over all samples, calls and layers
  int64_t elements_per_sample = 0;  // the same for the first sample alone
  double weight = 1;            // arithmetic operations per element (a contraction: 2k − 1)
  std::optional<TermEnvelope> terms;  // sums, means and contractions only
  RoundingEnvelope rounding;
  std::optional<double> sensitivity;  // ‖∂L/∂v‖₁ from one reverse sweep; nullopt: unknown
};

struct ParameterEnvelope {
  std::string path;             // full parameter path "blocks.attn.wq.w"
  std::string type;             // "R[2, 64, 64]" (stack axes first)
  double max_abs = 0;
  int64_t elements = 0;
  RoundingEnvelope rounding;
  std::optional<double> sensitivity;  // ‖θ̄‖₁ of its cotangent
};

struct Envelope {
  int format = 1;
  std::string program;          // the program's path as given
  std::string program_hash;     // ir::program_hash of the lowered program (consts, dims bound)
  std::string entry;
  std::map<std::string, std::string> bindings;  // --const/--dim as given: name → value text
  std::string data;             // the data file, or "" when the samples were synthesized
  int64_t seed = 0;             // the seed the samples were synthesized from (no data file)
  int64_t samples = 0;
  int64_t offset = 0;
  int bits = 0;                 // the reference's precision
  std::string weights;          // the weights file, or "" for the program's initializers
  std::string date;             // UTC, ISO 8601 ("2026-11-30T12:00:00Z")
  double output_max_abs = 0;    // the largest |entry output| over the samples
  std::vector<SiteEnvelope> sites;           // in program order: function by function, let by let
  std::vector<ParameterEnvelope> parameters;  // in the program's parameter order

  const SiteEnvelope* find_site(const std::string& site) const;
  const ParameterEnvelope* find_parameter(const std::string& path) const;
};

// Writes `envelope` as JSON, atomically (a temporary file renamed into place).
void write_envelope(const Envelope& envelope, const std::string& path);
// Reads and validates an envelope file: unreadable file, malformed JSON, an unknown format,
// a missing or mistyped field — each a coded error naming the file and the field.
Envelope read_envelope(const std::string& path);

}  // namespace presk::precision
