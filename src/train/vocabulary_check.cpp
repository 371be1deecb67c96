// The token data against the program and the weights (vocabulary_check.h).
#include "train/vocabulary_check.h"

#include <algorithm>
#include <set>

#include "support/diagnostics.h"
#include "support/safetensors.h"

namespace presk::train {
namespace {

// Walks the functions the entry reaches with the Z values that derive from its tokens marked,
// keeping the smallest extent those values index.
class BoundWalk {
 public:
  explicit BoundWalk(const ir::Program& program) : program_(program) {}

  void visit(const ir::Function& function, const std::vector<bool>& marked_arguments) {
    std::string key = function.name + "/";
    for (bool marked : marked_arguments) key += marked ? '1' : '0';
    if (!visited_.insert(key).second) return;
    std::vector<bool> marked_lets(function.lets.size(), false);
    auto marked = [&](ir::ValueRef value) {
      return value.kind == ir::ValueRef::Kind::Argument
                 ? value.index < marked_arguments.size() && marked_arguments[value.index]
                 : marked_lets[value.index];
    };
    for (uint32_t i = 0; i < function.lets.size(); ++i) {
      const ir::Let& let = function.lets[i];
      bool any = false;
      for (ir::ValueRef operand : let.operands) any = any || marked(operand);
      if (!any) continue;
      marked_lets[i] = let.type.kind == ir::ElemKind::Int;
      if (let.op == ir::Op::embed && marked(let.operands[1])) {
        offer(function.type_of(let.operands[0]), 0, "embed at " + function.site_name(i));
      } else if (let.op == ir::Op::cross_entropy && marked(let.operands[1])) {
        const ir::Type& logits = function.type_of(let.operands[0]);
        offer(logits, logits.rank() - 1, "cross_entropy at " + function.site_name(i));
      } else if (ir::is_calling(let.op)) {
        call(let, marked);
      }
    }
  }

  std::optional<TokenBound> bound;

 private:
  template <class Marked>
  void call(const ir::Let& let, Marked marked) {
    const ir::Function* callee = program_.find_function(let.attrs.callee);
    if (callee == nullptr) return;
    std::vector<bool> arguments(callee->argument_types.size(), false);
    for (size_t k = 0; k < let.operands.size() && k < arguments.size(); ++k) arguments[k] = marked(let.operands[k]);
    visit(*callee, arguments);
  }

  void offer(const ir::Type& type, int axis, const std::string& where) {
    if (axis < 0 || axis >= type.rank()) return;
    const int64_t size = type.shape[static_cast<size_t>(axis)];
    if (bound && bound->size <= size) return;
    std::string name = static_cast<size_t>(axis) < type.axes.size() ? type.axes[static_cast<size_t>(axis)] : "";
    bound = TokenBound{size, name, where};
  }

  const ir::Program& program_;
  std::set<std::string> visited_;
};

// "const V = 73" or, for an unnamed axis, "73 rows".
std::string bound_text(const TokenBound& bound) {
  return bound.name.empty() ? std::to_string(bound.size) + " tokens" : bound.name + " = " + std::to_string(bound.size);
}

// A recorded vocabulary (a JSON string literal, docs/data.md) cut for a message.
std::string vocabulary_excerpt(const std::string& vocabulary) {
  constexpr size_t kLimit = 48;
  return vocabulary.size() <= kLimit ? vocabulary : vocabulary.substr(0, kLimit) + "…";
}

std::string fit_hint(const TokenBound& bound, int64_t needed) {
  const std::string name = bound.name.empty() ? "the table's rows" : bound.name;
  return "the data needs " + name + " ≥ " + std::to_string(needed) +
         (bound.name.empty() ? "" : " (`--const " + bound.name + "=" + std::to_string(needed) + "`)") +
         ", or prepare the data from a text with fewer characters";
}

}  // namespace

std::optional<TokenBound> token_bound(const ir::Program& program, const std::string& entry) {
  const ir::Function* function = program.find_function(entry);
  if (function == nullptr) return std::nullopt;
  BoundWalk walk(program);
  walk.visit(*function, std::vector<bool>(function->argument_types.size(), true));
  return walk.bound;
}

void check_tokens_fit(const TokenWindows& windows, const std::string& role, const TokenBound& bound) {
  const std::string recorded = windows.metadata("vocabulary_size");
  int64_t size = 0;
  if (!recorded.empty() && recorded.size() < 12 && recorded.find_first_not_of("0123456789") == std::string::npos) {
    size = std::stoll(recorded);
  }
  if (size > bound.size) {
    user_error("E1032").hint(fit_hint(bound, size))
        << role << " `" << windows.path() << "` records a vocabulary of " << size << " tokens; the program reads "
        << bound_text(bound) << " (" << bound.where << ")";
  }
  if (auto token = windows.first_outside(bound.size)) {
    user_error("E1032").hint(fit_hint(bound, std::max(windows.largest() + 1, bound.size)))
        << role << " `" << windows.path() << "`: window " << token->window << " holds token " << token->value
        << " at position " << token->position << ", outside [0, " << bound.size << ") of " << bound_text(bound)
        << " (" << bound.where << ")";
  }
}

void check_same_vocabulary(const std::string& path, const std::string& role, const TokenWindows& windows) {
  const std::string data_vocabulary = windows.metadata("vocabulary");
  if (data_vocabulary.empty()) return;
  const SafetensorsFile file = SafetensorsFile::open(path);
  auto found = file.metadata().find("vocabulary");
  if (found == file.metadata().end() || found->second == data_vocabulary) return;
  user_error("E1033").hint("train on token files prepared from the text the weights were trained on, or start afresh")
      << role << " `" << path << "` was trained on the vocabulary " << vocabulary_excerpt(found->second) << ", --data `"
      << windows.path() << "` holds " << vocabulary_excerpt(data_vocabulary)
      << ": the same token would stand for another character";
}

}  // namespace presk::train
