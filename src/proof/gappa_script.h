// The Gappa export of an entry's computation (DESIGN.md wave 3, "proof"): one row of the
// entry's result (or of one site's value) stated scalar by scalar, each operation as the native
// kernels perform it under a realization (docs/semantics.md: the rounding of every site's type,
// the sums' declared order, contractions as fma chains, rsqrt as a rounded √ then a rounded
// division, a bf16 site computing in f32 and rounding once on store), beside the same
// expression without roundings — the exact value — and the magnitudes at every site as
// hypotheses on the exact values. Gappa (Debian's `gappa`) then proves a bound on the distance
// between the two, a theorem of those hypotheses. docs/proof.md is the user's guide.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "exec/native/realization.h"
#include "exec/reference/parameters.h"
#include "ir/ir.h"

namespace presk::proof {

// One scalar of the statement: a rounded value `r<id>` and its exact counterpart `E<id>`.
struct Scalar {
  std::string rounded;  // the right-hand side of r<id>, over operands' names
  std::string exact;    // the right-hand side of E<id>; empty: E<id> is a free variable
  std::vector<int32_t> operands;
  std::string site;        // the site (or `argument NAME`) whose element this is; "" otherwise
  int64_t occurrence = 0;  // which evaluation of the site (calls in program order)
  int64_t element = -1;    // the element's flat index in the site's value
  bool rsqrt = false;      // the site is an rsqrt: its magnitude is a floor on operand 0
};

// A scalar Gappa has no operator for, stated through proven facts about its operands (docs/proof.md,
// "exp and max: proofs in stages"). Its r<id> and E<id> are free in the script, tied by:
// * exp: r = ∘(E · K · H), K = exp(r_a − E_a) ∈ [e^−t, e^t] where t is the proven bound on its
//   argument a's |r_a − E_a|, and H ∈ [1 − η, 1 + η] the kernel's relative error (its ulps, as
//   docs/semantics.md asserts them); E ≥ 0.
// * max (exact in every type): |r − E| ≤ s, the proven bound over its members' |r − E|.
// Those bounds come from earlier Gappa runs on the same statement (stages()).
struct Nonlinear {
  enum class Form { exp, max } form = Form::exp;
  std::vector<int32_t> bounded;  // the scalars whose proven |r − E| it needs
  double relative = 0;           // exp: η
  std::string range_site;        // max of no site: its exact lies within this site's magnitude
};

// The whole computation of an entry, scalar by scalar, and the goal: the scalars of the first
// row (the elements whose indices but the last are 0) of the entry's results, or of the first
// evaluation of `site`.
struct Statement {
  std::vector<Scalar> scalars;
  std::vector<int32_t> goals;
  std::vector<bool> needed;  // per scalar: the goals depend on it (through earlier stages too)
  int64_t needed_count = 0;
  std::map<int32_t, Nonlinear> nonlinear;
  std::map<int32_t, std::vector<std::string>> facts;  // true facts on E<id>, stated where needed
  std::map<int32_t, std::pair<int32_t, int32_t>> quotients;  // y = a / b: {a, b}, for Gappa's hint
};

// The goals of each Gappa run the statement needs, in order: first the arguments of its exp
// and max scalars, level by level (each run's goals need only earlier runs' bounds), last its
// own goals. One run when it has no exp or max.
std::vector<std::vector<int32_t>> stages(const Statement& statement);

// The proven bounds on |r − E| of earlier stages' goals.
using Proven = std::map<int32_t, double>;

// Sets statement.needed: the scalars the goals need, through every stage (state() calls it).
void mark_needed(Statement& statement);

// Builds the statement of `entry` run under `realization` with `parameters`' values (binary64,
// each rounded at rest into its type). `site` empty: the entry's results. Refuses what has no
// Gappa form (E1600: an op, a quantized parameter, a fold, a non-finite literal) and a site the
// entry never evaluates (E1601).
Statement state(const ir::Program& program, const ir::Function& entry,
                const exec::native::Realization& realization,
                const reference::ParameterStore& parameters, const std::string& site);

// The magnitude hypotheses, by site name (and `argument NAME`): a ceiling on |exact value|.
using Magnitudes = std::map<std::string, double>;

struct Script {
  std::string text;
  int64_t operations = 0;  // rounded scalars stated
  int64_t hypotheses = 0;
  std::vector<std::string> missing;  // sites of the statement with no magnitude (none stated)
};

// The Gappa script of the scalars `goals` need (the statement's goals by default) with
// `magnitudes` as hypotheses and `proven` for its exp and max scalars. `header` is written
// first, as comments.
Script gappa_script(const Statement& statement, const Magnitudes& magnitudes,
                    const std::string& header, const std::vector<int32_t>* goals = nullptr,
                    const Proven& proven = {});

// A binary64 number as Gappa reads it exactly: "0", "-3", "5b-3" (5·2⁻³).
std::string gappa_number(double value);

}  // namespace presk::proof
