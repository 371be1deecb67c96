// The chip's values and their ladders (chip_offer.h).
#include "solve/chip_offer.h"

#include <algorithm>
#include <cmath>

#include "numerics/attention_forms.h"

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
  for (Words w : kWords)
    menu.rungs.push_back({numerics::words_name(w), RealType::f32, 1.0 * numerics::word_count(w)});
  menu.rungs.push_back({"as_computed", RealType::f32, 4});
  for (const numerics::Keep& k : kKeeps)
    menu.rungs.push_back({numerics::keep_name(k), RealType::f32, 0});
  for (const char* name : kFormRungs) menu.rungs.push_back({name, RealType::f32, 0});
  return menu;
}

int rung_of(Words words) {
  return 1 + static_cast<int>(std::find(kWords.begin(), kWords.end(), words) - kWords.begin());
}
int rung_of(const numerics::Keep& keep) {
  return kFirstKeepRung + 1 +
         static_cast<int>(std::find(kKeeps.begin(), kKeeps.end(), keep) - kKeeps.begin());
}
bool is_cache(const Offer& offer, int value) {
  return offer.values[value].ladder[0].rung == kFirstKeepRung;
}
bool is_attention(const Offer& offer, int value) {
  return offer.values[value].ladder[0].rung == kFirstAttentionRung;
}

// The words of a ladder from the widest to the contract's own: three ⊃ two_rest ⊃ one; two_code16
// alone.
std::vector<Words> words_ladder(Words own) {
  switch (own) {
    case Words::one:
      return {Words::three, Words::two_rest, Words::one};
    case Words::two_rest:
      return {Words::three, Words::two_rest};
    case Words::two_code16:
      return {Words::two_code16};
    case Words::three:
      return {Words::three};
  }
  return {own};
}

// The keeps of a cache's ladder after as computed, to the contract's own: an int8 keep after a
// 16-bit float (f16 where the rows' largest magnitude is under half f16's largest, else bf16).
std::vector<numerics::Keep> keeps_ladder(const numerics::Keep& own, double max_abs) {
  using K = numerics::Keep::Kind;
  if (own.kind == K::as_computed ||
      (own.kind == K::float_format && own.format == numerics::FloatFormat::f32))
    return {};
  if (own.kind == K::float_format) return {own};
  const numerics::FloatFormat half =
      max_abs < 32752 ? numerics::FloatFormat::f16 : numerics::FloatFormat::bf16;
  return {{K::float_format, half}, own};
}

// The largest relative move of a rung's value: half its last word's step over its largest code;
// a float's half unit in the last place.
double relative_move(int rung) {
  static const std::vector<double> moves = {
      0, 1.0 / (254.0 * 16384), 1.0 / (254.0 * 128), 1.0 / (254.0 * 256), 1.0 / 254,
      0, std::ldexp(1.0, -11),  std::ldexp(1.0, -8), 1.0 / 254,           1.0 / 254};
  return moves[static_cast<size_t>(rung)];
}

// A word of a scheme the attention's forms take at a widened rung: `one` widens to `to`, two_rest
// to three.
Words widened(Words own, Words to) {
  return own == Words::one || (own == Words::two_rest && to == Words::three) ? to : own;
}

// The forms of an attention whose own forms are `own` at its rung (none: as kept).
std::optional<numerics::AttentionNumerics> forms_at(const numerics::AttentionNumerics& own,
                                                    int rung) {
  const int k = rung - kFirstAttentionRung;
  if (k == 0) return std::nullopt;
  numerics::AttentionNumerics forms = own;
  if (k == 3) return forms;
  for (numerics::Taken* taken : {&forms.queries, &forms.keys, &forms.values, &forms.weights}) {
    if (taken->scheme)
      taken->scheme->words = widened(taken->scheme->words, k == 1 ? Words::three : Words::two_rest);
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
  return relative_move(
      rung_of(numerics::Keep{numerics::Keep::Kind::float_format, *taken.float_format}));
}

// A value and the work of each step of its ladder.
struct ChipValue {
  Value value;
  std::vector<StepWork> work;
  void push(const LadderStep& step, const StepWork& w) {
    value.ladder.push_back(step);
    work.push_back(w);
  }
};

// The multiply-accumulates of a contraction of two operands taken as `a` and `b` (none: as kept):
// int8 where both are in a scheme, a word pair each; float otherwise.
void add_macs(StepWork& work, double macs, const numerics::Taken* a, const numerics::Taken* b) {
  if (a && b && a->scheme && b->scheme) {
    work.int8_macs +=
        macs * numerics::word_count(a->scheme->words) * numerics::word_count(b->scheme->words);
  } else {
    work.float_macs += macs;
  }
}

// An attention's step at `rung`, per sample: the bytes of its four operands as its forms take
// them; the largest relative move of its output to first order — the values' and weights' own,
// and the queries' and keys' through the scores: a relative move r of q·k moves each weight by at
// most 2·max|q·k|·r (max|q·k| bounds the softmax's input where the scores are scaled by at most
// 1); and its work — the scores' and the weighted sum's multiply-accumulates, and the operands
// taken in a form other than f32.
struct AttentionShape {
  numerics::AttentionOperands operands;
  int64_t evaluations = 0;
  double score_macs = 0, sum_macs = 0;  // per evaluation
  double scores_max = 0;
};

std::pair<LadderStep, StepWork> attention_step(const numerics::AttentionNumerics& own, int rung,
                                               const AttentionShape& shape) {
  const std::optional<numerics::AttentionNumerics> forms = forms_at(own, rung);
  LadderStep step{rung, 0, 0};
  StepWork work;
  const numerics::Taken* taken[4] = {nullptr, nullptr, nullptr, nullptr};
  if (forms)
    taken[0] = &forms->queries, taken[1] = &forms->keys, taken[2] = &forms->values,
    taken[3] = &forms->weights;
  const double evaluations = static_cast<double>(shape.evaluations);
  for (int i = 0; i < 4; ++i) {
    const double elements = evaluations * static_cast<double>(shape.operands.elements[i]);
    step.bytes += (taken[i] ? taken_bytes(*taken[i], shape.operands.rows[i]) : 4.0) * elements;
    if (taken[i] && taken[i]->float_format != numerics::FloatFormat::f32)
      work.quantized += elements;
  }
  add_macs(work, evaluations * shape.score_macs, taken[0], taken[1]);
  add_macs(work, evaluations * shape.sum_macs, taken[3], taken[2]);
  if (forms) {
    step.move = taken_move(forms->values) + taken_move(forms->weights) +
                2 * shape.scores_max * (taken_move(forms->queries) + taken_move(forms->keys));
  }
  return {step, work};
}

// An attention's value: its four operands as its forms take them, the rungs that save bytes; its
// sensitivity and largest magnitude are its weighted sum's (none where the envelope has no such
// site).
std::optional<ChipValue> attention_value(const ir::Program& program,
                                         const numerics::AttentionSite& site,
                                         const numerics::AttentionNumerics& own,
                                         const precision::Envelope& envelope,
                                         int64_t output_elements) {
  const ir::Function& f = program.functions[site.function];
  const ir::Let& weighted = f.lets[site.weighted];
  const precision::SiteEnvelope* out = envelope.find_site(f.site_name(site.weighted));
  if (!out) return std::nullopt;
  const precision::SiteEnvelope* scores = envelope.find_site(site.name);
  AttentionShape shape{numerics::attention_operands(program, site), 0, 0, 0,
                       scores ? scores->max_abs : 0};
  shape.evaluations =
      out->elements_per_sample > 0 ? out->elements_per_sample / weighted.type.element_count() : 0;
  shape.score_macs =
      static_cast<double>(f.lets[site.scores].type.element_count() * shape.operands.rows[0]);
  shape.sum_macs = static_cast<double>(weighted.type.element_count() * shape.operands.rows[3]);
  ChipValue c;
  Value& v = c.value;
  v.key = site.name;
  v.op = "attention";
  v.type = ir::type_to_string(weighted.type);
  for (int64_t n : shape.operands.elements) v.elements += shape.evaluations * n;
  v.max_abs = out->max_abs;
  if (out->sensitivity) v.sensitivity = *out->sensitivity / static_cast<double>(output_elements);
  std::optional<numerics::AttentionNumerics> last;
  for (int k = 0; k < static_cast<int>(kFormRungs.size()); ++k) {
    const int rung = kFirstAttentionRung + k;
    const std::optional<numerics::AttentionNumerics> forms = forms_at(own, rung);
    if (k > 0 && ((k < 3 && forms == own) || forms == last))
      continue;  // the same forms as a rung beside it
    const auto [step, work] = attention_step(own, rung, shape);
    if (k > 0 && step.bytes >= v.ladder.back().bytes) continue;  // every rung saves bytes
    c.push(step, work);
    last = forms;
  }
  if (v.ladder.size() < 2) return std::nullopt;
  return c;
}

// A product's value: its activation, read as its values (float multiply-accumulates) or in each
// rung's words (quantized, then int8 multiply-accumulates a word each by integer weights).
ChipValue product_value(const ir::Program& program, const numerics::QuantizedProduct& q,
                        const precision::Envelope& envelope,
                        const exec::native::Realization& realization, int64_t output_elements) {
  const ir::Function& f = program.functions[q.product.function];
  const ir::Let& let = f.lets[q.product.let];
  ChipValue c;
  Value& v = c.value;
  v.key = q.product.site;
  v.op = ir::op_name(let.op);
  const ir::Type& activation = f.type_of(let.operands[static_cast<size_t>(q.product.activation)]);
  v.type = ir::type_to_string(activation);
  const precision::SiteEnvelope* site = envelope.find_site(q.product.site);
  const int64_t evaluations = site && site->elements_per_sample > 0
                                  ? site->elements_per_sample / let.type.element_count()
                                  : 0;
  v.elements = evaluations * activation.element_count();
  if (site) {
    v.max_abs = site->max_abs;
    if (site->sensitivity)
      v.sensitivity = *site->sensitivity / static_cast<double>(output_elements);
  }
  const double elements = static_cast<double>(v.elements);
  const double macs = static_cast<double>(evaluations * let.type.element_count() * q.product.row);
  const bool integer_weights = realization.param_quant(q.product.matrix) != nullptr;
  const double per_block = 4.0 / static_cast<double>(q.block);  // one f32 scale per block
  c.push({0, 4.0 * elements, 0}, {0, macs, 0});
  for (Words w : words_ladder(q.scheme.words)) {
    const double words = numerics::word_count(w);
    c.push({rung_of(w), (words + per_block) * elements, 0},
           integer_weights ? StepWork{macs * words, 0, elements} : StepWork{0, macs, elements});
  }
  return c;
}

// A cache_write's value: the cache it writes, every row as the rung keeps it (each row written
// rounded or quantized, the rows read back at their bytes).
std::optional<ChipValue> cache_value(const ir::Function& f, uint32_t let,
                                     const numerics::Keep& keep,
                                     const precision::Envelope& envelope, int64_t output_elements) {
  ChipValue c;
  Value& v = c.value;
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
  const double written = static_cast<double>(
      v.elements / std::max<int64_t>(f.lets[let].type.element_count(), 1) * rows.element_count());
  c.push({kFirstKeepRung, 4.0 * static_cast<double>(v.elements), 0}, {});
  for (const numerics::Keep& k : keeps_ladder(keep, v.max_abs)) {
    const bool int8 = k.kind != numerics::Keep::Kind::float_format;
    c.push({rung_of(k), (int8 ? 1.0 + 2.0 / row : 2.0) * static_cast<double>(v.elements), 0},
           {0, 0, written});
  }
  if (v.ladder.size() < 2) return std::nullopt;
  return c;
}

}  // namespace

ChipOffer chip_offer(const ir::Program& program, const numerics::Contract& contract,
                     const std::vector<numerics::QuantizedProduct>& products,
                     const precision::Envelope& envelope,
                     const exec::native::Realization& realization, bool measured_terms) {
  ChipOffer out;
  Offer& offer = out.offer;
  offer.menu = chip_menu();
  offer.min_gain = 0;
  offer.output_elements = 1;
  if (const ir::Function* entry = program.find_function(envelope.entry)) {
    offer.output_elements = 0;
    for (const ir::ValueRef& result : entry->results)
      offer.output_elements += entry->type_of(result).element_count();
  }
  offer.output_elements = std::max<int64_t>(offer.output_elements, 1);
  std::vector<ChipValue> values;
  for (const numerics::QuantizedProduct& q : products) {
    values.push_back(product_value(program, q, envelope, realization, offer.output_elements));
  }
  for (const ir::Function& f : program.functions) {
    for (uint32_t i = 0; i < f.lets.size(); ++i) {
      if (f.lets[i].op != ir::Op::cache_write) continue;
      if (auto v =
              cache_value(f, i, contract.keep_of(f.site_name(i)), envelope, offer.output_elements))
        values.push_back(std::move(*v));
    }
  }
  for (const numerics::AttentionSite& site : numerics::attention_sites(program)) {
    const std::optional<numerics::AttentionNumerics> own = contract.attention_of(site.name);
    if (!own) continue;
    if (auto v = attention_value(program, site, *own, envelope, offer.output_elements))
      values.push_back(std::move(*v));
  }
  for (ChipValue& c : values) {
    Value& v = c.value;
    v.exclusion = v.elements == 0 || (!measured_terms && !v.sensitivity)
                      ? Exclusion::unknown_sensitivity
                      : Exclusion::offered;
    v.first_saving = v.ladder[0].bytes - v.ladder[1].bytes;
    offer.all_f64_bytes += 2 * v.ladder[0].bytes;
    offer.values.push_back(std::move(v));
    out.work.push_back(std::move(c.work));
  }
  return out;
}

numerics::Contract contract_of(const Offer& offer, const Assignment& assignment,
                               const numerics::Contract& contract) {
  numerics::Contract out = contract;
  for (size_t i = 0; i < offer.values.size(); ++i) {
    const int v = static_cast<int>(i);
    const int rung = offer.values[i].ladder[static_cast<size_t>(assignment[i])].rung;
    if (is_cache(offer, v)) {
      out.caches[offer.values[i].key] =
          rung == kFirstKeepRung ? numerics::Keep{}
                                 : kKeeps[static_cast<size_t>(rung - kFirstKeepRung - 1)];
      continue;
    }
    if (is_attention(offer, v)) {
      out.attentions[offer.values[i].key] =
          forms_at(*contract.attention_of(offer.values[i].key), rung);
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

std::optional<std::string> attention_forms_text(const Offer& offer, int value, int step,
                                                const numerics::Contract& contract) {
  if (!is_attention(offer, value)) return std::nullopt;
  const int rung = offer.values[static_cast<size_t>(value)].ladder[static_cast<size_t>(step)].rung;
  const auto forms =
      forms_at(*contract.attention_of(offer.values[static_cast<size_t>(value)].key), rung);
  return forms ? numerics::forms_text(*forms) : "on its values as the chip keeps them";
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

}  // namespace presk::solve
