// Generation (generate.h): the decode entry run step by step, the vocabulary, the sampler.
#include "generate/generate.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "exec/reference/interpreter.h"
#include "generate/twins.h"
#include "support/diagnostics.h"
#include "support/json_reader.h"
#include "support/random.h"
#include "support/safetensors.h"

namespace presk::generate {

std::vector<int64_t> Vocabulary::encode(std::string_view text) const {
  std::vector<int64_t> tokens;
  for (size_t i = 0; i < text.size(); ++i) {
    const int32_t token = token_of[static_cast<uint8_t>(text[i])];
    if (token < 0) {
      user_error("E1510").hint("the prompt may use only the characters the model was trained on")
          << "the prompt's byte " << i << " (" << text_excerpt(text.substr(i, 1)) << ") is not in the model's vocabulary of "
          << characters.size() << " characters";
    }
    tokens.push_back(token);
  }
  return tokens;
}

std::string Vocabulary::decode(int64_t token) const {
  return std::string(1, static_cast<char>(characters.at(static_cast<size_t>(token))));
}

Vocabulary read_vocabulary(const std::string& weights_path, int64_t size) {
  const SafetensorsFile file = SafetensorsFile::open(weights_path);
  auto it = file.metadata().find("vocabulary");
  if (it == file.metadata().end()) {
    user_error("E1511").hint("generate from weights that `presk train --weights-out` wrote from `presk data prepare`'s files")
        << weights_path << " records no vocabulary, so its tokens have no characters";
  }
  const nlohmann::json text = parse_user_json(it->second, {weights_path + " (vocabulary)", "E1512", ""});
  Vocabulary vocabulary;
  vocabulary.token_of.fill(-1);
  bool valid = text.is_string();
  if (valid) {
    const std::string utf8 = text.get<std::string>();
    for (size_t i = 0; i < utf8.size() && valid; ++i) {  // code points 0–255, as UTF-8
      const auto byte = static_cast<uint8_t>(utf8[i]);
      uint32_t code = byte;
      if (byte >= 0x80) {
        valid = (byte == 0xC2 || byte == 0xC3) && i + 1 < utf8.size();
        if (valid) code = ((byte & 0x1Fu) << 6) | (static_cast<uint8_t>(utf8[++i]) & 0x3Fu);
      }
      valid = valid && vocabulary.token_of[code] < 0;
      if (valid) {
        vocabulary.token_of[code] = static_cast<int32_t>(vocabulary.characters.size());
        vocabulary.characters.push_back(static_cast<uint8_t>(code));
      }
    }
  }
  if (!valid || static_cast<int64_t>(vocabulary.characters.size()) != size) {
    user_error("E1512").hint("use the weights this program was trained to, with its const V")
        << weights_path << "'s vocabulary " << json_excerpt(text) << " is not " << size
        << " distinct characters (the program's V)";
  }
  return vocabulary;
}

DecodeEntry find_decode_entry(const ir::Program& program) {
  const ir::Function* f = program.find_function("decode");
  auto refuse = [](const std::string& why) {
    user_error("E1513").hint("declare `entry decode(p : M, state…, at : Z, token : Z[1]) -> (R[1, V], state…)` "
                             "(examples/gpt.psk)")
        << why;
  };
  if (!f || !f->is_entry) refuse("the program has no entry `decode` to generate with");
  const size_t n = f->argument_types.size();
  if (n < 2 || f->results.size() != n - 1) refuse("`decode` must take its states, `at` and `token`, and return the logits and the states");
  const ir::Type &at = f->argument_types[n - 2], &token = f->argument_types[n - 1];
  const ir::Type logits = f->type_of(f->results[0]);
  const bool positions = at.kind == ir::ElemKind::Int && at.shape.empty() && token.kind == ir::ElemKind::Int &&
                         token.shape == std::vector<int64_t>{1};
  if (!positions || logits.kind != ir::ElemKind::Real || logits.rank() != 2 || logits.shape[0] != 1) {
    refuse("`decode` must take `at : Z` and `token : Z[1]` last and return `R[1, V]` logits first");
  }
  DecodeEntry entry{f, n - 2, 0, logits.shape[1]};
  for (size_t i = 0; i < entry.states; ++i) {
    const ir::Type& state = f->argument_types[i];
    if (state.kind != ir::ElemKind::Real || !(f->type_of(f->results[i + 1]) == state) || state.rank() < 2) {
      refuse("`decode`'s result " + std::to_string(i + 1) + " must be its state argument `" + f->argument_names[i] +
             "` again");
    }
    // A cache [L, H, T, …]: the context is the extent of the axis the dim T names, else the third.
    const auto named = std::find(state.axes.begin(), state.axes.end(), "T");
    const int64_t extent = named != state.axes.end() ? state.shape[static_cast<size_t>(named - state.axes.begin())]
                                                     : state.shape[std::min<size_t>(2, state.shape.size() - 1)];
    entry.context = entry.context == 0 ? extent : std::min(entry.context, extent);
  }
  if (entry.states == 0) refuse("`decode` carries no state");
  return entry;
}

namespace {

std::vector<double> doubles_of(const Tensor& tensor) {
  std::vector<double> out(tensor.element_count());
  for (size_t i = 0; i < out.size(); ++i) out[i] = tensor.get(i);
  return out;
}

void check_position(const DecodeEntry& entry, int64_t position) {
  if (position >= entry.context) {
    user_error("E1514").hint("ask for fewer tokens, or bind a larger context (--dim T=…) with weights of that size")
        << "position " << position << " is past the model's context of " << entry.context << " tokens";
  }
}

class NativeStepper : public Stepper {
 public:
  explicit NativeStepper(const NativeModel& model) : model_(model) {
    const ir::Function& f = *model.entry.function;
    for (size_t i = 0; i < model.entry.states; ++i) {
      states_.push_back(exec::native::argument_value(*model.program, f.name, i, Tensor(ElementType::f64, f.argument_types[i].shape),
                                                     model.realization));
    }
  }
  std::vector<double> step(int64_t token) override {
    check_position(model_.entry, position_);
    const ir::Program& program = *model_.program;
    const std::string& name = model_.entry.function->name;
    std::vector<exec::native::Value> arguments = std::move(states_);
    Tensor at(ElementType::i64, {}), next(ElementType::i64, {1});
    at.set_integer(0, position_);
    next.set_integer(0, token);
    arguments.push_back(exec::native::argument_value(program, name, arguments.size(), at, model_.realization));
    arguments.push_back(exec::native::argument_value(program, name, arguments.size(), next, model_.realization));
    std::vector<exec::native::Value> results =
        exec::native::execute_values(program, name, model_.realization, std::move(arguments), model_.parameters, model_.options);
    states_.assign(std::make_move_iterator(results.begin() + 1), std::make_move_iterator(results.end()));
    ++position_;
    return doubles_of(exec::native::output_tensor(results[0]));
  }

 private:
  const NativeModel& model_;
  std::vector<exec::native::Value> states_;
};

class ExactStepper : public Stepper {
 public:
  using A = reference::MpfrArith;
  ExactStepper(const ir::Program& program, const reference::ParameterStore& weights, long bits)
      : program_(program), weights_(weights), entry_(find_decode_entry(program)), arith_(bits) {
    options_.bits = bits;
    const ir::Function& f = *entry_.function;
    for (size_t i = 0; i < entry_.states; ++i) {
      const ir::Type& type = f.argument_types[i];
      states_.push_back(reference::to_value(arith_, reference::HostTensor{type, std::vector<double>(static_cast<size_t>(type.element_count()), 0.0), {}}));
    }
  }
  std::vector<double> step(int64_t token) override {
    check_position(entry_, position_);
    std::vector<reference::Value<A>> arguments = std::move(states_);
    const ir::Type scalar{ir::ElemKind::Int, {}, {}, {}}, one{ir::ElemKind::Int, {1}, {}, {}};
    arguments.push_back(reference::to_value(arith_, reference::HostTensor{scalar, {}, {position_}}));
    arguments.push_back(reference::to_value(arith_, reference::HostTensor{one, {}, {token}}));
    std::vector<reference::Value<A>> results =
        reference::run_function<A>(program_, *entry_.function, weights_, arguments, options_);
    std::vector<double> logits(static_cast<size_t>(results[0].size()));
    for (size_t i = 0; i < logits.size(); ++i) logits[i] = arith_.to_double(results[0].real(static_cast<int64_t>(i)));
    states_.assign(std::make_move_iterator(results.begin() + 1), std::make_move_iterator(results.end()));
    ++position_;
    return logits;
  }

 private:
  const ir::Program& program_;
  const reference::ParameterStore& weights_;
  DecodeEntry entry_;
  A arith_;
  reference::RunOptions options_;
  std::vector<reference::Value<A>> states_;
};

}  // namespace

NativeModel prepare_native(const ir::Program& program, const reference::ParameterStore& weights,
                           const exec::native::Realization& realization, int threads) {
  NativeModel model{&program, find_decode_entry(program), realization, {}, exec::native::ExecuteOptions(threads, false)};
  exec::native::validate_realization(realization, program);
  model.realization = realization_for_decode(realization, program, *model.entry.function);  // solved on loss/logits
  model.parameters = exec::native::prepare_parameters(program, realization, [&](const std::string& path) { return weights.find(path); });
  return model;
}

std::unique_ptr<Stepper> native_stepper(const NativeModel& model) { return std::make_unique<NativeStepper>(model); }

std::unique_ptr<Stepper> exact_stepper(const ir::Program& program, const reference::ParameterStore& weights, long bits) {
  return std::make_unique<ExactStepper>(program, weights, bits);
}

int64_t choose(const std::vector<double>& logits, const Sampling& sampling, int64_t step) {
  std::vector<int64_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first, the lower index first among equal logits (NaN last).
  auto before = [&](int64_t a, int64_t b) {
    const double x = logits[static_cast<size_t>(a)], y = logits[static_cast<size_t>(b)];
    if (std::isnan(x) != std::isnan(y)) return std::isnan(y);
    return x > y || (!(x < y) && a < b);
  };
  if (sampling.temperature <= 0) return *std::min_element(order.begin(), order.end(), before);
  std::stable_sort(order.begin(), order.end(), before);
  const size_t kept = sampling.top_k > 0 ? std::min(order.size(), static_cast<size_t>(sampling.top_k)) : order.size();
  const double top = logits[static_cast<size_t>(order[0])];
  std::vector<double> weights(kept);
  double total = 0;
  for (size_t i = 0; i < kept; ++i) total += weights[i] = std::exp((logits[static_cast<size_t>(order[i])] - top) / sampling.temperature);
  const double u = random::uniform(sampling.seed, random::stream_of("generate.sample"), static_cast<uint64_t>(step), 0.0, 1.0) * total;
  double running = 0;
  for (size_t i = 0; i < kept; ++i) {
    running += weights[i];
    if (u < running) return order[i];
  }
  return order[kept - 1];
}

void check_fits(const DecodeEntry& entry, size_t prompt, int64_t count) {
  if (prompt == 0) user_error("E1515").hint("give at least one character: --prompt 'In the'") << "the prompt is empty";
  if (count < 0) user_error("E1515") << "cannot generate a negative number of tokens (" << count << ")";
  if (static_cast<int64_t>(prompt) + count > entry.context + 1) {
    user_error("E1514").hint("ask for fewer tokens, or a shorter prompt")
        << "a prompt of " << prompt << " tokens and " << count << " more need "
        << static_cast<int64_t>(prompt) + count - 1 << " positions; the model's context holds " << entry.context;
  }
}

std::vector<int64_t> generate(Stepper& stepper, const std::vector<int64_t>& prompt, int64_t count,
                              const Sampling& sampling, const std::function<bool(int64_t)>& on_token) {
  std::vector<double> logits;
  for (int64_t token : prompt) logits = stepper.step(token);
  std::vector<int64_t> generated;
  for (int64_t s = 0; s < count; ++s) {
    const int64_t token = choose(logits, sampling, s);
    generated.push_back(token);
    if (on_token && !on_token(token)) break;
    if (s + 1 < count) logits = stepper.step(token);
  }
  return generated;
}

Comparison compare(Stepper& first, Stepper& second, const std::vector<int64_t>& prompt, int64_t count,
                   const Sampling& sampling, const std::function<void(const CompareStep&)>& on_step) {
  std::vector<double> a, b;
  for (int64_t token : prompt) a = first.step(token), b = second.step(token);
  Comparison result;
  for (int64_t s = 0; s < count; ++s) {
    CompareStep step{first.position(), 0, choose(a, sampling, s), choose(b, sampling, s)};
    for (size_t i = 0; i < a.size(); ++i) step.gap = std::max(step.gap, std::abs(a[i] - b[i]));
    result.largest_gap = std::max(result.largest_gap, step.gap);
    if (step.first != step.second) {
      ++result.flips;
      if (!result.first_divergence) result.first_divergence = s;
    }
    result.steps.push_back(step);
    if (on_step) on_step(step);
    if (s + 1 < count) a = first.step(step.first), b = second.step(step.first);
  }
  return result;
}

}  // namespace presk::generate
