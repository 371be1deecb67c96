// The magnitude envelope (DESIGN.md §6; docs/precision.md): what `presk calibrate --precision`
// measures on the exact reference over a set of samples, and what `presk check --precision`
// propagates errors through. Every bound computed from an envelope is conditional on it: on
// its samples, its weights and its date. Stored as JSON (`"format": 1`), validated on read
// with errors (E09xx) that name the field.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace presk::precision {

// For a sum, mean or contraction site: over every output element of every sample (and every
// call and layer of the site), the largest of each term statistic (reference/observer.h,
// TermStatistics), with tᵢ = xᵢ·wᵢ. A sum or mean has one operand x and wᵢ = 1, so tᵢ = xᵢ,
// Σ|wᵢ| = k and Σ|xᵢ| = Σ|tᵢ|; a mean's statistics are those of its sum, before the division
// by k. Each maximum is taken separately (they may come from different output elements).
// Binary64 magnitudes to a relative accuracy of about k·2⁻⁵³, not exact quantities.
struct TermEnvelope {
  int64_t terms = 0;                  // k: the number of terms added per output element
  double sum_abs_terms = 0;           // max Σ|tᵢ|, the condition number's numerator
  double root_sum_squares = 0;        // max √Σtᵢ²
  double operand_factors[2] = {0, 0};  // max Σ|wᵢ| (the factor x's error is multiplied by), max Σ|xᵢ|
};

// The largest rounding error of the site's sampled values in each machine type,
// max |fl_d(x) − x| with fl_d round-to-nearest-even (bf16: from the exact value, once), with
// each type's subnormals; +∞ where a value overflows the type. Rounded up to binary64.
// Finite values only (±∞ is exact in every type). A parameter is binary64 at rest: f64 is 0.
struct RoundingEnvelope {
  double f64 = 0;
  double f32 = 0;
  double bf16 = 0;
};

struct SiteEnvelope {
  std::string site;             // "<function>/%<let>", the key a realization types
  std::string op;               // the primitive's IR name ("contract", "exp", …)
  std::string type;             // the let's IR type, "R[256, 64]"
  double max_abs = 0;           // the largest finite |v| over all samples, calls and layers,
                                // rounded up to binary64
  int64_t elements = 0;         // elements computed over all samples, calls and layers
  int64_t elements_per_sample = 0;  // the same for the first sample alone
  int64_t non_finite = 0;       // of `elements`, those that were ±∞ or NaN (a causal_mask's
                                // −∞): left out of max_abs and rounding
  double weight = 1;            // arithmetic operations per element (docs/precision.md's
                                // table: a contraction 2k − 1, a transcendental 8, layout 0)
  std::optional<TermEnvelope> terms;  // sums, means and contractions only
  RoundingEnvelope rounding;
  std::optional<double> sensitivity;  // ‖∂L/∂v‖₁ from the reverse sweep on the first sample,
                                      // summed over calls and layers; nullopt: unknown
};

struct ParameterEnvelope {
  std::string path;             // full parameter path "blocks.attn.wq.w"
  std::string type;             // "R[2, 64, 64]" (stack axes first)
  double max_abs = 0;           // the largest |θᵢ| (finite), as stored (binary64)
  int64_t elements = 0;         // its element count (every layer of a stack)
  RoundingEnvelope rounding;    // of its values at rest
  std::optional<double> sensitivity;  // ‖θ̄‖₁ of its cotangent on the first sample; nullopt:
                                      // unknown (the sweep returned no cotangent for it)
};

struct Envelope {
  int format = 1;
  std::string program;          // the program's path as given
  std::string program_hash;     // ir::program_hash of the program as compiled for the entry
                                // (lang::compile with the bindings and --entry), without vjps
  std::string entry;
  std::map<std::string, std::string> bindings;  // --const/--dim as given: name → value text
  std::string data;             // the data file, or "" when the samples were synthesized
  int64_t seed = 0;             // --seed: of the synthesized samples (no data file) and of the
                                // synthesized parameters (no weights file); the 64 bits of the
                                // unsigned seed (written as an unsigned JSON integer)
  int64_t token_range = 0;      // synthesized Z inputs lie in [0, token_range); 0: none were
  int64_t samples = 0;          // samples run: offset, offset + 1, …, offset + samples − 1
  int64_t offset = 0;           // the first sample (of the data file, or of the seed's stream)
  int bits = 0;                 // the reference's precision
  std::string weights;          // the weights file, or "" for the program's initializers
  std::string weights_sha256;   // SHA-256 of the weights file's bytes ("" without one)
  std::string data_sha256;      // SHA-256 of the data file's bytes ("" without one)
  std::string date;             // UTC, ISO 8601 ("2026-11-30T12:00:00Z")
  // What measured the statistics other than the exact outputs: "exact" (the reference at
  // `bits`) or "f64" (`calibrate --sweep f64`: the native executor in binary64). Optional on
  // read (older envelopes are "exact").
  std::string sweep = "exact";
  double output_max_abs = 0;    // the largest finite |entry output| over the samples (every
                                // result), rounded up to binary64
  std::vector<SiteEnvelope> sites;           // in program order: function by function, let by let;
                                             // the real-valued, non-tuple lets the run reached
  std::vector<ParameterEnvelope> parameters;  // in the program's parameter order

  const SiteEnvelope* find_site(const std::string& site) const;
  const ParameterEnvelope* find_parameter(const std::string& path) const;
};

// Writes `envelope` as JSON, atomically (a temporary file renamed into place).
void write_envelope(const Envelope& envelope, const std::string& path);
// Reads and validates an envelope file: unreadable file (E0900), malformed JSON (E0901), not
// an object (E0902), a format other than 1 (E0903), a missing field (E0904), a mistyped
// field (E0905), a value out of range (E0906), a site or parameter listed twice (E0907) —
// each naming the file and the field. Numbers may be written "inf" or "nan" (JSON has none).
Envelope read_envelope(const std::string& path);
// The envelope an envelope file's bytes hold: strict JSON (support/json_reader.h: E0901 when it
// is not JSON, E0010–E0014 for what strict JSON refuses), then parse_envelope's checks.
Envelope parse_envelope_text(std::string_view text, const std::string& origin);
// The envelope as the JSON object write_envelope writes, and back (`origin` names the source
// in read_envelope's errors).
nlohmann::ordered_json envelope_json(const Envelope& envelope);
Envelope parse_envelope(const nlohmann::json& json, const std::string& origin);

}  // namespace presk::precision
