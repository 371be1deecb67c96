// The vjp generator's driver: for each function, a forward pass (F's lets copied, a fold
// made a fold_trace so its layer inputs are kept), then the reverse sweep over F's lets
// applying each op's rule (rules.h), then the cotangents of F's real arguments and of its
// parameters as the results.
#include "ad/vjp.h"

#include <set>

#include "ad/rules.h"
#include "ir/verifier.h"
#include "support/diagnostics.h"

namespace presk::ad {
namespace {

std::string join_path(const std::string& context, const std::string& path) {
  if (context.empty()) return path;
  if (path.empty()) return context;
  return context + "." + path;
}

// The module contexts (path, stack depth) each function runs in, found by walking the calls
// down from the entries (ir.h, above `struct Program`); what the layer count of a fold needs.
class Contexts {
 public:
  explicit Contexts(const ir::Program& program) : program_(program), sets_(program.functions.size()) {
    for (size_t i = 0; i < program.functions.size(); ++i) {
      if (program.functions[i].is_entry) sets_[i].insert({"", 0});
    }
    for (size_t i = program.functions.size(); i-- > 0;) {
      for (const auto& [path, depth] : sets_[i]) {
        for (const ir::Let& let : program.functions[i].lets) {
          if (!ir::is_calling(let.op)) continue;
          size_t callee = index_of(let.attrs.callee);
          if (callee < i) sets_[callee].insert({join_path(path, let.attrs.path), depth + (ir::is_folding(let.op) ? 1 : 0)});
        }
      }
    }
  }

  // The layer count of the stack the fold `let` of function `f` folds over.
  int64_t layers(const ir::Function& f, uint32_t site) const {
    const ir::Let& let = f.lets[site];
    std::set<int64_t> found;
    for (const auto& [path, depth] : sets_[index_of(f.name)]) {
      std::string prefix = join_path(path, let.attrs.path) + ".";
      for (const ir::Param& param : program_.params) {
        if (param.path.starts_with(prefix) && param.stack_depth > depth)
          found.insert(param.type.shape[static_cast<size_t>(depth)]);
      }
    }
    if (found.size() != 1) {
      user_error("E0801", let.span) << "cannot tell the layer count of the fold at "
                                    << f.site_name(site) << " (its function runs in "
                                    << (found.empty() ? "no context an entry reaches" : "contexts with different stacks")
                                    << ")";
    }
    return *found.begin();
  }

 private:
  size_t index_of(const std::string& name) const {
    for (size_t i = 0; i < program_.functions.size(); ++i) {
      if (program_.functions[i].name == name) return i;
    }
    return program_.functions.size();
  }

  const ir::Program& program_;
  std::vector<std::set<std::pair<std::string, int>>> sets_;
};

Type stacked(Type type, int64_t layers) {
  type.axes.clear();
  type.shape.insert(type.shape.begin(), layers);
  return type;
}

class Generator {
 public:
  Generator(const ir::Program& program, const ir::Function& forward, const Contexts& contexts)
      : program_(program), forward_(forward), contexts_(contexts) {}

  std::optional<ir::Function> run() {
    const ir::Function& f = forward_;
    if (f.results.size() != 1 || f.type_of(f.results[0]).kind != ir::ElemKind::Real ||
        f.type_of(f.results[0]).is_tuple())
      return std::nullopt;
    start_signature();
    collect_params();
    copy_forward();
    sweep();
    return finish();
  }

 private:
  void start_signature() {
    const ir::Function& f = forward_;
    out_.name = vjp_name(f.name);
    out_.module = f.module;
    out_.is_entry = f.is_entry;
    out_.span = f.span;
    out_.argument_types = f.argument_types;
    out_.argument_types.push_back(f.type_of(f.results[0]));
    out_.argument_names = f.argument_names;
    out_.argument_names.resize(f.argument_types.size());
    out_.argument_names.push_back("cotangent");
  }

  void add_param(const std::string& path, const Type& type) {
    for (const std::string& known : adjoints_.param_paths) {
      if (known == path) return;
    }
    adjoints_.param_paths.push_back(path);
    adjoints_.param_types.push_back(type);
  }

  // Every parameter F reads, directly or through its calls and folds, in order of first read.
  void collect_params() {
    const ir::Function& f = forward_;
    for (uint32_t j = 0; j < f.lets.size(); ++j) {
      const ir::Let& let = f.lets[j];
      if (let.op == Op::param) add_param(let.attrs.path, let.type);
      if (let.op != Op::call && let.op != Op::fold) continue;
      const ir::Function* vjp = program_.find_function(vjp_name(let.attrs.callee));
      if (vjp == nullptr) continue;
      int64_t layers = let.op == Op::fold ? contexts_.layers(f, j) : 0;
      for (size_t k = 0; k < vjp->results.size(); ++k) {
        if (vjp->result_names[k].starts_with("$")) continue;
        Type type = vjp->type_of(vjp->results[k]);
        add_param(join_path(let.attrs.path, vjp->result_names[k]), layers ? stacked(type, layers) : type);
      }
    }
    adjoints_.of_param.resize(adjoints_.param_paths.size());
  }

  ValueRef primal(ValueRef forward) const {
    return forward.kind == ValueRef::Kind::Argument ? forward : primal_[forward.index];
  }

  // F's lets again, in order; a fold becomes a fold_trace that also keeps its layer inputs.
  void copy_forward() {
    const ir::Function& f = forward_;
    layer_inputs_.resize(f.lets.size());
    for (uint32_t j = 0; j < f.lets.size(); ++j) {
      ir::Let let = f.lets[j];
      for (ValueRef& operand : let.operands) operand = primal(operand);
      if (let.op != Op::fold) {
        out_.lets.push_back(std::move(let));
        primal_.push_back(ValueRef::let(static_cast<uint32_t>(out_.lets.size() - 1)));
        continue;
      }
      Type traced = ir::tuple_type({let.type, stacked(let.type, contexts_.layers(f, j))});
      const ir::Function* callee = program_.find_function(let.attrs.callee);
      ValueRef trace = build_.emit(Op::fold_trace, let.operands, let.attrs, &traced, callee);
      std::vector<ValueRef> parts = build_.results_of(trace, 2);
      primal_.push_back(parts[0]);
      layer_inputs_[j] = parts[1];
    }
    forward_count_ = out_.lets.size();
  }

  // Records that `adjoint` holds the complete adjoint of forward site j: a generated let (one
  // let may stand for several sites), or the cotangent argument. Emits nothing.
  void mark_adjoint(uint32_t j, ValueRef adjoint) {
    if (adjoint.kind == ValueRef::Kind::Argument) {
      if (adjoint.index + 1 == out_.argument_types.size()) out_.cotangent_adjoint_of.push_back(j);
      return;
    }
    if (adjoint.index < forward_count_) return;
    ir::Let& let = out_.lets[adjoint.index];
    if (let.op != Op::literal) let.adjoint_of.push_back(j);
  }

  void sweep() {
    const ir::Function& f = forward_;
    adjoints_.of_let.resize(f.lets.size());
    adjoints_.of_argument.resize(f.argument_types.size());
    ValueRef seed = ValueRef::argument(static_cast<uint32_t>(f.argument_types.size()));
    ValueRef result = f.results[0];
    (result.kind == ValueRef::Kind::Argument ? adjoints_.of_argument : adjoints_.of_let)[result.index] = seed;
    for (uint32_t j = static_cast<uint32_t>(f.lets.size()); j-- > 0;) {
      if (!adjoints_.of_let[j]) continue;
      const ir::Let& let = f.lets[j];
      mark_adjoint(j, *adjoints_.of_let[j]);
      Rule rule = find_rule(let.op);
      if (rule == nullptr) {
        user_error("E0800", let.span) << "`" << ir::op_name(let.op) << "` at " << f.site_name(j)
                                      << " has no adjoint rule, so `" << f.name
                                      << "` cannot be differentiated";
      }
      std::vector<ValueRef> operands;
      for (ValueRef operand : let.operands) operands.push_back(primal(operand));
      RuleContext context{build_, program_, let, primal_[j], operands,
                          *adjoints_.of_let[j], layer_inputs_[j], adjoints_};
      rule(context);
    }
  }

  std::optional<ir::Function> finish() {
    const ir::Function& f = forward_;
    for (uint32_t i = 0; i < f.argument_types.size(); ++i) {
      if (f.argument_types[i].kind != ir::ElemKind::Real) continue;
      std::optional<ValueRef> adjoint = adjoints_.of_argument[i];
      out_.results.push_back(adjoint ? *adjoint : build_.zeros(f.argument_types[i]));
      std::string name(1, '$');
      name += std::to_string(i);  // (not "$" + …: g++ 12 warns falsely, -Wrestrict)
      out_.result_names.push_back(std::move(name));
    }
    for (size_t k = 0; k < adjoints_.param_paths.size(); ++k) {
      std::optional<ValueRef> adjoint = adjoints_.of_param[k];
      out_.results.push_back(adjoint ? *adjoint : build_.zeros(adjoints_.param_types[k]));
      out_.result_names.push_back(adjoints_.param_paths[k]);
    }
    if (out_.results.empty()) return std::nullopt;
    return std::move(out_);
  }

  const ir::Program& program_;
  const ir::Function& forward_;
  const Contexts& contexts_;
  ir::Function out_;
  Builder build_{out_};
  Adjoints adjoints_;
  std::vector<ValueRef> primal_;                      // per forward let: its value in out_
  std::vector<std::optional<ValueRef>> layer_inputs_;  // per forward fold: its layer inputs
  size_t forward_count_ = 0;
};

}  // namespace

std::string vjp_name(const std::string& function) { return function + ".vjp"; }

size_t vjp_forward_length(const ir::Function& function) {
  size_t length = 0;
  for (const ir::Let& let : function.lets) length += let.op == Op::fold ? 3 : 1;  // copy_forward
  return length;
}

namespace {

// Why `function` is a decode step (add_vjps skips it), or "" when it is not.
std::string decode_reason(const ir::Program& program, const ir::Function& function, int depth = 0) {
  if (function.name.ends_with(".vjp")) return "";
  if (function.results.size() > 1) return "`" + function.name + "` returns several results";
  for (size_t i = 0; i < function.lets.size(); ++i) {
    const Op op = function.lets[i].op;
    if (op == Op::scan || op == Op::cache_write || op == Op::causal_mask_at)
      return "`" + function.name + "` holds " + ir::op_name(op) + " (" + function.site_name(static_cast<uint32_t>(i)) + ")";
    const ir::Function* callee = ir::is_calling(op) ? program.find_function(function.lets[i].attrs.callee) : nullptr;
    if (callee && depth < 64) {
      std::string inner = decode_reason(program, *callee, depth + 1);
      if (!inner.empty()) return inner;
    }
  }
  return "";
}

}  // namespace

void require_differentiable(const ir::Program& program, const std::string& name) {
  const ir::Function* function = program.find_function(name);
  if (!function) return;
  const std::string reason = decode_reason(program, *function);
  if (reason.empty()) return;
  user_error("E1500", function->span).hint("differentiate a full-sequence entry such as `loss`; a decode step is run, not trained")
      << "`" << name << "` is a decode step, which is not differentiable: " << reason;
}

ir::Program add_vjps(const ir::Program& program) {
  Contexts contexts(program);
  ir::Program result = program;
  result.functions.clear();
  for (const ir::Function& function : program.functions) {
    result.functions.push_back(function);
    bool generated = function.name.ends_with(".vjp") || program.find_function(vjp_name(function.name));
    if (generated || !decode_reason(program, function).empty()) continue;
    std::optional<ir::Function> vjp = Generator(result, function, contexts).run();
    if (vjp) result.functions.push_back(std::move(*vjp));
  }
  ir::verify_program(result);
  return result;
}

}  // namespace presk::ad
