// The verifier's checks of parameter reads: the contexts (module path, stack depth) each
// function runs in, found by walking the calls down from the entries; every `param` let
// against the Param it reads in each of them; every `fold` against its stack.
#include <map>
#include <set>
#include <unordered_map>

#include "ir/type_rules.h"
#include "ir/verifier_detail.h"

namespace presk::ir::detail {
namespace {

// More distinct contexts than this means a hostile or runaway program, not a model.
constexpr size_t kMaxContexts = size_t{1} << 16;

using ContextSets = std::vector<std::set<CallContext>>;

std::string context_text(const CallContext& context) {
  return context.path.empty() ? std::string("the root") : "`" + context.path + "`";
}

// The contexts of every function: an entry runs at the root; a call or fold adds its
// path (and a fold one stack level) to each context of its caller. Callers come after
// callees, so one backward sweep reaches every context.
bool collect_contexts(const Program& program, ContextSets& contexts, ViolationReporter& reporter) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < program.functions.size(); ++i) index.emplace(program.functions[i].name, i);
  size_t total = 0;
  for (size_t i = 0; i < program.functions.size(); ++i) {
    if (program.functions[i].is_entry) total += contexts[i].insert({"", 0}).second;
  }
  for (size_t i = program.functions.size(); i-- > 0;) {
    for (const CallContext& outer : contexts[i]) {
      for (const Let& let : program.functions[i].lets) {
        if (!is_calling(let.op)) continue;
        auto callee = index.find(let.attrs.callee);
        if (callee == index.end() || callee->second >= i) continue;  // reported already
        CallContext inner{join_path(outer.path, let.attrs.path),
                          outer.depth + (is_folding(let.op) ? 1 : 0)};
        total += contexts[callee->second].insert(std::move(inner)).second;
        if (total > kMaxContexts) {
          reporter.report("E0472", let.span,
                          "the calls of the program reach more than 65536 "
                          "distinct module contexts");
          return false;
        }
      }
    }
  }
  return true;
}

class ParameterReadChecker {
 public:
  ParameterReadChecker(const Program& program, ViolationReporter& reporter)
      : program_(program), reporter_(reporter) {
    for (const Param& param : program.params) by_path_.emplace(param.path, &param);
  }

  // A param let in a known context: the Param at the joined path, at the context's depth.
  bool check_read(const Function& f, uint32_t i, const CallContext& context) {
    const Let& let = f.lets[i];
    std::string path = join_path(context.path, let.attrs.path);
    auto found = by_path_.find(path);
    if (found == by_path_.end()) {
      reporter_.report("E0467", let.span,
                       f.site_name(i) + " reads parameter `" + path + "` (`" + let.attrs.path +
                           "` in context " + context_text(context) + "), which does not exist");
      return false;
    }
    const Param& param = *found->second;
    if (param.stack_depth != context.depth) {
      reporter_.report("E0468", let.span,
                       f.site_name(i) + " reads `" + path + "` inside " +
                           std::to_string(context.depth) + " stacks, but it has " +
                           std::to_string(param.stack_depth) + " stack axes");
      return false;
    }
    return check_type(f, i, param);
  }

  // A param let that no entry reaches: some Param whose path ends in the relative path.
  void check_unreached_read(const Function& f, uint32_t i) {
    const Let& let = f.lets[i];
    const std::string& relative = let.attrs.path;
    for (const Param& param : program_.params) {
      bool suffix =
          param.path == relative || (param.path.size() > relative.size() &&
                                     param.path.compare(param.path.size() - relative.size(),
                                                        relative.size(), relative) == 0 &&
                                     param.path[param.path.size() - relative.size() - 1] == '.');
      TypeRuleContext rule{nullptr, nullptr, &param};
      InferredType inferred = infer_result_type(Op::param, {}, let.attrs, rule);
      if (suffix && inferred && *inferred.type == let.type) return;
    }
    reporter_.report("E0467", let.span,
                     f.site_name(i) + " reads parameter `" + relative + "` as " +
                         type_to_string(let.type) +
                         ", and no parameter of that type ends in that path");
  }

  // A fold over the stack at `<context>.<path>`: its params share one layer count.
  bool check_stack(const Function& f, uint32_t i, const CallContext& context) {
    const Let& let = f.lets[i];
    std::string prefix = join_path(context.path, let.attrs.path) + ".";
    auto axis = static_cast<size_t>(context.depth);
    int64_t layers = -1;
    for (const Param& param : program_.params) {
      if (param.path.compare(0, prefix.size(), prefix) != 0) continue;
      if (param.stack_depth <= context.depth || param.type.shape.size() <= axis ||
          (layers >= 0 && param.type.shape[axis] != layers)) {
        reporter_.report("E0469", let.span,
                         f.site_name(i) + " folds over `" + prefix.substr(0, prefix.size() - 1) +
                             "`, but parameter `" + param.path + "` does not share its stack axis");
        return false;
      }
      layers = param.type.shape[axis];
    }
    if (layers < 0) {
      reporter_.report("E0469", let.span,
                       f.site_name(i) + " folds over `" + prefix.substr(0, prefix.size() - 1) +
                           "`, which holds no stacked parameter");
      return false;
    }
    return check_layer_count(f, i, layers);
  }

 private:
  // fold_trace and fold_vjp state the layer count in their types: it must be the stack's.
  bool check_layer_count(const Function& f, uint32_t i, int64_t layers) {
    const Let& let = f.lets[i];
    int64_t stated = layers;
    if (let.op == Op::fold_trace) stated = let.type.elements.at(1).shape.at(0);
    if (let.op == Op::fold_vjp) stated = f.type_of(let.operands.at(0)).shape.at(0);
    if (let.op == Op::scan && !let.attrs.axes.empty())
      stated = f.type_of(let.operands.at(static_cast<size_t>(let.attrs.axes[0]))).shape.at(0);
    if (stated == layers) return true;
    reporter_.report("E0469", let.span,
                     f.site_name(i) + " states " + std::to_string(stated) +
                         " layers, but its stack has " + std::to_string(layers));
    return false;
  }

  bool check_type(const Function& f, uint32_t i, const Param& param) {
    const Let& let = f.lets[i];
    TypeRuleContext rule{nullptr, nullptr, &param};
    InferredType inferred = infer_result_type(Op::param, {}, let.attrs, rule);
    if (!inferred || !(*inferred.type == let.type)) {
      reporter_.report("E0468", let.span,
                       f.site_name(i) + " is declared " + type_to_string(let.type) +
                           ", but parameter `" + param.path + "` gives " +
                           (inferred ? type_to_string(*inferred.type) : inferred.error));
      return false;
    }
    return true;
  }

  const Program& program_;
  ViolationReporter& reporter_;
  std::unordered_map<std::string, const Param*> by_path_;
};

// Checks one let of `f` that is an `op` in each of its contexts, reporting only its
// first failure.
void check_let_in_contexts(ParameterReadChecker& checker, const Function& f, uint32_t i, Op op,
                           const std::set<CallContext>& contexts) {
  if (f.lets[i].op != op && !(op == Op::fold && is_folding(f.lets[i].op))) return;
  if (op == Op::param && contexts.empty()) checker.check_unreached_read(f, i);
  for (const CallContext& context : contexts) {
    bool fine =
        op == Op::param ? checker.check_read(f, i, context) : checker.check_stack(f, i, context);
    if (!fine) return;
  }
}

}  // namespace

void verify_parameter_reads(const Program& program, ViolationReporter& reporter) {
  ContextSets contexts(program.functions.size());
  if (!collect_contexts(program, contexts, reporter)) return;
  ParameterReadChecker checker(program, reporter);
  // Stacks first: a fold over a missing stack also makes every read under it fail.
  for (Op op : {Op::fold, Op::param}) {
    for (size_t k = 0; k < program.functions.size(); ++k) {
      const Function& f = program.functions[k];
      for (uint32_t i = 0; i < f.lets.size(); ++i)
        check_let_in_contexts(checker, f, i, op, contexts[k]);
    }
  }
}

}  // namespace presk::ir::detail
