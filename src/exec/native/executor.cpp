// The executor's walk over a program: functions, call and fold contexts, parameters, the
// tuples and stacks of reverse mode (call with several results, get, fold_trace, fold_vjp;
// docs/semantics.md), and the dispatch of each let to its op family (ops_*.cpp).
#include "exec/native/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "exec/native/ops.h"
#include "ir/cotangent_stream.h"
#include "support/diagnostics.h"

namespace presk::exec::native {

const Value* PreparedParameters::find(const std::string& path) const {
  auto it = values_.find(path);
  return it == values_.end() ? nullptr : &it->second;
}

namespace {

// The parameter's elements in their stored type, copied from where they are.
Value stored_value(const ParamView& view, const std::vector<int64_t>& shape) {
  auto storage = std::make_shared<Storage>();
  const size_t n = view.size();
  RealType type = RealType::f64;
  if (view.type() == ElementType::bf16) {
    type = RealType::bf16;
    storage->bf16.resize(n);
    view.read_stored(0, n, reinterpret_cast<std::byte*>(storage->bf16.data()));
  } else if (view.type() == ElementType::f32) {
    type = RealType::f32;
    storage->f32.resize(n);
    view.read_stored(0, n, reinterpret_cast<std::byte*>(storage->f32.data()));
  } else {
    storage->f64.resize(n);
    view.read(0, n, storage->f64.data());
  }
  return Value{Value::Kind::real, type, shape, std::move(storage), 0};
}

Value prepare_one(const ir::Param& param, const Realization& realization, const ParamView& view) {
  if (param.type.kind != ir::ElemKind::Real) {
    const std::vector<double> values = view.widened();
    std::vector<int64_t> ints(values.begin(), values.end());
    return make_integers(std::move(ints), param.type.shape);
  }
  if (const QuantSpec* spec = realization.param_quant(param.path)) {
    const int64_t rank = param.type.rank();
    const int64_t over = spec->over < 0 ? spec->over + rank : spec->over;
    auto storage = std::make_shared<Storage>();
    const std::vector<double>* held = view.values();
    const std::vector<double> widened = held ? std::vector<double>{} : view.widened();
    storage->quant = std::make_shared<QuantizedWeights>(quantize(held ? *held : widened, param.type.shape, spec->bits,
                                                                 over, spec->scheme == QuantScheme::pow2, spec->group));
    return Value{Value::Kind::quantized, RealType::f32, param.type.shape, std::move(storage), 0};
  }
  // Rounded once into the parameter's type: what a realization means by "at rest". Each
  // stored value is exact in binary64, so rounding it from its stored type gives the bits
  // rounding its binary64 value gives. Binary64 of a narrower stored type (bf16, f32) is kept
  // narrow: every reader widens an operand exactly (value.h's load rule; a contraction a panel
  // at a time), so the bits are those of the widened copy, which is never made whole.
  Value stored = stored_value(view, param.type.shape);
  const RealType type = realization.param_type(param.path);
  return type == RealType::f64 ? stored : convert_real(stored, type);
}

}  // namespace

const Value* PreparedCache::find(const std::string& path, const std::string& key) const {
  auto it = values_.find(path);
  return it == values_.end() || it->second.first != key ? nullptr : &it->second.second;
}

void PreparedCache::store(const std::string& path, std::string key, Value value) {
  values_[path] = {std::move(key), std::move(value)};
  ++preparations_;
}

namespace {

// What a parameter is prepared as: its realized type, or its quantization.
std::string preparation_key(const ir::Param& param, const Realization& realization) {
  if (param.type.kind != ir::ElemKind::Real) return "integer";
  if (const QuantSpec* q = realization.param_quant(param.path)) {
    return "q" + std::to_string(q->bits) + "/" + std::to_string(q->over) + "/" +
           std::to_string(static_cast<int>(q->scheme)) + "/" + std::to_string(q->group);
  }
  return real_type_name(realization.param_type(param.path));
}

}  // namespace

PreparedParameters prepare_parameters(const ir::Program& program, const Realization& realization,
                                      const ParameterSource& source, PreparedCache* cache) {
  PreparedParameters prepared;
  for (const ir::Param& param : program.params) {
    const std::string key = cache != nullptr ? preparation_key(param, realization) : std::string{};
    if (const Value* kept = cache != nullptr ? cache->find(param.path, key) : nullptr) {
      prepared.set(param.path, *kept);
      continue;
    }
    const ParamView values = source(param.path);
    if (!values) user_error("E0620") << "parameter `" << param.path << "` has no values";
    if (values.size() != static_cast<uint64_t>(param.type.element_count())) {
      user_error("E0620") << "parameter `" << param.path << "` has " << values.size()
                          << " values; its type " << ir::type_to_string(param.type) << " needs "
                          << param.type.element_count();
    }
    Value value = prepare_one(param, realization, values);
    if (cache != nullptr) cache->store(param.path, key, value);
    prepared.set(param.path, std::move(value));
  }
  return prepared;
}

namespace {

// Where a function runs: its module path and the layer indices of the stacks it is inside;
// while it runs, the function and the parameter cotangents it streams (null: none).
struct CallContext {
  std::string path;
  std::vector<int64_t> layers;
  const ir::Function* function = nullptr;
  const ir::CotangentStream* stream = nullptr;
};

using ir::join_path;

// A function's values while it runs: one per let. A tuple-valued let (a call of a function
// with several results, fold_trace, fold_vjp) keeps its elements in `tuples`; `get` hands
// one on unchanged.
struct Frame {
  const std::vector<Value>& arguments;
  std::vector<Value> lets;
  std::vector<std::vector<Value>> tuples;
};

// How many lets (and the caller, for a result: counted twice) read each let of a function,
// and the last let that reads it.
struct Readers {
  std::vector<uint32_t> reads, reader;
  explicit Readers(const ir::Function& function) : reads(function.lets.size(), 0), reader(function.lets.size(), 0) {
    for (uint32_t i = 0; i < function.lets.size(); ++i) {
      for (const ir::ValueRef& ref : function.lets[i].operands) {
        if (ref.kind == ir::ValueRef::Kind::Let) ++reads[ref.index], reader[ref.index] = i;
      }
    }
    for (const ir::ValueRef& ref : function.results) {
      if (ref.kind == ir::ValueRef::Kind::Let) reads[ref.index] += 2;
    }
  }
  // The one let that reads let v once, if so.
  const ir::Let* only(const ir::Function& function, uint32_t v) const {
    return reads[v] == 1 ? &function.lets[reader[v]] : nullptr;
  }
};

// A contraction's epilogue (Runner::epilogues).
inline constexpr uint32_t kNone = UINT32_MAX;
struct Epilogue {
  uint32_t partner = kNone;
  ir::ValueRef bias{};
  bool bias_first = false;
};

// A function's site names and realized types, by let (Runner::sites).
struct Sites {
  std::vector<std::string> names;
  std::vector<RealType> types;
};

class Runner {
 public:
  Runner(const ir::Program& program, const Realization& realization, const PreparedParameters& parameters,
         const ExecuteOptions& options)
      : program_(program), realization_(realization), parameters_(parameters), options_(options) {}

  // `finals`: which of its results are final parameter cotangents (ExecuteOptions::cotangents).
  std::vector<Value> run_function(const ir::Function& function, const std::vector<Value>& arguments,
                                  const CallContext& caller, const std::vector<uint8_t>* finals = nullptr) {
    CallContext context{caller.path, caller.layers, &function, finals ? &stream_of(function, *finals) : nullptr};
    if (context.stream && !context.stream->any) context.stream = nullptr;
    Frame frame{arguments, std::vector<Value>(function.lets.size()), std::vector<std::vector<Value>>(function.lets.size())};
    const std::vector<std::vector<uint32_t>>& releases = releases_of(function);
    const std::vector<uint8_t>& live = live_lets(function);
    for (uint32_t i = 0; i < function.lets.size(); ++i) {
      if (live[i] || options_.observer) run_let(function, i, frame, context);
      for (uint32_t dead : releases[i]) {  // values no later let reads: their memory goes back now
        frame.lets[dead] = Value{};
        frame.tuples[dead].clear();
      }
    }
    std::vector<Value> results;
    for (size_t r = 0; r < function.results.size(); ++r) {
      results.push_back(resolve(function.results[r], frame));
      const auto& refs = function.results;  // one value returned twice: neither may be written
      if (std::count(refs.begin(), refs.end(), refs[r]) > 1) results.back().writable = false;
    }
    return results;
  }

 private:
  // For each let of `function`, whether a result depends on it; the others are not run (a
  // vjp's adjoints of constants, say: ∂L/∂s of attention's scale, summed over its scores).
  const std::vector<uint8_t>& live_lets(const ir::Function& function) {
    auto [it, fresh] = live_.try_emplace(&function);
    if (!fresh) return it->second;
    std::vector<uint8_t> live(function.lets.size(), 0);
    for (const ir::ValueRef& ref : function.results) {
      if (ref.kind == ir::ValueRef::Kind::Let) live[ref.index] = 1;
    }
    for (size_t i = live.size(); i-- > 0;) {
      if (!live[i]) continue;
      for (const ir::ValueRef& ref : function.lets[i].operands) {
        if (ref.kind == ir::ValueRef::Kind::Let) live[ref.index] = 1;
      }
    }
    it->second = std::move(live);
    return it->second;
  }

  // For each let i of `function`, the lets whose last reader is let i (a result is read by the
  // return, so never listed; nor is a let that nothing reads, which dies with the frame).
  const std::vector<std::vector<uint32_t>>& releases_of(const ir::Function& function) {
    auto [it, fresh] = releases_.try_emplace(&function);
    if (!fresh) return it->second;
    const size_t n = function.lets.size();
    constexpr uint32_t kNever = UINT32_MAX, kKept = UINT32_MAX - 1;
    std::vector<uint32_t> last(n, kNever);
    for (uint32_t i = 0; i < n; ++i) {
      for (const ir::ValueRef& ref : function.lets[i].operands) {
        if (ref.kind == ir::ValueRef::Kind::Let) last[ref.index] = i;
      }
    }
    for (const ir::ValueRef& ref : function.results) {
      if (ref.kind == ir::ValueRef::Kind::Let) last[ref.index] = kKept;
    }
    it->second.resize(n);
    for (uint32_t v = 0; v < n; ++v) {
      if (last[v] != kNever && last[v] != kKept) it->second[last[v]].push_back(v);
    }
    return it->second;
  }

  // For each let of `function`, whether a causal mask overwrites its values above the diagonal
  // before anything else reads them: its one reader is causal_mask, or a mul/div by a scalar
  // whose one reader is causal_mask (attention's scores: q·kᵀ, scaled, masked).
  const std::vector<uint8_t>& masked_above_diagonal(const ir::Function& function) {
    auto [it, fresh] = masked_.try_emplace(&function);
    if (!fresh) return it->second;
    const size_t n = function.lets.size();
    if (options_.observer) return it->second.assign(n, 0), it->second;  // every entry is computed
    const Readers readers(function);
    auto only_reader = [&](uint32_t v) -> const ir::Let* { return readers.only(function, v); };
    const std::vector<uint32_t>& reader = readers.reader;
    it->second.assign(n, 0);
    for (uint32_t v = 0; v < n; ++v) {
      const ir::Let* r = only_reader(v);
      if (r && (r->op == ir::Op::mul || r->op == ir::Op::div) && r->type.shape == function.lets[v].type.shape) {
        const ir::ValueRef &x = r->operands.at(0), &y = r->operands.at(1);
        const bool v_first = x.kind == ir::ValueRef::Kind::Let && x.index == v;  // v · s or v / s
        const ir::ValueRef& s = v_first ? y : x;
        const ir::Type& s_type = s.kind == ir::ValueRef::Kind::Let ? function.lets[s.index].type : function.argument_types.at(s.index);
        r = s_type.shape.empty() && (v_first || r->op == ir::Op::mul) ? only_reader(reader[v]) : nullptr;
      }
      it->second[v] = r != nullptr && r->op == ir::Op::causal_mask;
    }
    return it->second;
  }

  // For each let of `function`: a contraction whose one reader is an `add` of a real vector
  // along its last axis, at a site of the same type as the contraction's, computes
  // that sum itself (its epilogue, OpContext::bias) and the add takes its value. The bias must
  // be there when the contraction runs: an argument, an earlier let, or a parameter (read
  // early; a parameter is a view). Per let: for the contraction, the add's index and the
  // bias; for the add, the contraction's index; else partner = kNone.
  const std::vector<Epilogue>& epilogues(const ir::Function& function) {
    auto [it, fresh] = epilogues_.try_emplace(&function);
    if (!fresh) return it->second;
    const Readers readers(function);
    it->second.assign(function.lets.size(), Epilogue{});
    if (options_.observer) return it->second;  // each let holds its own value
    for (uint32_t v = 0; v < function.lets.size(); ++v) {
      const ir::Let& let = function.lets[v];
      const ir::Let* add = readers.only(function, v);
      if (let.op != ir::Op::contract || !add || add->op != ir::Op::add || add->type.shape != let.type.shape ||
          let.type.shape.empty()) {
        continue;
      }
      const bool bias_first = add->operands.at(1).kind == ir::ValueRef::Kind::Let && add->operands[1].index == v;
      const ir::ValueRef& bias = add->operands.at(bias_first ? 0 : 1);
      const bool is_let = bias.kind == ir::ValueRef::Kind::Let;
      const ir::Type& type = is_let ? function.lets[bias.index].type : function.argument_types.at(bias.index);
      // (not a broadcast: that may hand on a smaller operand, broadcasts_by_readers)
      const bool ready = !is_let || (function.lets[bias.index].op != ir::Op::broadcast &&
                                     (bias.index < v || function.lets[bias.index].op == ir::Op::param));
      const RealType site = sites(function).types[v];
      if (!ready || type.kind != ir::ElemKind::Real || type.shape != std::vector<int64_t>{let.type.shape.back()} ||
          sites(function).types[readers.reader[v]] != site) {
        continue;
      }
      it->second[v] = Epilogue{readers.reader[v], bias, bias_first};
      it->second[readers.reader[v]].partner = v;
    }
    return it->second;
  }

  // For each let of `function`: its site name and the type the realization gives it. A
  // `dropout` (only in a training compile) or `quantize` (only in a chip's program) that the
  // realization does not name takes its operand's type, so a realization solved on the plain
  // inference compile reads the same there.
  const Sites& sites(const ir::Function& function) {
    auto [it, fresh] = sites_.try_emplace(&function);
    if (!fresh) return it->second;
    Sites& own = it->second;
    for (uint32_t v = 0; v < function.lets.size(); ++v) {
      own.names.push_back(function.site_name(v));
      RealType type = realization_.site_type(own.names.back());
      const ir::Let& let = function.lets[v];
      if ((let.op == ir::Op::dropout || let.op == ir::Op::quantize) && !realization_.sites.contains(own.names.back())) {
        const ir::ValueRef& x = let.operands.at(0);
        if (x.kind == ir::ValueRef::Kind::Let) type = own.types.at(x.index);
      }
      own.types.push_back(type);
    }
    return own;
  }

  // For each let of `function`, whether it is a `broadcast` that only elementwise ops read (not
  // a result): they broadcast their operands themselves, so it may hand on its operand as it is
  // (run_let: where no conversion into its site type is due).
  const std::vector<uint8_t>& broadcasts_by_readers(const ir::Function& function) {
    auto [it, fresh] = lazy_broadcasts_.try_emplace(&function);
    if (!fresh) return it->second;
    const size_t n = function.lets.size();
    std::vector<uint8_t> lazy(n, 0);
    for (uint32_t v = 0; v < n; ++v) lazy[v] = function.lets[v].op == ir::Op::broadcast && !options_.observer;
    for (const ir::Let& let : function.lets) {
      for (const ir::ValueRef& ref : let.operands) {
        if (ref.kind == ir::ValueRef::Kind::Let && ir::op_info(let.op).family != ir::OpFamily::Elementwise) lazy[ref.index] = 0;
      }
    }
    for (const ir::ValueRef& ref : function.results) {
      if (ref.kind == ir::ValueRef::Kind::Let) lazy[ref.index] = 0;
    }
    it->second = std::move(lazy);
    return it->second;
  }

  // Ownership (Value::writable, for cache_write): a value may be written in place when it is
  // writable and its one reader is the let at hand. It becomes writable as an entry's argument
  // that nothing else holds (execute_values), or as cache_write's result; it stays writable when
  // handed on to its one reader by call or scan (a scan's stacked operand per layer), returned,
  // or read out of a tuple; every other op's result is not writable.
  bool sole_reader(const ir::Function& function, const ir::ValueRef& ref) {
    auto [it, fresh] = reads_.try_emplace(&function);
    std::vector<uint32_t>& reads = it->second;  // arguments first, then lets
    const size_t arguments = function.argument_types.size();
    if (fresh) {
      reads.assign(arguments + function.lets.size(), 0);
      auto slot = [&](const ir::ValueRef& r) { return r.kind == ir::ValueRef::Kind::Argument ? r.index : arguments + r.index; };
      for (const ir::Let& let : function.lets) {
        for (const ir::ValueRef& r : let.operands) ++reads[slot(r)];
      }
      for (const ir::ValueRef& r : function.results) reads[slot(r)] += 2;
    }
    return reads[ref.kind == ir::ValueRef::Kind::Argument ? ref.index : arguments + ref.index] == 1;
  }

  bool first_operand_dies(const ir::Function& function, uint32_t index) {
    const std::vector<ir::ValueRef>& operands = function.lets[index].operands;
    if (operands.empty() || operands[0].kind != ir::ValueRef::Kind::Let) return false;
    for (size_t k = 1; k < operands.size(); ++k) {
      if (operands[k].kind == ir::ValueRef::Kind::Let && operands[k].index == operands[0].index) return false;
    }
    const std::vector<uint32_t>& dying = releases_of(function)[index];
    return std::find(dying.begin(), dying.end(), operands[0].index) != dying.end();
  }

  static const Value& resolve(const ir::ValueRef& ref, const Frame& frame) {
    return ref.kind == ir::ValueRef::Kind::Argument ? frame.arguments.at(ref.index) : frame.lets.at(ref.index);
  }

  const ir::Function& callee(const ir::Let& let) const {
    const ir::Function* function = program_.find_function(let.attrs.callee);
    internal_assert(function != nullptr);
    return *function;
  }

  Value param_value(const ir::Let& let, const CallContext& context) const {
    const std::string path = join_path(context.path, let.attrs.path);
    const Value* full = parameters_.find(path);
    if (!full) user_error("E0620") << "parameter `" << path << "` was not prepared";
    Value slice = *full;
    const size_t depth = context.layers.size();
    internal_assert(full->shape.size() >= depth);
    const std::vector<size_t> strides = strides_of(full->shape);
    for (size_t d = 0; d < depth; ++d) slice.offset += static_cast<size_t>(context.layers[d]) * strides[d];
    slice.shape.assign(full->shape.begin() + static_cast<long>(depth), full->shape.end());
    return slice;
  }

  // L of the stack at `stack_path` at nesting `depth`: the extent of axis `depth` of its params.
  int64_t stack_extent(const std::string& stack_path, size_t depth) const {
    const std::string prefix = stack_path + ".";
    for (const ir::Param& param : program_.params) {
      if (param.path.compare(0, prefix.size(), prefix) == 0 && param.stack_depth > static_cast<int>(depth)) {
        return param.type.shape[depth];
      }
    }
    internal_assert(false && "fold over a stack without parameters");
    return 0;
  }

  // The context of layer `layer` of the stack a fold-like let runs its callee over.
  static CallContext layer_context(const ir::Let& let, const CallContext& context, int64_t layer) {
    CallContext inner{join_path(context.path, let.attrs.path), context.layers};
    inner.layers.push_back(layer);
    return inner;
  }

  int64_t layer_count(const ir::Let& let, const CallContext& context) const {
    return stack_extent(join_path(context.path, let.attrs.path), context.layers.size());
  }

  // call (one result: the value; several: the tuple) and fold, handing on the callee's values.
  std::vector<Value> run_call_or_fold(const ir::Let& let, const std::vector<const Value*>& operands,
                                      const CallContext& context) {
    const ir::Function& function = callee(let);
    if (let.op == ir::Op::call) {
      std::vector<Value> arguments;
      for (const Value* v : operands) arguments.push_back(*v);
      return run_function(function, arguments, CallContext{join_path(context.path, let.attrs.path), context.layers},
                          callee_finals(let, context));
    }
    Value carried = *operands.at(0);
    for (int64_t l = 0, layers = layer_count(let, context); l < layers; ++l) {
      carried = run_function(function, {carried}, layer_context(let, context, l)).at(0);
    }
    return {carried};
  }

  // fold_trace(x): the fold's result, handed on, and the layer inputs x_0 … x_{L−1} (a callee
  // x → (x, r…): each r's r_0 … r_{L−1}) stacked [L, ...] in the let's site type (stacked():
  // exact when the types agree).
  std::vector<Value> run_fold_trace(const ir::Let& let, const Value& initial, const CallContext& context,
                                    RealType site) {
    const ir::Function& function = callee(let);
    const size_t stacks = let.type.elements.size() - 1;
    std::vector<std::vector<Value>> per_layer(stacks);
    Value carried = initial;
    for (int64_t l = 0, layers = layer_count(let, context); l < layers; ++l) {
      std::vector<Value> results = run_function(function, {carried}, layer_context(let, context, l));
      if (results.size() == 1) per_layer[0].push_back(std::move(carried));
      for (size_t k = 1; k < results.size(); ++k) per_layer.at(k - 1).push_back(std::move(results[k]));
      carried = std::move(results.at(0));
    }
    std::vector<Value> tuple{carried};
    for (size_t k = 0; k < stacks; ++k) tuple.push_back(stacked(per_layer[k], let.type.elements[k + 1].shape, site));
    return tuple;
  }

  // scan(x, operands…): for l = 0 … L−1, (x, r…) = callee(x, layer l of each stacked operand
  // or the whole operand…). A further result that is layer l of a stacked operand, written in
  // place (cache_write on an owned cache), needs no stacking: the operand is the stack.
  std::vector<Value> run_scan(const ir::Let& let, const std::vector<const Value*>& operands, const CallContext& context) {
    const ir::Function& function = callee(let);
    const std::vector<int64_t>& stacked_at = let.attrs.axes;
    auto is_stacked = [&](size_t i) { return std::find(stacked_at.begin(), stacked_at.end(), static_cast<int64_t>(i)) != stacked_at.end(); };
    const size_t further = let.type.is_tuple() ? let.type.elements.size() - 1 : 0;
    std::vector<std::vector<Value>> per_layer(further);
    std::vector<int64_t> source(further, -1);  // the stacked operand result k was written into, or -2: none
    Value carried = *operands.at(0);
    for (int64_t l = 0, layers = layer_count(let, context); l < layers; ++l) {
      std::vector<Value> arguments{std::move(carried)};
      for (size_t i = 1; i < operands.size(); ++i) {
        arguments.push_back(is_stacked(i) ? layer_view(*operands[i], l) : *operands[i]);
        if (!is_stacked(i)) arguments.back().writable = false;  // every layer reads it
      }
      std::vector<Value> results = run_function(function, arguments, layer_context(let, context, l));
      internal_assert(results.size() == further + 1);
      for (size_t k = 0; k < further; ++k) {
        const Value& r = results[k + 1];
        int64_t into = -2;
        for (int64_t i : stacked_at) {
          const Value& stack = *operands[static_cast<size_t>(i)];
          const size_t layer_size = stack.count() / static_cast<size_t>(stack.shape[0]);
          if (r.storage == stack.storage && r.type == stack.type && r.kind == stack.kind &&
              r.offset == stack.offset + static_cast<size_t>(l) * layer_size && r.count() == layer_size) into = i;
        }
        source[k] = (l == 0 || source[k] == into) ? into : -2;
        per_layer[k].push_back(std::move(results[k + 1]));
      }
      carried = std::move(results[0]);
    }
    std::vector<Value> tuple{std::move(carried)};
    for (size_t k = 0; k < further; ++k) {
      const bool shared = std::count(source.begin(), source.end(), source[k]) > 1;
      if (source[k] >= 0 && !shared) {  // written in place: the operand is the stack
        tuple.push_back(*operands[static_cast<size_t>(source[k])]);
        continue;
      }
      const Value& first = per_layer[k].front();
      tuple.push_back(stacked(per_layer[k], let.type.elements[k + 1].shape, first.type));
      tuple.back().writable = true;  // fresh storage
    }
    return tuple;
  }

  // fold_vjp(stacks…, ḡ): for l = L−1 … 0, (ḡ, θ̄_l …) = callee(layer l of each stack…, ḡ) in
  // layer l's context (views); the last ḡ handed on, each θ̄ stacked at layer l. A θ̄ streamed
  // (ExecuteOptions::cotangents) is not stacked: these layers free it unseen, and
  // stream_layers runs them again from the first to hand it on in layer order.
  std::vector<Value> run_fold_vjp(const ir::Let& let, const std::vector<const Value*>& operands,
                                  const CallContext& context, RealType site) {
    const ir::Function& function = callee(let);
    const int64_t layers = layer_count(let, context);
    const std::vector<uint8_t>* finals = callee_finals(let, context);
    std::vector<std::vector<Value>> per_result(let.type.elements.size(), std::vector<Value>(static_cast<size_t>(layers)));
    std::vector<Value> carries(finals ? static_cast<size_t>(layers) : 0);  // each layer's ḡ, for stream_layers
    Value carried = *operands.back();
    {
      const Setting unseen(muted_, muted_ || finals != nullptr);
      for (int64_t l = layers; l-- > 0;) {
        std::vector<Value> arguments;
        for (size_t k = 0; k + 1 < operands.size(); ++k) arguments.push_back(layer_view(*operands[k], l));
        if (finals) (carries[static_cast<size_t>(l)] = carried).writable = false;
        arguments.push_back(std::move(carried));
        std::vector<Value> results = run_function(function, arguments, layer_context(let, context, l), finals);
        internal_assert(results.size() == let.type.elements.size());
        for (size_t k = 1; k < results.size(); ++k) per_result[k][static_cast<size_t>(l)] = std::move(results[k]);
        carried = std::move(results[0]);
      }
    }
    std::vector<Value> tuple{carried};
    for (size_t k = 1; k < per_result.size(); ++k) {
      const bool streamed = finals && finals->at(k);
      tuple.push_back(streamed ? Value{} : stacked(per_result[k], let.type.elements[k].shape, site));
    }
    if (finals && !muted_) stream_layers(let, operands, context, carries, *finals);
    return tuple;
  }

  // A fold_vjp's layers again, from the first, each from its kept carry, unobserved: the same
  // values as before, its streamed cotangents handed on now, in layer order.
  void stream_layers(const ir::Let& let, const std::vector<const Value*>& operands, const CallContext& context,
                     const std::vector<Value>& carries, const std::vector<uint8_t>& finals) {
    const Setting quiet(quiet_, true);
    for (size_t l = 0; l < carries.size(); ++l) {
      std::vector<Value> arguments;
      for (size_t k = 0; k + 1 < operands.size(); ++k) arguments.push_back(layer_view(*operands[k], static_cast<int64_t>(l)));
      arguments.push_back(carries[l]);
      run_function(callee(let), arguments, layer_context(let, context, static_cast<int64_t>(l)), &finals);
    }
  }

  // The stream of `function` run with `finals` (memoised).
  const ir::CotangentStream& stream_of(const ir::Function& function, const std::vector<uint8_t>& finals) {
    auto [it, fresh] = streams_.try_emplace({&function, finals});
    if (fresh) it->second = ir::cotangent_stream(function, finals);
    return it->second;
  }

  // Which results of the callee of `let` (a let of the running function) are final: null for none.
  static const std::vector<uint8_t>* callee_finals(const ir::Let& let, const CallContext& context) {
    if (context.stream == nullptr) return nullptr;
    const std::vector<uint8_t>& finals = context.stream->callee_finals.at(static_cast<size_t>(&let - context.function->lets.data()));
    return finals.empty() ? nullptr : &finals;
  }

  // Hands let `index` (a final parameter cotangent) to the sink, unless muted, and frees it.
  void emit(const ir::Function& function, uint32_t index, Frame& frame, const CallContext& context) {
    if (!muted_) {
      const auto at = std::find(function.results.begin(), function.results.end(), ir::ValueRef::let(index));
      const std::string& name = function.result_names.at(static_cast<size_t>(at - function.results.begin()));
      (*options_.cotangents)(join_path(context.path, name), context.layers, frame.lets[index]);
    }
    frame.lets[index] = Value{};
  }

  // Sets a flag for a scope.
  struct Setting {
    Setting(bool& flag, bool value) : flag_(flag), old_(flag) { flag = value; }
    ~Setting() { flag_ = old_; }
    Setting(const Setting&) = delete;
    Setting& operator=(const Setting&) = delete;
    bool& flag_;
    bool old_;
  };

  std::vector<Value> run_control(const ir::Let& let, const std::vector<const Value*>& operands,
                                 const CallContext& context, RealType site) {
    switch (let.op) {
      case ir::Op::call:
      case ir::Op::fold: return run_call_or_fold(let, operands, context);
      case ir::Op::fold_trace: return run_fold_trace(let, *operands.at(0), context, site);
      case ir::Op::fold_vjp: return run_fold_vjp(let, operands, context, site);
      case ir::Op::scan: return run_scan(let, operands, context);
      default: break;
    }
    internal_assert(false && "not a control op");
    return {};
  }

  Value run_value(const ir::Let& let, const std::vector<const Value*>& operands, const OpContext& ctx,
                  const CallContext& context) {
    switch (ir::op_info(let.op).family) {
      case ir::OpFamily::Source:
        if (let.op == ir::Op::param) return param_value(let, context);
        if (let.op == ir::Op::iota) return run_iota(let);
        return run_literal(let, ctx);
      case ir::OpFamily::Elementwise: return run_elementwise(let, operands, ctx);
      case ir::OpFamily::Reduction: return run_reduction(let, *operands.at(0), ctx);
      case ir::OpFamily::Contraction: return run_contract(let, *operands.at(0), *operands.at(1), ctx);
      case ir::OpFamily::Normalization:
        if (let.op == ir::Op::quantize) return run_quantize(let, *operands.at(0), operands.size() > 1 ? operands[1] : nullptr, ctx);
        return run_normalization(let, *operands.at(0), ctx);
      case ir::OpFamily::Gather: return run_embed(let, *operands.at(0), *operands.at(1), ctx);
      case ir::OpFamily::Layout: return run_layout(let, operands, ctx);
      case ir::OpFamily::Loss: return run_cross_entropy(let, *operands.at(0), *operands.at(1), ctx);
      case ir::OpFamily::Control: return run_control(let, operands, context, ctx.site).at(0);
    }
    internal_assert(false && "unknown op family");
    return {};
  }

  // Runs let `index` of `function` into `frame`; only call, scan, get and cache_write hand on
  // a writable value (sole_reader).
  void run_let(const ir::Function& function, uint32_t index, Frame& frame, const CallContext& context) {
    const ir::Let& let = function.lets[index];
    if (let.op == ir::Op::get) {  // element i of a tuple, handed on unchanged (and its ownership)
      const ir::ValueRef& tuple = let.operands.at(0);
      internal_assert(tuple.kind == ir::ValueRef::Kind::Let);
      Value& element = frame.tuples.at(tuple.index).at(static_cast<size_t>(let.attrs.axes.at(0)));
      frame.lets[index] = element;
      element.writable = false;
      observe(function, index, frame, context);
      return;
    }
    run_computing_let(function, index, frame, context);
    if (context.stream && context.stream->emits[index] && options_.cotangents) return emit(function, index, frame, context);
    const bool hands_on = let.op == ir::Op::call || let.op == ir::Op::scan || let.op == ir::Op::cache_write;
    if (hands_on) return;
    frame.lets[index].writable = false;
    for (Value& element : frame.tuples[index]) element.writable = false;
  }

  void run_computing_let(const ir::Function& function, uint32_t index, Frame& frame, const CallContext& context) {
    const ir::Let& let = function.lets[index];
    const Epilogue& epilogue = epilogues(function)[index];
    if (let.op == ir::Op::add && epilogue.partner != kNone) {  // computed by the contraction
      frame.lets[index] = std::move(frame.lets[epilogue.partner]);
      return;
    }
    std::vector<const Value*> operands;
    for (const ir::ValueRef& ref : let.operands) operands.push_back(&resolve(ref, frame));
    std::vector<Value> handed;  // call and scan: each operand, writable only if this let is its one reader
    if (let.op == ir::Op::call || let.op == ir::Op::scan) {
      handed.reserve(operands.size());
      for (size_t k = 0; k < operands.size(); ++k) {
        handed.push_back(*operands[k]);
        handed.back().writable = operands[k]->writable && sole_reader(function, let.operands[k]);
        operands[k] = &handed.back();
      }
    }
    const std::string& site_name = sites(function).names[index];
    const RealType site_type = sites(function).types[index];
    if (broadcasts_by_readers(function)[index] && operands[0]->kind == Value::Kind::real &&
        operands[0]->type == site_type) {
      frame.lets[index] = *operands[0];  // its readers broadcast it (broadcasts_by_readers)
      return;
    }
    OpContext ctx{realization_,  options_,      site_type,
                  site_name,     context.path, context.layers, masked_above_diagonal(function)[index] != 0,
                  first_operand_dies(function, index)};
    if (epilogue.partner != kNone) {
      const ir::ValueRef& bias = epilogue.bias;
      if (bias.kind == ir::ValueRef::Kind::Let && bias.index > index) {  // a parameter, read early
        frame.lets[bias.index] = param_value(function.lets[bias.index], context);
      }
      ctx.bias = &resolve(bias, frame), ctx.bias_first = epilogue.bias_first;
    }
    if (let.op == ir::Op::cache_write) {
      const bool own = operands[0]->writable && sole_reader(function, let.operands[0]);
      frame.lets[index] = run_cache_write(let, operands, ctx, own);
    } else if (let.type.is_tuple()) {
      frame.tuples[index] = run_control(let, operands, context, ctx.site);
      internal_assert(frame.tuples[index].size() == let.type.elements.size());
    } else if (options_.profile == nullptr || ir::op_info(let.op).family == ir::OpFamily::Control) {
      frame.lets[index] = run_value(let, operands, ctx, context);
    } else {
      const auto start = std::chrono::steady_clock::now();
      frame.lets[index] = run_value(let, operands, ctx, context);
      std::string kind = std::string(ir::op_name(let.op)) + " " + real_type_name(ctx.site);
      if (let.op == ir::Op::contract) kind += " " + format_shape(operands.at(0)->shape) + " @ " + format_shape(operands.at(1)->shape);
      if (ir::op_info(let.op).family == ir::OpFamily::Reduction) {
        kind += " " + format_shape(operands.at(0)->shape) + " → " + format_shape(let.type.shape);
      }
      OpTime& time = (*options_.profile)[kind];
      time.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      ++time.calls;
    }
    observe(function, index, frame, context);
  }

  void observe(const ir::Function& function, uint32_t index, const Frame& frame, const CallContext& context) {
    // (A streamed cotangent handed on by a `get` has no storage: nothing to see.)
    if (!options_.observer || quiet_ || function.lets[index].type.is_tuple() || !frame.lets[index].storage) return;
    std::vector<const Value*> operands;
    for (const ir::ValueRef& ref : function.lets[index].operands) operands.push_back(&resolve(ref, frame));
    (*options_.observer)(LetObservation{function, index, context.path, context.layers, frame.lets[index], operands});
  }

  const ir::Program& program_;
  const Realization& realization_;
  const PreparedParameters& parameters_;
  const ExecuteOptions& options_;
  std::map<const ir::Function*, std::vector<std::vector<uint32_t>>> releases_;
  std::map<const ir::Function*, std::vector<uint8_t>> masked_;
  std::map<const ir::Function*, std::vector<Epilogue>> epilogues_;
  std::map<const ir::Function*, std::vector<uint8_t>> lazy_broadcasts_;
  std::map<const ir::Function*, Sites> sites_;
  std::map<const ir::Function*, std::vector<uint8_t>> live_;
  std::map<const ir::Function*, std::vector<uint32_t>> reads_;
  std::map<std::pair<const ir::Function*, std::vector<uint8_t>>, ir::CotangentStream> streams_;
  bool muted_ = false;  // streamed cotangents are freed unseen (a fold_vjp's backward layers)
  bool quiet_ = false;  // the observer sees nothing (a fold_vjp's layers run again)
};

}  // namespace

namespace {

// Keeps freed value buffers in the heap for the next let instead of handing each large one
// back to the kernel (glibc maps blocks over 128 KiB anew and unmaps them on free, so every let
// paid page faults and page clearing for its result). Once per process; changes no value.
void keep_freed_buffers() {
#ifdef __GLIBC__
  static const bool once = [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    return true;
  }();
  (void)once;
#endif
}

}  // namespace

std::vector<Value> execute_values(const ir::Program& program, const std::string& entry, const Realization& realization,
                                  std::vector<Value> arguments, const PreparedParameters& parameters,
                                  const ExecuteOptions& options) {
  keep_freed_buffers();
  const ir::Function* function = program.find_function(entry);
  if (!function) user_error("E0621") << "the program has no function `" << entry << "`";
  if (arguments.size() != function->argument_types.size()) {
    user_error("E0622") << "`" << entry << "` takes " << function->argument_types.size() << " inputs, got "
                        << arguments.size();
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    const ir::Type& type = function->argument_types[i];
    if (arguments[i].shape != type.shape) {
      user_error("E0622") << "input `" << function->argument_names[i] << "` has shape "
                          << format_shape(arguments[i].shape) << "; `" << entry << "` expects "
                          << ir::type_to_string(type);
    }
  }
  for (Value& argument : arguments) {  // nothing else holds it: the entry may write it in place
    argument.writable = argument.kind == Value::Kind::real && argument.storage && argument.storage.use_count() == 1;
  }
  Runner runner(program, realization, parameters, options);
  std::vector<uint8_t> finals;
  if (options.cotangents) finals = ir::parameter_results(program, *function);
  return runner.run_function(*function, arguments, CallContext{}, options.cotangents ? &finals : nullptr);
}

}  // namespace presk::exec::native
