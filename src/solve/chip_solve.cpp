// The chip's solve (chip_solve.h).
#include "solve/chip_solve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "numerics/attention_forms.h"
#include "numerics/contract_json.h"
#include "numerics/quantize.h"
#include "solve/greedy.h"
#include "support/json_reader.h"

namespace presk::solve {
namespace {

using numerics::Words;

// The menu's rungs: an activation read as its values, then in each scheme's words, widest first;
// a cache as computed, then each keep, widest first.
const std::vector<Words> kWords = {Words::three, Words::two_rest, Words::two_code16, Words::one};
const std::vector<numerics::Keep> kKeeps = {
    {numerics::Keep::Kind::float_format, numerics::FloatFormat::f16},
    {numerics::Keep::Kind::float_format, numerics::FloatFormat::bf16},
    {numerics::Keep::Kind::int8_rows_rotated, numerics::FloatFormat::f32},
    {numerics::Keep::Kind::int8_rows, numerics::FloatFormat::f32}};
const int kFirstKeepRung = 1 + static_cast<int>(kWords.size());  // "as_computed"
// An attention's rungs: on its values as kept, then its forms with each scheme's words widened
// to three, to two_rest, then the contract's own forms.
const std::vector<const char*> kFormRungs = {"as_kept", "forms_three", "forms_two_rest", "forms"};
const int kFirstAttentionRung = kFirstKeepRung + 1 + static_cast<int>(kKeeps.size());  // "as_kept"

Menu chip_menu() {
  Menu menu;
  menu.rungs.push_back({"values", RealType::f32, 4});
  for (Words w : kWords) menu.rungs.push_back({numerics::words_name(w), RealType::f32, 1.0 * numerics::word_count(w)});
  menu.rungs.push_back({"as_computed", RealType::f32, 4});
  for (const numerics::Keep& k : kKeeps) menu.rungs.push_back({numerics::keep_name(k), RealType::f32, 0});
  for (const char* name : kFormRungs) menu.rungs.push_back({name, RealType::f32, 0});
  return menu;
}

int rung_of(Words words) { return 1 + static_cast<int>(std::find(kWords.begin(), kWords.end(), words) - kWords.begin()); }
int rung_of(const numerics::Keep& keep) {
  return kFirstKeepRung + 1 + static_cast<int>(std::find(kKeeps.begin(), kKeeps.end(), keep) - kKeeps.begin());
}
bool is_cache(const Offer& offer, int value) { return offer.values[value].ladder[0].rung == kFirstKeepRung; }
bool is_attention(const Offer& offer, int value) { return offer.values[value].ladder[0].rung == kFirstAttentionRung; }

// The words of a ladder from the widest to the contract's own: three ⊃ two_rest ⊃ one; two_code16 alone.
std::vector<Words> words_ladder(Words own) {
  switch (own) {
    case Words::one: return {Words::three, Words::two_rest, Words::one};
    case Words::two_rest: return {Words::three, Words::two_rest};
    case Words::two_code16: return {Words::two_code16};
    case Words::three: return {Words::three};
  }
  return {own};
}

// The keeps of a cache's ladder after as computed, to the contract's own: an int8 keep after a
// 16-bit float (f16 where the rows' largest magnitude is under half f16's largest, else bf16).
std::vector<numerics::Keep> keeps_ladder(const numerics::Keep& own, double max_abs) {
  using K = numerics::Keep::Kind;
  if (own.kind == K::as_computed || (own.kind == K::float_format && own.format == numerics::FloatFormat::f32)) return {};
  if (own.kind == K::float_format) return {own};
  const numerics::FloatFormat half = max_abs < 32752 ? numerics::FloatFormat::f16 : numerics::FloatFormat::bf16;
  return {{K::float_format, half}, own};
}

// The largest relative move of a rung's value: half its last word's step over its largest code;
// a float's half unit in the last place.
double relative_move(int rung) {
  static const std::vector<double> moves = {0, 1.0 / (254.0 * 16384), 1.0 / (254.0 * 128), 1.0 / (254.0 * 256), 1.0 / 254,
                                            0, std::ldexp(1.0, -11), std::ldexp(1.0, -8), 1.0 / 254, 1.0 / 254};
  return moves[static_cast<size_t>(rung)];
}

// A word of a scheme the attention's forms take at a widened rung: `one` widens to `to`, two_rest to three.
Words widened(Words own, Words to) {
  return own == Words::one || (own == Words::two_rest && to == Words::three) ? to : own;
}

// The forms of an attention whose own forms are `own` at its rung (none: as kept).
std::optional<numerics::AttentionNumerics> forms_at(const numerics::AttentionNumerics& own, int rung) {
  const int k = rung - kFirstAttentionRung;
  if (k == 0) return std::nullopt;
  numerics::AttentionNumerics forms = own;
  if (k == 3) return forms;
  for (numerics::Taken* taken : {&forms.queries, &forms.keys, &forms.values, &forms.weights}) {
    if (taken->scheme) taken->scheme->words = widened(taken->scheme->words, k == 1 ? Words::three : Words::two_rest);
  }
  return forms;
}

// The bytes of a value taken in `taken`, on rows of `row` values: a float's, or its words and
// one f32 scale per block.
double taken_bytes(const numerics::Taken& taken, int64_t row) {
  if (taken.float_format) return *taken.float_format == numerics::FloatFormat::f32 ? 4 : 2;
  const int64_t block = std::max<int64_t>(numerics::block_length(taken.scheme->block, row, 0), 1);
  return numerics::word_count(taken.scheme->words) + 4.0 / static_cast<double>(block);
}

// The largest relative move of a value taken in `taken` (as the products' and caches' rungs').
double taken_move(const numerics::Taken& taken) {
  if (taken.scheme) return relative_move(rung_of(taken.scheme->words));
  if (*taken.float_format == numerics::FloatFormat::f32) return 0;
  return relative_move(rung_of(numerics::Keep{numerics::Keep::Kind::float_format, *taken.float_format}));
}

// An attention's step at `rung`: the bytes its four operands take per sample, and the largest
// relative move of its output to first order — the values' and weights' own, and the queries'
// and keys' through the scores: a relative move r of q·k moves each weight by at most 2·max|q·k|·r
// (max|q·k| bounds the softmax's input where the scores are scaled by at most 1).
LadderStep attention_step(const numerics::AttentionNumerics& own, int rung, const numerics::AttentionOperands& operands,
                          int64_t evaluations, double scores_max) {
  const std::optional<numerics::AttentionNumerics> forms = forms_at(own, rung);
  LadderStep step{rung, 0, 0};
  const numerics::Taken* taken[4] = {nullptr, nullptr, nullptr, nullptr};
  if (forms) taken[0] = &forms->queries, taken[1] = &forms->keys, taken[2] = &forms->values, taken[3] = &forms->weights;
  for (int i = 0; i < 4; ++i) {
    const double per = taken[i] ? taken_bytes(*taken[i], operands.rows[i]) : 4.0;
    step.bytes += per * static_cast<double>(evaluations * operands.elements[i]);
  }
  if (forms) {
    step.move = taken_move(forms->values) + taken_move(forms->weights) +
                2 * scores_max * (taken_move(forms->queries) + taken_move(forms->keys));
  }
  return step;
}

// An attention's value: its four operands as its forms take them, the rungs that save bytes; its
// sensitivity and largest magnitude are its weighted sum's (none where the envelope has no such site).
std::optional<Value> attention_value(const ir::Program& program, const numerics::AttentionSite& site,
                                     const numerics::AttentionNumerics& own, const precision::Envelope& envelope,
                                     int64_t output_elements) {
  const ir::Function& f = program.functions[site.function];
  const ir::Let& weighted = f.lets[site.weighted];
  const precision::SiteEnvelope* out = envelope.find_site(f.site_name(site.weighted));
  if (!out) return std::nullopt;
  const precision::SiteEnvelope* scores = envelope.find_site(site.name);
  Value v;
  v.key = site.name;
  v.op = "attention";
  v.type = ir::type_to_string(weighted.type);
  const int64_t evaluations = out->elements_per_sample > 0 ? out->elements_per_sample / weighted.type.element_count() : 0;
  const numerics::AttentionOperands operands = numerics::attention_operands(program, site);
  for (int64_t n : operands.elements) v.elements += evaluations * n;
  v.max_abs = out->max_abs;
  if (out->sensitivity) v.sensitivity = *out->sensitivity / static_cast<double>(output_elements);
  std::optional<numerics::AttentionNumerics> last;
  for (int k = 0; k < static_cast<int>(kFormRungs.size()); ++k) {
    const int rung = kFirstAttentionRung + k;
    const std::optional<numerics::AttentionNumerics> forms = forms_at(own, rung);
    if (k > 0 && ((k < 3 && forms == own) || forms == last)) continue;  // the same forms as a rung beside it
    const LadderStep step = attention_step(own, rung, operands, evaluations, scores ? scores->max_abs : 0);
    if (k > 0 && step.bytes >= v.ladder.back().bytes) continue;  // every rung saves bytes
    v.ladder.push_back(step);
    last = forms;
  }
  if (v.ladder.size() < 2) return std::nullopt;
  return v;
}

// The estimate Σ terms of the chip's values.
class ChipTally : public Tally {
 public:
  ChipTally(const ChipTerms& terms, const Assignment& assignment) : terms_(terms), now_(terms.size(), 0) {
    for (size_t v = 0; v < now_.size(); ++v) now_[v] = terms_[v][static_cast<size_t>(assignment[v])];
  }
  double total() const override {
    double sum = 0;
    for (double t : now_) sum += t;
    return sum;
  }
  double with(Assignment&, int value, int to) const override {
    return total() - now_[value] + terms_[value][static_cast<size_t>(to)];
  }
  void apply(const Assignment& assignment, int value) override {
    now_[value] = terms_[value][static_cast<size_t>(assignment[value])];
  }

 private:
  const ChipTerms& terms_;
  std::vector<double> now_;
};

Value product_value(const ir::Program& program, const numerics::QuantizedProduct& q, const precision::Envelope& envelope,
                    int64_t output_elements) {
  const ir::Function& f = program.functions[q.product.function];
  const ir::Let& let = f.lets[q.product.let];
  Value v;
  v.key = q.product.site;
  v.op = ir::op_name(let.op);
  const ir::Type& activation = f.type_of(let.operands[static_cast<size_t>(q.product.activation)]);
  v.type = ir::type_to_string(activation);
  const precision::SiteEnvelope* site = envelope.find_site(q.product.site);
  const int64_t evaluations = site && site->elements_per_sample > 0 ? site->elements_per_sample / let.type.element_count() : 0;
  v.elements = evaluations * activation.element_count();
  if (site) {
    v.max_abs = site->max_abs;
    if (site->sensitivity) v.sensitivity = *site->sensitivity / static_cast<double>(output_elements);
  }
  const double per_block = 4.0 / static_cast<double>(q.block);  // one f32 scale per block
  v.ladder.push_back({0, 4.0 * static_cast<double>(v.elements), 0});
  for (Words w : words_ladder(q.scheme.words)) {
    v.ladder.push_back({rung_of(w), (numerics::word_count(w) + per_block) * static_cast<double>(v.elements), 0});
  }
  return v;
}

// A cache_write's value: the cache it writes, every row as the rung keeps it.
std::optional<Value> cache_value(const ir::Function& f, uint32_t let, const numerics::Keep& keep,
                                 const precision::Envelope& envelope, int64_t output_elements) {
  Value v;
  v.key = f.site_name(let);
  v.op = ir::op_name(f.lets[let].op);
  v.type = ir::type_to_string(f.lets[let].type);
  const precision::SiteEnvelope* site = envelope.find_site(v.key);
  if (!site) return std::nullopt;
  v.elements = site->elements_per_sample;
  v.max_abs = site->max_abs;
  if (site->sensitivity) v.sensitivity = *site->sensitivity / static_cast<double>(output_elements);
  const ir::Type& rows = f.type_of(f.lets[let].operands[1]);
  const double row = rows.shape.empty() ? 1.0 : static_cast<double>(rows.shape.back());
  v.ladder.push_back({kFirstKeepRung, 4.0 * static_cast<double>(v.elements), 0});
  for (const numerics::Keep& k : keeps_ladder(keep, v.max_abs)) {
    const bool int8 = k.kind != numerics::Keep::Kind::float_format;
    v.ladder.push_back({rung_of(k), (int8 ? 1.0 + 2.0 / row : 2.0) * static_cast<double>(v.elements), 0});
  }
  if (v.ladder.size() < 2) return std::nullopt;
  return v;
}

}  // namespace

Offer chip_offer(const ir::Program& program, const numerics::Contract& contract,
                 const std::vector<numerics::QuantizedProduct>& products, const precision::Envelope& envelope,
                 bool measured_terms) {
  Offer offer;
  offer.menu = chip_menu();
  offer.min_gain = 0;
  offer.output_elements = 1;
  if (const ir::Function* entry = program.find_function(envelope.entry)) {
    offer.output_elements = 0;
    for (const ir::ValueRef& result : entry->results) offer.output_elements += entry->type_of(result).element_count();
  }
  offer.output_elements = std::max<int64_t>(offer.output_elements, 1);
  std::vector<Value> values;
  for (const numerics::QuantizedProduct& q : products) values.push_back(product_value(program, q, envelope, offer.output_elements));
  for (const ir::Function& f : program.functions) {
    for (uint32_t i = 0; i < f.lets.size(); ++i) {
      if (f.lets[i].op != ir::Op::cache_write) continue;
      if (std::optional<Value> v = cache_value(f, i, contract.keep_of(f.site_name(i)), envelope, offer.output_elements)) {
        values.push_back(std::move(*v));
      }
    }
  }
  for (const numerics::AttentionSite& site : numerics::attention_sites(program)) {
    const std::optional<numerics::AttentionNumerics> own = contract.attention_of(site.name);
    if (!own) continue;
    if (std::optional<Value> v = attention_value(program, site, *own, envelope, offer.output_elements)) values.push_back(std::move(*v));
  }
  for (Value& v : values) {
    v.exclusion = v.elements == 0 || (!measured_terms && !v.sensitivity) ? Exclusion::unknown_sensitivity : Exclusion::offered;
    v.first_saving = v.ladder[0].bytes - v.ladder[1].bytes;
    offer.all_f64_bytes += 2 * v.ladder[0].bytes;
    offer.values.push_back(std::move(v));
  }
  return offer;
}

numerics::Contract contract_of(const Offer& offer, const Assignment& assignment, const numerics::Contract& contract) {
  numerics::Contract out = contract;
  for (size_t i = 0; i < offer.values.size(); ++i) {
    const int v = static_cast<int>(i);
    const int rung = offer.values[i].ladder[static_cast<size_t>(assignment[i])].rung;
    if (is_cache(offer, v)) {
      out.caches[offer.values[i].key] = rung == kFirstKeepRung ? numerics::Keep{} : kKeeps[static_cast<size_t>(rung - kFirstKeepRung - 1)];
      continue;
    }
    if (is_attention(offer, v)) {
      out.attentions[offer.values[i].key] = forms_at(*contract.attention_of(offer.values[i].key), rung);
      continue;
    }
    std::optional<numerics::Scheme> scheme = contract.scheme_of(offer.values[i].key);
    if (rung == 0) {
      scheme.reset();
    } else if (scheme) {
      scheme->words = kWords[static_cast<size_t>(rung - 1)];
    }
    out.products[offer.values[i].key] = scheme;
  }
  return out;
}

EntryRuns::EntryRuns(const ir::Function& entry, const exec::native::Realization& realization,
                     const reference::ParameterStore& parameters, Measurer& exact, SampleSet in_sample, SampleSet held_out,
                     int threads)
    : entry_(entry), realization_(realization), parameters_(parameters), exact_(exact), in_sample_(std::move(in_sample)),
      held_out_(std::move(held_out)), threads_(threads) {}

precision::MeasuredGap EntryRuns::measure(const ir::Program& chip, bool held_out) {
  const SampleSet& set = held_out ? held_out_ : in_sample_;
  return precision::measure_gap(chip, *chip.find_function(entry_.name), realization_, parameters_, set.count, set.inputs,
                                held_out ? exact_.exact_held_out() : exact_.exact_in_sample(), threads_);
}

ChipMeasurer::ChipMeasurer(const ir::Program& program, const numerics::Contract& contract,
                           const exec::native::Realization& realization, ChipRuns& runs)
    : program_(program), contract_(contract), realization_(realization), runs_(runs) {}

precision::MeasuredGap ChipMeasurer::measure(const Offer& offer, const Assignment& assignment, bool held_out) {
  const auto key = std::make_pair(held_out, assignment);
  if (const auto found = cache_.find(key); found != cache_.end()) return found->second;
  const numerics::Contract contract = contract_of(offer, assignment, contract_);
  const std::vector<numerics::QuantizedProduct> products = numerics::bind_contract(contract, program_, &realization_);
  const ir::Program chip =
      numerics::chip_program(program_, contract, numerics::quantize(program_, contract, products), products);
  const precision::MeasuredGap gap = runs_.measure(chip, held_out);
  cache_.emplace(key, gap);
  return gap;
}

precision::MeasuredGap ChipMeasurer::in_sample(const Offer& offer, const Assignment& assignment) {
  return measure(offer, assignment, false);
}

std::optional<precision::MeasuredGap> ChipMeasurer::held_out(const Offer& offer, const Assignment& assignment) {
  if (!runs_.has_held_out()) return std::nullopt;
  return measure(offer, assignment, true);
}

ChipTerms first_order_terms(const Offer& offer) {
  ChipTerms terms(offer.values.size());
  for (size_t v = 0; v < terms.size(); ++v) {
    const Value& value = offer.values[v];
    const bool attention = is_attention(offer, static_cast<int>(v));
    for (const LadderStep& step : value.ladder) {
      const double move = attention ? step.move : relative_move(step.rung);
      terms[v].push_back(value.sensitivity ? *value.sensitivity * value.max_abs * move : 0);
    }
  }
  return terms;
}

ChipTerms measured_terms(const Offer& offer, Measurements& measurer, const Progress& progress) {
  ChipTerms terms(offer.values.size());
  const Assignment widest(offer.values.size(), 0);
  for (size_t v = 0; v < terms.size(); ++v) {
    terms[v].assign(offer.values[v].ladder.size(), 0);
    if (!offer.values[v].offered()) continue;
    for (size_t s = 1; s < terms[v].size(); ++s) {
      Assignment alone = widest;
      alone[v] = static_cast<int>(s);
      terms[v][s] = measurer.in_sample(offer, alone).absolute;
      if (progress) {
        progress(fmt::format("term: {} at {} alone: gap {:.3e}", offer.values[v].key, offer.rung(static_cast<int>(v), static_cast<int>(s)).name, terms[v][s]));
      }
    }
  }
  return terms;
}

Solution solve_chip(const Offer& offer, const ChipTerms& terms, const Budget& budget, ChipMeasurer& measurer,
                    const Progress& progress) {
  Solution solution;
  solution.target = budget.absolute;
  solution.assignment.assign(offer.values.size(), 0);
  ChipTally tally(terms, solution.assignment);
  propose_steps(offer, tally, BytesObjective(offer), solution.target, offered_steps(offer), solution);
  solution.proposed = solution.assignment;
  if (progress) {
    progress(fmt::format("proposal: estimate {:.3e} against {:.3e}", tally.total(), solution.target));
  }
  const Widening by_terms{[&](const Assignment& a) {  // the offered product of the largest term not at its values
                            int best = -1;
                            double best_term = -1;
                            for (size_t v = 0; v < a.size(); ++v) {
                              const double t = terms[v][static_cast<size_t>(a[v])];
                              if (a[v] > 0 && t > best_term) best = static_cast<int>(v), best_term = t;
                            }
                            return best;
                          },
                          [](int, int from) { return from - 1; },
                          [&](const Assignment& a, int v) { return terms[static_cast<size_t>(v)][static_cast<size_t>(a[v])]; },
                          ""};
  measure_and_widen(offer, by_terms, budget, measurer, solution, progress);
  if (const std::optional<precision::MeasuredGap> out = measurer.held_out(offer, solution.assignment)) {
    solution.held_out = measure_recorded(offer, solution.assignment, measurer, true, budget.absolute, solution);
    if (progress) progress(fmt::format("held out: gap {:.3e}", solution.held_out->absolute));
  }
  ChipTally final_tally(terms, solution.assignment);
  solution.estimate = final_tally.total();
  return solution;
}

nlohmann::ordered_json chip_contract_file(const Offer& offer, const ChipTerms& terms, const Solution& solution,
                                          const Budget& budget, const numerics::Contract& contract,
                                          const RecordContext& context) {
  using Json = nlohmann::ordered_json;
  auto number = [](double x) { return json_number<Json>(x); };
  Json file = numerics::contract_to_json(contract_of(offer, solution.assignment, contract));
  Json values = Json::array();
  for (size_t i = 0; i < offer.values.size(); ++i) {
    const Value& v = offer.values[i];
    const int index = static_cast<int>(i);
    values.push_back({{"kind", "site"}, {"key", v.key}, {"op", v.op}, {"type", v.type}, {"elements", v.elements},
                      {"sensitivity", v.sensitivity ? number(*v.sensitivity) : Json(nullptr)},
                      {"offered", exclusion_name(v.exclusion)}, {"first_saving", number(v.first_saving)},
                      {"proposed", offer.rung(index, solution.proposed[i]).name},
                      {"final", offer.rung(index, solution.assignment[i]).name},
                      {"bytes", number(offer.bytes(index, solution.assignment[i]))},
                      {"term", number(terms[i][static_cast<size_t>(solution.assignment[i])])}});
    if (is_attention(offer, index)) {  // what its final rung takes its operands as (explain prints it)
      const auto forms = forms_at(*contract.attention_of(v.key), offer.values[i].ladder[static_cast<size_t>(solution.assignment[i])].rung);
      values.back()["forms"] = forms ? numerics::forms_text(*forms) : "on its values as the chip keeps them";
    }
  }
  auto gap = [&](const precision::MeasuredGap& g) {
    return Json{{"absolute", number(g.absolute)}, {"relative", number(g.relative())}, {"magnitude", number(g.magnitude)},
                {"inside", g.absolute <= budget.absolute}};
  };
  file["solve"] = {{"format", 1},
                   {"program", context.program},
                   {"program_hash", context.program_hash},
                   {"entry", context.entry},
                   {"envelope", {{"path", context.envelope}, {"sha256", context.envelope_sha256}}},
                   {"budget", {{"kind", budget.relative ? "relative" : "absolute"}, {"epsilon", number(budget.epsilon)},
                               {"absolute", number(budget.absolute)}, {"source", budget.source}}},
                   {"priced_by", "bytes"},
                   {"min_gain_bytes", 0},
                   {"target", number(solution.target)},
                   {"estimate", number(solution.estimate)},
                   {"inside", solution.inside},
                   {"rounds", solution.rounds},
                   {"measurements", solution.measurements},
                   {"gap", {{"in_sample", gap(solution.gap)},
                            {"held_out", solution.held_out ? gap(*solution.held_out) : Json(nullptr)}}},
                   {"values", values},
                   {"moves", moves_json(offer, solution)}};
  return file;
}

}  // namespace presk::solve
