// The fwd/bwd split's driver (split.h): which functions get a `.fwd` and a `.bwd` (the entry;
// under Store also every function it reaches that has a vjp, and the layer functions of
// each one it folds), in an order where callees come first; and the Recompute split.
#include "ad/split.h"

#include <set>

#include "ad/split_detail.h"
#include "ad/vjp.h"
#include "ir/verifier.h"
#include "support/diagnostics.h"

namespace presk::ad {
namespace split_detail {

SplitPair split_recompute(const ir::Program& program, const ir::Function& entry) {
  const ir::Function& vjp = *program.find_function(vjp_name(entry.name));
  const ValueRef value = entry.results.at(0);
  SplitPair out{entry, vjp};
  out.fwd.name = fwd_name(entry.name);
  out.fwd.results = {value};
  out.fwd.result_names = {"value"};
  out.bwd.name = bwd_name(entry.name);
  out.bwd.argument_types = {entry.type_of(value)};
  out.bwd.argument_types[0].axes.clear();
  out.bwd.argument_names = {"value"};
  out.bwd.cotangent_adjoint_of.clear();
  // E.vjp's argument i → E.bwd's: the value, or the residual that is argument i.
  std::vector<uint32_t> moved(vjp.argument_types.size());
  for (uint32_t i = 0; i < entry.argument_types.size(); ++i) {
    if (value == ValueRef::argument(i)) continue;
    moved[i] = static_cast<uint32_t>(out.bwd.argument_types.size());
    std::string name = i < entry.argument_names.size() ? entry.argument_names[i] : "";
    if (name.empty()) name = "arg_" + std::to_string(i);
    out.fwd.results.push_back(ValueRef::argument(i));
    out.fwd.result_names.push_back(name);
    out.bwd.argument_types.push_back(entry.argument_types[i]);
    out.bwd.argument_names.push_back(name);
  }
  moved.back() = static_cast<uint32_t>(out.bwd.argument_types.size());
  out.bwd.argument_types.push_back(vjp.argument_types.back());
  out.bwd.argument_names.push_back("cotangent");
  auto remap = [&](ValueRef& ref) {
    if (ref.kind == ValueRef::Kind::Argument) ref = ValueRef::argument(moved[ref.index]);
  };
  for (ir::Let& let : out.bwd.lets) {
    let.adjoint_of.clear();
    for (ValueRef& operand : let.operands) remap(operand);
  }
  for (ValueRef& result : out.bwd.results) remap(result);
  return out;
}

}  // namespace split_detail

namespace {

using split_detail::SplitPair;

// The functions `entry` reaches by calls and folds (itself included), and those it folds.
struct Reach {
  std::set<std::string> reached;
  std::set<std::string> folded;
};

Reach reach_from(const ir::Program& program, const std::string& entry) {
  Reach reach;
  std::vector<std::string> pending = {entry};
  while (!pending.empty()) {
    std::string name = pending.back();
    pending.pop_back();
    if (!reach.reached.insert(name).second) continue;
    const ir::Function* function = program.find_function(name);
    if (function == nullptr) continue;
    for (const ir::Let& let : function->lets) {
      if (let.op != Op::call && let.op != Op::fold) continue;
      if (let.op == Op::fold) reach.folded.insert(let.attrs.callee);
      pending.push_back(let.attrs.callee);
    }
  }
  return reach;
}

const ir::Function& checked_entry(const ir::Program& program, const std::string& entry) {
  const ir::Function* function = program.find_function(entry);
  if (function == nullptr || !function->is_entry) {
    std::string entries;
    for (const ir::Function& f : program.functions)
      if (f.is_entry && !f.name.ends_with(".vjp"))
        entries += (entries.empty() ? "`" : ", `") + f.name + "`";
    user_error("E0811").hint(entries.empty() ? "the program has no entry"
                                             : "its entries: " + entries)
        << "the program has no entry `" << entry << "` to split into .fwd and .bwd";
  }
  if (program.find_function(vjp_name(entry)) == nullptr) {
    user_error("E0810", function->span)
            .hint(
                "run add_vjps first; an entry gets a vjp when its result is real and it reads a "
                "real argument or a parameter")
        << "`" << entry << "` has no `" << vjp_name(entry) << "`, so it has no .fwd and .bwd";
  }
  return *function;
}

void check_free(const ir::Program& program, const std::string& name) {
  if (program.find_function(name) == nullptr) return;
  user_error("E0813") << "the program already has a function `" << name
                      << "`, which the .fwd/.bwd split would add";
}

// Store: for each function F the entry reaches that has a vjp, in program order (callees
// first), F.fwd and F.bwd right after F.vjp, then F's layer functions where F is folded.
ir::Program add_store(const ir::Program& program, const std::string& entry) {
  Reach reach = reach_from(program, entry);
  ir::Program result = program;
  result.functions.clear();
  for (const ir::Function& function : program.functions) {
    result.functions.push_back(function);
    if (!function.name.ends_with(".vjp")) continue;
    const ir::Function* forward =
        program.find_function(function.name.substr(0, function.name.size() - 4));
    if (forward == nullptr || !reach.reached.count(forward->name)) continue;
    check_free(program, fwd_name(forward->name));
    check_free(program, bwd_name(forward->name));
    SplitPair pair = split_detail::split_store(result, *forward);
    result.functions.push_back(std::move(pair.fwd));
    result.functions.push_back(std::move(pair.bwd));
    if (!reach.folded.count(forward->name)) continue;
    std::optional<SplitPair> layers = split_detail::layer_functions(result, *forward);
    if (!layers) continue;
    check_free(program, layers->fwd.name);
    check_free(program, layers->bwd.name);
    result.functions.push_back(std::move(layers->fwd));
    result.functions.push_back(std::move(layers->bwd));
  }
  return result;
}

ir::Program add_recompute(const ir::Program& program, const ir::Function& entry) {
  check_free(program, fwd_name(entry.name));
  check_free(program, bwd_name(entry.name));
  SplitPair pair = split_detail::split_recompute(program, entry);
  ir::Program result = program;
  result.functions.clear();
  for (const ir::Function& function : program.functions) {
    result.functions.push_back(function);
    if (function.name != vjp_name(entry.name)) continue;
    result.functions.push_back(std::move(pair.fwd));
    result.functions.push_back(std::move(pair.bwd));
  }
  return result;
}

}  // namespace

Remat parse_remat(std::string_view text) {
  if (text == "store") return Remat::Store;
  if (text == "recompute") return Remat::Recompute;
  user_error("E0812").hint(
      "--remat store (keep the activations) or --remat recompute (keep the arguments)")
      << "unknown rematerialization `" << text << "`";
  return Remat::Store;
}

const char* remat_name(Remat remat) {
  return remat == Remat::Store ? "store" : "recompute";
}

std::string fwd_name(const std::string& function) {
  return function + ".fwd";
}
std::string bwd_name(const std::string& function) {
  return function + ".bwd";
}

ir::Program add_fwd_bwd(const ir::Program& program, const std::string& entry, Remat remat) {
  const ir::Function& function = checked_entry(program, entry);
  ir::Program result =
      remat == Remat::Store ? add_store(program, entry) : add_recompute(program, function);
  ir::verify_program(result);
  return result;
}

}  // namespace presk::ad
