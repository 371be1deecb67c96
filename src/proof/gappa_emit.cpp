// The script of a statement (gappa_script.h): the needed scalars' definitions, the magnitudes
// and facts as hypotheses, the exp and max scalars through their operands' proven errors, and
// the goals; and the stages that prove those errors first.
#include <fmt/format.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "proof/gappa_script.h"
#include "support/diagnostics.h"

namespace presk::proof {
namespace {

std::string r(int32_t id) { return fmt::format("r{}", id); }
std::string e(int32_t id) { return fmt::format("E{}", id); }

// The scalars `goals` need through their operands (an exp or max scalar's own operands are
// none: it is stated through its bounded scalars' proven errors), or through `bounded` too.
std::vector<bool> cone(const Statement& statement, const std::vector<int32_t>& goals,
                       bool through_bounded) {
  std::vector<bool> needed(statement.scalars.size(), false);
  std::vector<int32_t> stack = goals;
  while (!stack.empty()) {
    const int32_t id = stack.back();
    stack.pop_back();
    if (needed[id]) continue;
    needed[id] = true;
    for (int32_t op : statement.scalars[id].operands) stack.push_back(op);
    if (!through_bounded) continue;
    if (auto n = statement.nonlinear.find(id); n != statement.nonlinear.end()) {
      for (int32_t b : n->second.bounded) stack.push_back(b);
    }
  }
  return needed;
}

// e^x rounded up (or down) to binary64.
double exp_rounded(double x, mpfr_rnd_t direction) {
  mpfr_t v;
  mpfr_init2(v, 53);
  mpfr_set_d(v, x, direction);
  mpfr_exp(v, v, direction);
  const double out = mpfr_get_d(v, direction);
  mpfr_clear(v);
  return out;
}

// The largest proven bound over `ids`; every one must be proven (stages() orders the runs).
double proven_bound(const Proven& proven, const std::vector<int32_t>& ids) {
  double bound = 0;
  for (int32_t id : ids) {
    const auto found = proven.find(id);
    internal_assert(found != proven.end() && "a stage's bound is missing");
    bound = std::max(bound, found->second);
  }
  return bound;
}

// The hypotheses that tie an exp or max scalar to its operands' proven errors.
void nonlinear_hypotheses(int32_t id, const Nonlinear& n, const Proven& proven,
                          const Magnitudes& magnitudes, std::vector<std::string>& hypotheses) {
  const double t = proven_bound(proven, n.bounded);
  if (n.form == Nonlinear::Form::exp) {
    hypotheses.push_back(fmt::format("K{} in [{}, {}]", id, gappa_number(exp_rounded(-t, MPFR_RNDD)),
                                     gappa_number(exp_rounded(t, MPFR_RNDU))));
    hypotheses.push_back(fmt::format("H{} in [{}, {}]", id, gappa_number(1 - n.relative),
                                     gappa_number(1 + n.relative)));
    return;
  }
  hypotheses.push_back(
      fmt::format("{} - {} in [{}, {}]", r(id), e(id), gappa_number(-t), gappa_number(t)));
  if (!n.range_site.empty()) {
    const auto found = magnitudes.find(n.range_site);
    if (found != magnitudes.end() && std::isfinite(found->second)) {
      hypotheses.push_back(fmt::format("{} in [{}, {}]", e(id), gappa_number(-found->second),
                                       gappa_number(found->second)));
    }
  }
}

// Levels: an exp or max scalar is one above the scalars it is bounded by; any other, the
// largest of its operands'.
std::vector<int> levels(const Statement& statement) {
  std::vector<int> level(statement.scalars.size(), 0);
  for (size_t i = 0; i < statement.scalars.size(); ++i) {  // operands come before their users
    int l = 0;
    for (int32_t op : statement.scalars[i].operands) l = std::max(l, level[op]);
    if (auto n = statement.nonlinear.find(static_cast<int32_t>(i)); n != statement.nonlinear.end()) {
      for (int32_t b : n->second.bounded) l = std::max(l, level[b] + 1);
    }
    level[i] = l;
  }
  return level;
}

}  // namespace

void mark_needed(Statement& statement) {
  statement.needed = cone(statement, statement.goals, true);
  statement.needed_count = std::count(statement.needed.begin(), statement.needed.end(), true);
}

std::vector<std::vector<int32_t>> stages(const Statement& statement) {
  const std::vector<int> level = levels(statement);
  int top = 0;
  for (int32_t g : statement.goals) top = std::max(top, level[g]);
  std::vector<std::set<int32_t>> goals(static_cast<size_t>(top));
  for (const auto& [id, n] : statement.nonlinear) {
    if (!statement.needed[id]) continue;
    for (int32_t b : n.bounded) goals[level[b]].insert(b);
  }
  std::vector<std::vector<int32_t>> out;
  for (const std::set<int32_t>& g : goals) {
    if (!g.empty()) out.emplace_back(g.begin(), g.end());
  }
  out.push_back(statement.goals);
  return out;
}

Script gappa_script(const Statement& statement, const Magnitudes& magnitudes,
                    const std::string& header, const std::vector<int32_t>* goals,
                    const Proven& proven) {
  const std::vector<int32_t>& wanted = goals != nullptr ? *goals : statement.goals;
  const std::vector<bool> needed = cone(statement, wanted, false);
  Script script;
  std::string& out = script.text;
  for (size_t start = 0; start < header.size();) {
    const size_t end = std::min(header.find('\n', start), header.size());
    out += "# " + header.substr(start, end - start) + "\n";
    start = end + 1;
  }
  out +=
      "@rnd64 = float<ieee_64,ne>;\n@rnd32 = float<ieee_32,ne>;\n@rndbf = float<8,-133,ne>;  # "
      "bf16: 8 bits, binary32's exponents\n";
  std::vector<std::string> hypotheses, hints;
  std::map<std::string, bool> missing;
  for (size_t i = 0; i < statement.scalars.size(); ++i) {
    if (!needed[i]) continue;
    const Scalar& s = statement.scalars[i];
    const auto id = static_cast<int32_t>(i);
    if (!s.exact.empty()) out += fmt::format("{} = {};\n", e(id), s.exact);
    if (!s.rounded.empty()) out += fmt::format("{} = {};\n", r(id), s.rounded);
    ++script.operations;
    if (auto n = statement.nonlinear.find(id); n != statement.nonlinear.end()) {
      nonlinear_hypotheses(id, n->second, proven, magnitudes, hypotheses);
      if (n->second.form == Nonlinear::Form::exp)  // the error relative to E: E·(K·H − 1)
        hints.push_back(fmt::format("{0} * K{1} * H{1} - {0} -> {0} * (K{1} * H{1} - 1);", e(id), id));
    }
    if (auto q = statement.quotients.find(id); q != statement.quotients.end()) {
      // a/b − A/B = ((a − A) − (A/B)·(b − B)) / b: the quotient's error from its operands'
      const auto [a, b] = q->second;
      hints.push_back(fmt::format("{0} / {1} - {2} / {3} -> (({0} - {2}) - {2} / {3} * ({1} - {3})) / {1} "
                                  "{{ {1} <> 0, {3} <> 0 }};",
                                  r(a), r(b), e(a), e(b)));
    }
    if (auto f = statement.facts.find(id); f != statement.facts.end())
      hypotheses.insert(hypotheses.end(), f->second.begin(), f->second.end());
    if (s.site.empty()) continue;
    auto found = magnitudes.find(s.site);
    if (found == magnitudes.end() || !std::isfinite(found->second)) {
      missing[s.site] = true;
      continue;
    }
    const double m = found->second;
    hypotheses.push_back(
        s.exact.empty() ? fmt::format("{} in [{}, {}]", e(id), gappa_number(-m), gappa_number(m))
                        : fmt::format("|{}| <= {}", e(id), gappa_number(m)));
    if (s.rsqrt && m > 0) {  // |1/√z| ≤ M says z ≥ 1/M² (rounded down)
      const double floor = std::nextafter(std::nextafter(1 / (m * m), 0.0), 0.0);
      if (floor > 0)
        hypotheses.push_back(fmt::format("{} >= {}", e(s.operands[0]), gappa_number(floor)));
    }
  }
  for (const auto& [site, unused] : missing) script.missing.push_back(site);
  script.hypotheses = static_cast<int64_t>(hypotheses.size());
  out += "\n{ ";
  for (size_t k = 0; k < hypotheses.size(); ++k) out += (k ? "\n  /\\ " : "") + hypotheses[k];
  out += hypotheses.empty() ? "" : "\n  ";
  out += "->";
  for (size_t k = 0; k < wanted.size(); ++k) {
    const int32_t g = wanted[k];
    out += fmt::format("{}\n  |{} - {}| in ?", k ? " /\\" : "", r(g), e(g));
  }
  out += " }\n";
  for (const std::string& hint : hints) out += hint + "\n";
  return script;
}

std::string gappa_number(double value) {
  internal_assert(std::isfinite(value));
  if (value == 0) return "0";
  int exponent = 0;
  double mantissa =
      std::frexp(value, &exponent);  // value = mantissa · 2^exponent, |mantissa| in [½, 1)
  auto m = static_cast<int64_t>(std::ldexp(mantissa, 53));
  exponent -= 53;
  while (m % 2 == 0) m /= 2, ++exponent;
  return exponent == 0 ? fmt::format("{}", m) : fmt::format("{}b{}", m, exponent);
}

}  // namespace presk::proof
