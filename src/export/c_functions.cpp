// The generated functions: lets in order (only those a result depends on, as the executor
// runs them), each owned buffer freed after its last reader; parameters are views into the
// loaded weights at the context's layer; call and fold call the callee's specialization.
#include "export/c_functions.h"

#include "support/diagnostics.h"

namespace presk::export_c {

struct Functions::Frame {
  const ir::Function& function;
  std::string path;
  size_t depth;
  std::vector<CValue> arguments;
  std::vector<CValue> lets;
  std::vector<bool> owned;
  std::ostringstream body;
};

namespace {

// For each let, whether a result depends on it (executor.cpp's live_lets).
std::vector<bool> live_lets(const ir::Function& function) {
  std::vector<bool> live(function.lets.size(), false);
  for (const ir::ValueRef& ref : function.results) {
    if (ref.kind == ir::ValueRef::Kind::Let) live[ref.index] = true;
  }
  for (size_t i = live.size(); i-- > 0;) {
    if (!live[i]) continue;
    for (const ir::ValueRef& ref : function.lets[i].operands) {
      if (ref.kind == ir::ValueRef::Kind::Let) live[ref.index] = true;
    }
  }
  return live;
}

// For each let, the lets whose last reader it is (results are never released).
std::vector<std::vector<uint32_t>> releases(const ir::Function& function) {
  const size_t n = function.lets.size();
  std::vector<int64_t> last(n, -1);
  for (uint32_t i = 0; i < n; ++i) {
    for (const ir::ValueRef& ref : function.lets[i].operands) {
      if (ref.kind == ir::ValueRef::Kind::Let) last[ref.index] = i;
    }
  }
  for (const ir::ValueRef& ref : function.results) {
    if (ref.kind == ir::ValueRef::Kind::Let) last[ref.index] = -2;
  }
  std::vector<std::vector<uint32_t>> out(n);
  for (uint32_t v = 0; v < n; ++v) {
    if (last[v] >= 0) out[static_cast<size_t>(last[v])].push_back(v);
  }
  return out;
}

std::string key_of(const ir::Function& function, const std::string& path, size_t depth,
                   const std::vector<Store>& arguments) {
  std::string key = function.name + "|" + path + "|" + std::to_string(depth);
  for (Store store : arguments) key += std::string("|") + store_name(store);
  return key;
}

std::string allocation(const CValue& value) {
  const std::string type = c_type(value.store);
  return "  " + type + "* " + value.name + " = (" + type + "*)pk_alloc(cx, " +
         std::to_string(std::max<int64_t>(element_count(value.shape), 1)) + " * sizeof(" + type +
         "));\n";
}

}  // namespace

Store Functions::parameter_store(const ir::Param& param) const {
  if (param.type.kind == ir::ElemKind::Int) return Store::i64;
  if (param.type.kind == ir::ElemKind::Bool) return Store::b8;
  // Integer weights are held as their meanings f32(q·s): the native kernels compute with those.
  if (realization_.param_quant(param.path)) return Store::f32;
  return store_of(realization_.param_type(param.path));
}

int64_t Functions::layer_count(const std::string& stack_path, size_t depth) const {
  const std::string prefix = stack_path + ".";
  for (const ir::Param& param : program_.params) {
    if (param.path.compare(0, prefix.size(), prefix) == 0 &&
        param.stack_depth > static_cast<int>(depth)) {
      return param.type.shape[depth];
    }
  }
  internal_assert(false && "fold over a stack without parameters");
  return 0;
}

Specialization Functions::specialize(const ir::Function& function, const std::string& path,
                                     size_t depth, const std::vector<Store>& arguments) {
  const std::string key = key_of(function, path, depth, arguments);
  if (auto it = done_.find(key); it != done_.end()) return it->second;
  if (function.results.size() != 1) {
    user_error("E1543").hint("export an entry whose functions each return one value")
        << "`presk export c` does not cover functions with " << function.results.size()
        << " results (`" << function.name << "`)";
  }
  Frame frame{function,
              path,
              depth,
              {},
              std::vector<CValue>(function.lets.size()),
              std::vector<bool>(function.lets.size(), false),
              {}};
  for (size_t k = 0; k < arguments.size(); ++k) {
    frame.arguments.push_back(
        {"a" + std::to_string(k), arguments[k], function.argument_types[k].shape});
  }
  const std::vector<bool> live = live_lets(function);
  const std::vector<std::vector<uint32_t>> released = releases(function);
  for (uint32_t i = 0; i < function.lets.size(); ++i) {
    if (!live[i]) continue;
    emit_let(frame, i);
    for (uint32_t dead : released[i]) {
      if (frame.owned[dead]) frame.body << "  pk_free(cx, " << frame.lets[dead].name << ");\n";
    }
  }
  const ir::ValueRef result = function.results[0];
  const bool is_let = result.kind == ir::ValueRef::Kind::Let;
  const CValue& value = is_let ? frame.lets[result.index] : frame.arguments[result.index];
  Specialization own{"f" + std::to_string(done_.size()), value.store};
  const std::string type = c_type(value.store);
  std::ostringstream text;
  text << "/* " << function.name << (path.empty() ? "" : " in `" + path + "`") << " */\n"
       << "static " << type << "* " << own.c_name
       << "(pk_context* cx, const pk_weights* W, const pk_index* L";
  for (const CValue& argument : frame.arguments)
    text << ", const " << c_type(argument.store) << "* " << argument.name;
  text << ") {\n  (void)W;\n  (void)L;\n" << frame.body.str();
  if (is_let && frame.owned[result.index]) {
    text << "  return " << value.name << ";\n}\n\n";
  } else {  // an argument or a parameter: handed on in a buffer of its own
    CValue copy{"r", value.store, value.shape};
    text << allocation(copy) << "  memcpy(r, " << value.name << ", "
         << std::max<int64_t>(element_count(value.shape), 1) << " * sizeof(" << type
         << "));\n  return r;\n}\n\n";
  }
  definitions_ += text.str();
  done_[key] = own;
  return own;
}

void Functions::emit_let(Frame& frame, uint32_t index) {
  const ir::Let& let = frame.function.lets[index];
  if (let.op == ir::Op::param) return emit_param(frame, index);
  if (let.op == ir::Op::call) return emit_call(frame, index);
  if (let.op == ir::Op::fold) return emit_fold(frame, index);
  const std::string site_name = frame.function.site_name(index);
  const RealType site = realization_.site_type(site_name);
  LetCode code{let, site_name, {}, {}, site, realization_.order, frame.body};
  if (let.type.is_tuple() || ir::op_info(let.op).family == ir::OpFamily::Control)
    unsupported(code, "tuples");
  for (const ir::ValueRef& ref : let.operands) {
    code.operands.push_back(ref.kind == ir::ValueRef::Kind::Argument ? frame.arguments[ref.index]
                                                                     : frame.lets[ref.index]);
  }
  const Store store = let.type.kind == ir::ElemKind::Int    ? Store::i64
                      : let.type.kind == ir::ElemKind::Bool ? Store::b8
                                                            : store_of(site);
  code.result = CValue{"v" + std::to_string(index), store, let.type.shape};
  frame.body << "  /* " << site_name << " = " << ir::op_name(let.op) << " : " << store_name(store)
             << ir::shape_text(let.type.shape) << " */\n"
             << allocation(code.result);
  emit_op(code);
  frame.lets[index] = code.result;
  frame.owned[index] = true;
}

void Functions::emit_param(Frame& frame, uint32_t index) {
  const ir::Let& let = frame.function.lets[index];
  const std::string path = ir::join_path(frame.path, let.attrs.path);
  size_t k = 0;
  while (k < program_.params.size() && program_.params[k].path != path) ++k;
  internal_assert(k < program_.params.size());
  const ir::Param& param = program_.params[k];
  const Store store = parameter_store(param);
  used_parameters_.insert(k);
  // The slice at the context's layers: the leading `depth` axes are the stack axes.
  const std::vector<int64_t> strides = row_strides(param.type.shape);
  std::string offset = "0";
  for (size_t d = 0; d < frame.depth; ++d)
    offset += " + L[" + std::to_string(d) + "] * " + std::to_string(strides[d]);
  const CValue value{"v" + std::to_string(index), store, let.type.shape};
  frame.body << "  const " << c_type(store) << "* " << value.name << " = (const " << c_type(store)
             << "*)W->p[" << k << "] + " << offset << "; /* " << path << " */\n";
  frame.lets[index] = value;
}

void Functions::emit_call(Frame& frame, uint32_t index) {
  const ir::Let& let = frame.function.lets[index];
  const ir::Function* callee = program_.find_function(let.attrs.callee);
  internal_assert(callee != nullptr);
  std::vector<Store> stores;
  std::vector<std::string> names;
  for (const ir::ValueRef& ref : let.operands) {
    const CValue& v = ref.kind == ir::ValueRef::Kind::Argument ? frame.arguments[ref.index]
                                                               : frame.lets[ref.index];
    stores.push_back(v.store);
    names.push_back(v.name);
  }
  const Specialization s =
      specialize(*callee, ir::join_path(frame.path, let.attrs.path), frame.depth, stores);
  const CValue value{"v" + std::to_string(index), s.result, let.type.shape};
  frame.body << "  " << c_type(s.result) << "* " << value.name << " = " << s.c_name << "(cx, W, L";
  for (const std::string& name : names) frame.body << ", " << name;
  frame.body << "); /* call " << callee->name << " */\n";
  frame.lets[index] = value;
  frame.owned[index] = true;
}

// fold: the callee once per layer, each layer's result carried to the next. The carried
// value's storage may change at the first layers (a callee whose result is typed otherwise
// than its argument); those layers are written out, the rest a loop.
void Functions::emit_fold(Frame& frame, uint32_t index) {
  const ir::Let& let = frame.function.lets[index];
  const ir::Function* callee = program_.find_function(let.attrs.callee);
  internal_assert(callee != nullptr);
  const std::string inner = ir::join_path(frame.path, let.attrs.path);
  const int64_t layers = layer_count(inner, frame.depth);
  const ir::ValueRef& x = let.operands.at(0);
  const CValue initial =
      x.kind == ir::ValueRef::Kind::Argument ? frame.arguments[x.index] : frame.lets[x.index];
  std::ostringstream& out = frame.body;
  const std::string name = "v" + std::to_string(index);
  out << "  /* fold " << callee->name << " over `" << inner << "`, " << layers << " layers */\n";
  out << "  pk_index L" << index << "[" << frame.depth + 1 << "];\n";
  for (size_t d = 0; d < frame.depth; ++d)
    out << "  L" << index << "[" << d << "] = L[" << d << "];\n";
  std::string current = initial.name;
  Store store = initial.store;
  bool owned = false;
  int64_t layer = 0;
  for (int peeled = 0; layer < layers; ++peeled) {
    const Specialization s = specialize(*callee, inner, frame.depth + 1, {store});
    if (s.result == store && peeled > 0) {  // settled: the remaining layers in a loop
      out << "  for (pk_index l = " << layer << "; l < " << layers << "; ++l) {\n    "
          << c_type(store) << "* next;\n    L" << index << "[" << frame.depth
          << "] = l;\n    next = " << s.c_name << "(cx, W, L" << index << ", " << current
          << ");\n    pk_free(cx, " << current << ");\n    " << current << " = next;\n  }\n";
      layer = layers;
      break;
    }
    if (peeled > 3) {
      user_error("E1545") << "the value `" << callee->name
                          << "` carries from layer to layer changes its type at every layer";
    }
    const std::string next = name + "_" + std::to_string(layer);
    out << "  L" << index << "[" << frame.depth << "] = " << layer << ";\n  " << c_type(s.result)
        << "* " << next << " = " << s.c_name << "(cx, W, L" << index << ", " << current << ");\n";
    if (owned) out << "  pk_free(cx, " << current << ");\n";
    current = next, store = s.result, owned = true, ++layer;
  }
  const CValue value{name, store, let.type.shape};
  if (owned) {
    out << "  " << c_type(store) << "* " << name << " = " << current << ";\n";
  } else {  // no layers: the argument handed on, in a buffer of its own
    out << allocation(value) << "  memcpy(" << name << ", " << current << ", "
        << std::max<int64_t>(element_count(value.shape), 1) << " * sizeof(" << c_type(store)
        << "));\n";
  }
  frame.lets[index] = value;
  frame.owned[index] = true;
}

}  // namespace presk::export_c
