// `--remat store` for one function F (split_detail.h): F.vjp read apart. Its forward lets
// become F.fwd, where each call the sweep reverses runs its callee's `.fwd` and each fold
// the sweep reverses runs B.fwd_layer; its sweep becomes F.bwd, where those reversals run
// `.bwd` and B.bwd_layer on the residuals, and every forward value the sweep reads is an
// argument (a residual), except sources (param, literal, iota), which it reads again.
#include <algorithm>
#include <map>
#include <set>

#include "ad/split.h"
#include "ad/split_detail.h"
#include "ad/vjp.h"
#include "support/diagnostics.h"

namespace presk::ad::split_detail {
namespace {

bool is_source(Op op) {
  return op == Op::param || op == Op::literal || op == Op::iota;
}

// A key that is equal for two calls of one callee, in one context, on the same values:
// such calls compute the same value and the same residuals.
std::string call_key(const std::string& callee, const ir::Let& let, size_t operand_count) {
  std::string key = callee + "\n" + let.attrs.path + "\n";
  for (size_t i = 0; i < operand_count; ++i) key += ir::value_ref_text(let.operands[i]) + ",";
  return key;
}

uint64_t value_key(ValueRef value) {
  return (value.kind == ValueRef::Kind::Argument ? uint64_t{1} << 32 : 0) | value.index;
}

class StoreSplitter {
 public:
  StoreSplitter(const ir::Program& program, const ir::Function& function)
      : program_(program),
        f_(function),
        vjp_(*program.find_function(vjp_name(function.name))),
        length_(vjp_forward_length(function)) {}

  SplitPair run() {
    find_reversals();
    build_forward();
    build_backward();
    finish();
    return {std::move(fwd_), std::move(bwd_)};
  }

 private:
  // The calls and folds of F's forward pass that the sweep reverses.
  void find_reversals() {
    for (size_t q = length_; q < vjp_.lets.size(); ++q) {
      const ir::Let& let = vjp_.lets[q];
      if (let.op == Op::call && let.attrs.callee.ends_with(".vjp")) {
        std::string callee = let.attrs.callee.substr(0, let.attrs.callee.size() - 4);
        reversed_calls_.insert(call_key(callee, let, let.operands.size() - 1));
      }
      if (let.op == Op::fold_vjp) {
        internal_assert(let.operands[0].kind == ValueRef::Kind::Let &&
                        let.operands[0].index < length_);
        reversed_folds_.insert(let.operands[0].index);
      }
    }
  }

  ir::Function signature(std::string name) const {
    ir::Function out;
    out.name = std::move(name);
    out.module = f_.module;
    out.is_entry = f_.is_entry;
    out.span = f_.span;
    return out;
  }

  ValueRef forward_operand(ValueRef value) const {
    if (value.kind == ValueRef::Kind::Argument) return value;
    internal_assert(value.index < length_ && fwd_of_vjp_[value.index].has_value());
    return *fwd_of_vjp_[value.index];
  }

  void copy_into_forward(uint32_t p) {
    ir::Let let = vjp_.lets[p];
    for (ValueRef& operand : let.operands) operand = forward_operand(operand);
    fwd_.lets.push_back(std::move(let));
    fwd_of_vjp_[p] = ValueRef::let(static_cast<uint32_t>(fwd_.lets.size() - 1));
  }

  // F's lets again; a reversed call runs C.fwd, a reversed fold B.fwd_layer (or, where B's
  // residuals cannot stack, the fold_trace F.vjp has), any other fold a plain fold.
  void build_forward() {
    fwd_ = signature(fwd_name(f_.name));
    fwd_.argument_names = f_.argument_names;
    fwd_.argument_types = f_.argument_types;
    fwd_of_vjp_.resize(length_);
    std::vector<uint32_t> primal_of_let;  // per let of F: its value's let in F.vjp
    for (uint32_t p = 0; p < length_;) {
      bool fold = vjp_.lets[p].op == Op::fold_trace;
      primal_of_let.push_back(fold ? p + 1 : p);
      if (fold)
        emit_fold(p);
      else if (vjp_.lets[p].op == Op::call)
        emit_call(p);
      else
        copy_into_forward(p);
      p += fold ? 3 : 1;
    }
    internal_assert(primal_of_let.size() == f_.lets.size());
    ValueRef result = f_.results.at(0);
    value_ = result.kind == ValueRef::Kind::Argument
                 ? result
                 : forward_operand(ValueRef::let(primal_of_let[result.index]));
  }

  void emit_call(uint32_t p) {
    const ir::Let& let = vjp_.lets[p];
    std::string key = call_key(let.attrs.callee, let, let.operands.size());
    const ir::Function* fwd = program_.find_function(fwd_name(let.attrs.callee));
    if (!reversed_calls_.count(key) || fwd == nullptr) return copy_into_forward(p);
    std::vector<ValueRef> operands;
    for (ValueRef operand : let.operands) operands.push_back(forward_operand(operand));
    ir::Attrs attrs = let.attrs;
    attrs.callee = fwd->name;
    ValueRef called = forward_build_.emit(Op::call, operands, attrs, nullptr, fwd);
    // C.fwd's results; a residual that is C's argument is the call's operand, not a copy.
    std::vector<ValueRef> parts = {called};
    for (uint32_t k = 0; fwd->results.size() > 1 && k < fwd->results.size(); ++k) {
      ValueRef result = fwd->results[k];
      if (k > 0 && result.kind == ValueRef::Kind::Argument) {
        parts.push_back(operands[result.index]);
        continue;
      }
      ir::Attrs element;
      element.axes = {k};
      parts.push_back(forward_build_.emit(Op::get, {called}, element));
    }
    if (parts.size() > 1) parts.erase(parts.begin());
    fwd_of_vjp_[p] = parts[0];
    called_.emplace(key, std::move(parts));  // (an equal call before: the same values)
  }

  void emit_fold(uint32_t p) {
    const ir::Let& trace = vjp_.lets[p];
    ValueRef input = forward_operand(trace.operands[0]);
    if (!reversed_folds_.count(p + 2)) {
      const ir::Function* callee = program_.find_function(trace.attrs.callee);
      fwd_of_vjp_[p + 1] = forward_build_.emit(Op::fold, {input}, trace.attrs, nullptr, callee);
      return;
    }
    if (program_.find_function(fwd_layer_name(trace.attrs.callee)) == nullptr) {
      for (uint32_t k = p; k < p + 3; ++k) copy_into_forward(k);
      return;
    }
    PackedFold packed = emit_packed_fold(forward_build_, program_, trace, input);
    fwd_of_vjp_[p + 1] = packed.value;
    stacks_of_.emplace(p + 2, packed.stacks);
  }

  // Arguments while building: 0 the value, 1 the cotangent, 2 + k residual k (finish()
  // puts the cotangent last).
  ValueRef from_forward(ValueRef value) {
    if (value == value_) return ValueRef::argument(0);
    if (value.kind == ValueRef::Kind::Let && is_source(fwd_.lets[value.index].op)) {
      auto [found, fresh] = sources_.try_emplace(value.index);
      if (fresh) {
        ir::Let let = fwd_.lets[value.index];
        bwd_.lets.push_back(std::move(let));
        found->second = ValueRef::let(static_cast<uint32_t>(bwd_.lets.size() - 1));
      }
      return found->second;
    }
    auto [found, fresh] = residual_of_.try_emplace(value_key(value), residuals_.size());
    if (fresh) {
      residuals_.push_back(value);
      bwd_.argument_types.push_back(fwd_.type_of(value));
      bwd_.argument_types.back().axes.clear();
      bwd_.argument_names.push_back(residual_name(value));
    }
    return ValueRef::argument(static_cast<uint32_t>(2 + found->second));
  }

  std::string residual_name(ValueRef value) const {
    if (value.kind == ValueRef::Kind::Let) return "fwd_" + std::to_string(value.index);
    const std::string& name =
        value.index < f_.argument_names.size() ? f_.argument_names[value.index] : "";
    return name.empty() ? "arg_" + std::to_string(value.index) : name;
  }

  ValueRef backward_operand(ValueRef value) {
    if (value.kind == ValueRef::Kind::Argument) {
      if (value.index == f_.argument_types.size()) return ValueRef::argument(1);
      return from_forward(value);
    }
    if (value.index < length_) return from_forward(forward_operand(value));
    internal_assert(bwd_of_vjp_[value.index].has_value());
    return *bwd_of_vjp_[value.index];
  }

  // F.vjp's sweep, reading the residuals; reversed calls and folds from their residuals.
  void build_backward() {
    bwd_ = signature(bwd_name(f_.name));
    bwd_.argument_names = {"value", "cotangent"};
    bwd_.argument_types = {fwd_.type_of(value_), vjp_.argument_types.back()};
    bwd_.argument_types[0].axes.clear();
    bwd_of_vjp_.resize(vjp_.lets.size());
    for (uint32_t q = static_cast<uint32_t>(length_); q < vjp_.lets.size(); ++q) {
      const ir::Let& let = vjp_.lets[q];
      if (let.op == Op::get && let.operands[0].kind == ValueRef::Kind::Let &&
          tuple_parts_.count(let.operands[0].index)) {
        bwd_of_vjp_[q] =
            tuple_parts_[let.operands[0].index].at(static_cast<size_t>(let.attrs.axes.at(0)));
      } else if (!emit_reversed_call(q) && !emit_reversed_fold(q)) {
        ir::Let copy = let;
        for (ValueRef& operand : copy.operands) operand = backward_operand(operand);
        copy.adjoint_of.clear();
        bwd_.lets.push_back(std::move(copy));
        bwd_of_vjp_[q] = ValueRef::let(static_cast<uint32_t>(bwd_.lets.size() - 1));
      }
    }
    for (ValueRef result : vjp_.results) bwd_.results.push_back(backward_operand(result));
    bwd_.result_names = vjp_.result_names;
  }

  // `call @C.vjp(x…, ḡ)` as `call @C.bwd(C.fwd's results…, ḡ)`.
  bool emit_reversed_call(uint32_t q) {
    const ir::Let& let = vjp_.lets[q];
    if (let.op != Op::call || !let.attrs.callee.ends_with(".vjp")) return false;
    std::string callee = let.attrs.callee.substr(0, let.attrs.callee.size() - 4);
    auto found = called_.find(call_key(callee, let, let.operands.size() - 1));
    if (found == called_.end()) return false;
    const ir::Function* bwd = program_.find_function(bwd_name(callee));
    internal_assert(bwd != nullptr);
    // C.bwd's value argument, where C.bwd does not read it, is the cotangent (of its type):
    // F then keeps no copy of the call's value for it.
    ValueRef cotangent = backward_operand(let.operands.back());
    std::vector<ValueRef> operands = {reads_argument(*bwd, 0) ? from_forward(found->second[0])
                                                              : cotangent};
    for (size_t k = 1; k < found->second.size(); ++k)
      operands.push_back(from_forward(found->second[k]));
    operands.push_back(cotangent);
    ir::Attrs attrs = let.attrs;
    attrs.callee = bwd->name;
    bwd_of_vjp_[q] = backward_build_.emit(Op::call, operands, attrs, nullptr, bwd);
    internal_assert(backward_build_.type_of(*bwd_of_vjp_[q]) == let.type);
    return true;
  }

  // `fold_vjp @B.vjp(inputs, ḡ)` as `fold_vjp @B.bwd_layer(stacks…, ḡ)`; its gets read the parts.
  bool emit_reversed_fold(uint32_t q) {
    const ir::Let& let = vjp_.lets[q];
    if (let.op != Op::fold_vjp) return false;
    auto found = stacks_of_.find(let.operands[0].index);
    if (found == stacks_of_.end()) return false;
    std::vector<ValueRef> stacks;
    for (ValueRef stack : found->second) stacks.push_back(from_forward(stack));
    tuple_parts_[q] = emit_packed_fold_vjp(backward_build_, program_, let, stacks,
                                           backward_operand(let.operands[1]));
    return true;
  }

  // The value and the residuals as F.fwd's results; the cotangent as F.bwd's last argument.
  void finish() {
    fwd_.results = {value_};
    fwd_.result_names = {"value"};
    for (size_t k = 0; k < residuals_.size(); ++k) {
      fwd_.results.push_back(residuals_[k]);
      fwd_.result_names.push_back(bwd_.argument_names[2 + k]);
    }
    auto count = static_cast<uint32_t>(bwd_.argument_types.size());
    auto moved = [count](ValueRef value) {
      if (value.kind != ValueRef::Kind::Argument || value.index == 0) return value;
      return ValueRef::argument(value.index == 1 ? count - 1 : value.index - 1);
    };
    for (ir::Let& let : bwd_.lets)
      for (ValueRef& operand : let.operands) operand = moved(operand);
    for (ValueRef& result : bwd_.results) result = moved(result);
    std::rotate(bwd_.argument_types.begin() + 1, bwd_.argument_types.begin() + 2,
                bwd_.argument_types.end());
    std::rotate(bwd_.argument_names.begin() + 1, bwd_.argument_names.begin() + 2,
                bwd_.argument_names.end());
  }

  const ir::Program& program_;
  const ir::Function& f_;
  const ir::Function& vjp_;
  const size_t length_;
  ir::Function fwd_;
  ir::Function bwd_;
  Builder forward_build_{fwd_};
  Builder backward_build_{bwd_};
  ValueRef value_;                                   // F's value in F.fwd
  std::vector<std::optional<ValueRef>> fwd_of_vjp_;  // per forward let of F.vjp
  std::vector<std::optional<ValueRef>> bwd_of_vjp_;  // per sweep let of F.vjp
  std::set<std::string> reversed_calls_;
  std::set<uint32_t> reversed_folds_;                      // their layer inputs' gets in F.vjp
  std::map<std::string, std::vector<ValueRef>> called_;    // C.fwd's results, by call_key
  std::map<uint32_t, std::vector<ValueRef>> stacks_of_;    // packed folds' stacks, by inputs' get
  std::map<uint32_t, std::vector<ValueRef>> tuple_parts_;  // packed fold_vjps' parts
  std::map<uint32_t, ValueRef> sources_;                   // fwd source let → its copy in bwd
  std::map<uint64_t, size_t> residual_of_;
  std::vector<ValueRef> residuals_;  // F.fwd values, in order of first read
};

}  // namespace

SplitPair split_store(const ir::Program& program, const ir::Function& function) {
  return StoreSplitter(program, function).run();
}

}  // namespace presk::ad::split_detail
