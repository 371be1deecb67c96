// The generated functions: lets in order (only those a result depends on, as the executor
// runs them), each owned buffer freed after its last reader; parameters are views into the
// loaded weights at the context's layer; call and fold call the callee's specialization.
#include "export/c_functions.h"

#include <algorithm>

#include "support/diagnostics.h"

namespace presk::export_c {

// Who holds a buffer: the frame (`owned`: freed after its last reader), a writable argument (a
// cache written in place: `argument`), or nobody here (a parameter's view, a read-only argument).
struct Holder {
  bool owned = false;
  int argument = -1;
};

struct Functions::Frame {
  const ir::Function& function;
  std::string path;
  size_t depth;
  std::vector<CValue> arguments;
  std::vector<bool> writable;  // per argument
  std::vector<CValue> lets;
  std::vector<bool> owned;
  std::vector<int> alias;  // per let: the writable argument it is, or -1
  std::vector<std::vector<CValue>> tuples;
  std::vector<std::vector<Holder>> tuple_holders;
  std::ostringstream body;

  const CValue& value(ir::ValueRef ref) const {
    return ref.kind == ir::ValueRef::Kind::Argument ? arguments[ref.index] : lets[ref.index];
  }
  // Whether the buffer may be written: this frame's own, or an argument written in place.
  bool is_writable(ir::ValueRef ref) const {
    return ref.kind == ir::ValueRef::Kind::Argument ? writable[ref.index] : owned[ref.index] || alias[ref.index] >= 0;
  }
  // Whether `ref` has one reader in the function (results count), so writing it harms no other.
  bool sole_reader(ir::ValueRef ref) const {
    size_t readers = static_cast<size_t>(std::count(function.results.begin(), function.results.end(), ref));
    for (const ir::Let& let : function.lets) readers += static_cast<size_t>(std::count(let.operands.begin(), let.operands.end(), ref));
    return readers == 1;
  }
  // The holder of `ref`'s buffer handed on to a new value (the reader wrote it in place).
  Holder hand_on(ir::ValueRef ref) {
    if (ref.kind == ir::ValueRef::Kind::Argument) return {false, static_cast<int>(ref.index)};
    const Holder holder{owned[ref.index], alias[ref.index]};
    owned[ref.index] = false;
    return holder;
  }
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
                   const std::vector<Store>& arguments, const std::vector<bool>& writable) {
  std::string key = function.name + "|" + path + "|" + std::to_string(depth);
  for (size_t k = 0; k < arguments.size(); ++k) key += std::string("|") + store_name(arguments[k]) + (writable[k] ? "w" : "");
  return key;
}

[[noreturn]] void unsupported_scan(const ir::Function& callee) {
  user_error("E1547").hint("export a decode entry whose caches are each written once, in place, by one cache_write")
      << "`presk export c` covers a scan whose further results are its stacked operands written in place; `"
      << callee.name << "`'s are not";
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
  // Integer weights are held as their codes and scales, read as their meanings f32(q·s).
  if (const exec::native::QuantSpec* quant = realization_.param_quant(param.path)) return quant->bits == 8 ? Store::q8 : Store::q4;
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
                                     size_t depth, const std::vector<Store>& arguments,
                                     const std::vector<bool>& writable_in) {
  const std::vector<bool> writable = writable_in.empty() ? std::vector<bool>(arguments.size(), false) : writable_in;
  const std::string key = key_of(function, path, depth, arguments, writable);
  if (auto it = done_.find(key); it != done_.end()) return it->second;
  const size_t n = function.lets.size();
  Frame frame{function, path, depth, {}, writable, std::vector<CValue>(n), std::vector<bool>(n, false),
              std::vector<int>(n, -1), std::vector<std::vector<CValue>>(n), std::vector<std::vector<Holder>>(n), {}};
  for (size_t k = 0; k < arguments.size(); ++k) {
    frame.arguments.push_back(
        {"a" + std::to_string(k), arguments[k], function.argument_types[k].shape});
  }
  const std::vector<bool> live = live_lets(function);
  const std::vector<std::vector<uint32_t>> released = releases(function);
  for (uint32_t i = 0; i < n; ++i) {
    if (!live[i]) continue;
    emit_let(frame, i);
    for (uint32_t dead : released[i]) {
      if (frame.owned[dead]) frame.body << "  pk_free(cx, " << frame.lets[dead].name << ");\n";
    }
  }
  Specialization own{"f" + std::to_string(done_.size()), Store::f32, {}, {}};
  const std::string returned = return_text(frame, own);
  std::ostringstream text;
  text << "/* " << function.name << (path.empty() ? "" : " in `" + path + "`") << " */\n"
       << "static " << c_type(own.result) << "* " << own.c_name
       << "(pk_context* cx, const pk_weights* W, const pk_index* L";
  for (size_t k = 0; k < frame.arguments.size(); ++k) {
    text << ", " << (writable[k] ? "" : "const ") << c_type(frame.arguments[k].store) << "* " << frame.arguments[k].name;
  }
  text << (function.results.size() > 1 ? ", void** rest" : "") << ") {\n  (void)W;\n  (void)L;\n"
       << frame.body.str() << returned << "}\n\n";
  definitions_ += text.str();
  done_[key] = own;
  return own;
}

// Each result: a buffer of this frame's (handed to the caller), a writable argument (written in
// place: the caller's own buffer), or else copied into a buffer of its own.
std::string Functions::return_text(Frame& frame, Specialization& own) {
  std::ostringstream out;
  std::vector<std::string> names;
  for (size_t j = 0; j < frame.function.results.size(); ++j) {
    const ir::ValueRef ref = frame.function.results[j];
    const CValue& value = frame.value(ref);
    const bool is_let = ref.kind == ir::ValueRef::Kind::Let;
    int alias = -1;
    if (is_let && frame.alias[ref.index] >= 0) alias = frame.alias[ref.index];
    if (!is_let && frame.writable[ref.index]) alias = static_cast<int>(ref.index);
    own.aliases.push_back(alias);
    if (alias >= 0 || (is_let && frame.owned[ref.index])) {
      own.results.push_back(value.store);
      names.push_back(value.name);
      continue;
    }
    const int64_t count = std::max<int64_t>(element_count(value.shape), 1);
    if (is_quantized(value.store)) {  // integer weights returned: their meanings, as f32
      const CValue copy{"r" + std::to_string(j), Store::f32, value.shape};
      own.results.push_back(copy.store);
      out << allocation(copy) << "  { pk_index i; for (i = 0; i < " << count << "; ++i) " << copy.name
          << "[i] = " << read_at(value, "i") << "; }\n";
      names.push_back(copy.name);
      continue;
    }
    own.results.push_back(value.store);
    const CValue copy{"r" + std::to_string(j), value.store, value.shape};
    out << allocation(copy) << "  memcpy(" << copy.name << ", " << value.name << ", " << count << " * sizeof("
        << c_type(value.store) << "));\n";
    names.push_back(copy.name);
  }
  own.result = own.results.at(0);
  for (size_t j = 1; j < names.size(); ++j) out << "  rest[" << j - 1 << "] = " << names[j] << ";\n";
  out << "  return " << names[0] << ";\n";
  return out.str();
}

void Functions::emit_let(Frame& frame, uint32_t index) {
  const ir::Let& let = frame.function.lets[index];
  if (let.op == ir::Op::param) return emit_param(frame, index);
  if (let.op == ir::Op::call) return emit_call(frame, index);
  if (let.op == ir::Op::fold || let.op == ir::Op::scan) return emit_fold(frame, index);
  if (let.op == ir::Op::get) return emit_get(frame, index);
  if (let.op == ir::Op::cache_write) return emit_cache_write_let(frame, index);
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
  if (is_quantized(store)) {  // a view: the codes and scales, from the layer's first element
    frame.body << "  const pk_qview " << value.name << "_view = {(const pk_qweights*)W->p[" << k << "], " << offset
               << "};\n  const pk_qview* " << value.name << " = &" << value.name << "_view; /* " << path << ", "
               << store_name(store) << " */\n";
  } else {
    frame.body << "  const " << c_type(store) << "* " << value.name << " = (const " << c_type(store) << "*)W->p[" << k
               << "] + " << offset << "; /* " << path << " */\n";
  }
  frame.lets[index] = value;
}

void Functions::emit_call(Frame& frame, uint32_t index) {
  const ir::Let& let = frame.function.lets[index];
  const ir::Function* callee = program_.find_function(let.attrs.callee);
  internal_assert(callee != nullptr);
  std::vector<Store> stores;
  std::vector<bool> writable;
  std::vector<std::string> names;
  for (const ir::ValueRef& ref : let.operands) {
    stores.push_back(frame.value(ref).store);
    writable.push_back(frame.is_writable(ref) && frame.sole_reader(ref));
    names.push_back(frame.value(ref).name);
  }
  const Specialization s =
      specialize(*callee, ir::join_path(frame.path, let.attrs.path), frame.depth, stores, writable);
  const std::string name = "v" + std::to_string(index);
  const bool tuple = let.type.is_tuple();
  if (tuple) frame.body << "  void* " << name << "_rest[" << s.results.size() - 1 << "];\n";
  frame.body << "  " << c_type(s.result) << "* " << name << (tuple ? "_0" : "") << " = " << s.c_name << "(cx, W, L";
  for (const std::string& n : names) frame.body << ", " << n;
  frame.body << (tuple ? ", " + name + "_rest" : "") << "); /* call " << callee->name << " */\n";
  // A result written in place is its operand's buffer, held as that operand was.
  auto holder = [&](size_t j) {
    return s.aliases[j] >= 0 ? frame.hand_on(let.operands[static_cast<size_t>(s.aliases[j])]) : Holder{true, -1};
  };
  if (!tuple) {
    const Holder h = holder(0);
    frame.lets[index] = CValue{name, s.result, let.type.shape};
    frame.owned[index] = h.owned, frame.alias[index] = h.argument;
    return;
  }
  for (size_t j = 0; j < s.results.size(); ++j) {
    const std::string element = name + "_" + std::to_string(j);
    if (j > 0) {
      frame.body << "  " << c_type(s.results[j]) << "* " << element << " = (" << c_type(s.results[j]) << "*)" << name
                 << "_rest[" << j - 1 << "];\n";
    }
    frame.tuples[index].push_back(CValue{element, s.results[j], let.type.elements[j].shape});
    frame.tuple_holders[index].push_back(holder(j));
  }
}

// get: a tuple's element, handed on with its holder (a second get of it reads it only).
void Functions::emit_get(Frame& frame, uint32_t index) {
  const ir::Let& let = frame.function.lets[index];
  const uint32_t tuple = let.operands.at(0).index;
  const auto element = static_cast<size_t>(let.attrs.axes.at(0));
  frame.lets[index] = frame.tuples.at(tuple).at(element);
  Holder& holder = frame.tuple_holders[tuple][element];
  frame.owned[index] = holder.owned, frame.alias[index] = holder.argument;
  holder = Holder{};
}

// cache_write: in place when the cache is writable, read by it alone and of the site's type
// (exec/native's rule); else into a copy in the site's type.
void Functions::emit_cache_write_let(Frame& frame, uint32_t index) {
  const ir::Let& let = frame.function.lets[index];
  const std::string site_name = frame.function.site_name(index);
  const RealType site = realization_.site_type(site_name);
  const ir::ValueRef cache = let.operands.at(0);
  LetCode code{let, site_name, {}, {}, site, realization_.order, frame.body};
  for (const ir::ValueRef& ref : let.operands) code.operands.push_back(frame.value(ref));
  const bool in_place = frame.is_writable(cache) && frame.sole_reader(cache) && frame.value(cache).store == store_of(site);
  code.result = CValue{"v" + std::to_string(index), store_of(site), let.type.shape};
  frame.body << "  /* " << site_name << " = cache_write : " << store_name(code.result.store) << ir::shape_text(let.type.shape)
             << (in_place ? ", in place */\n  " : " */\n");
  if (in_place) {
    frame.body << c_type(code.result.store) << "* " << code.result.name << " = " << frame.value(cache).name << ";\n";
  } else {
    frame.body << allocation(code.result);
  }
  emit_cache_write(code, in_place);
  const Holder holder = in_place ? frame.hand_on(cache) : Holder{true, -1};
  frame.lets[index] = code.result;
  frame.owned[index] = holder.owned, frame.alias[index] = holder.argument;
}

// fold and scan: the callee once per layer, each layer's result carried to the next. The carried
// value's storage may change at the first layers (a callee whose result is typed otherwise
// than its argument); those layers are written out, the rest a loop. A scan also passes its
// other operands, a stacked one as the layer's slice; its further results must be those slices
// written in place (a decode step's caches), so the stacks are the operands themselves.
void Functions::emit_fold(Frame& frame, uint32_t index) {
  const ir::Let& let = frame.function.lets[index];
  const ir::Function* callee = program_.find_function(let.attrs.callee);
  internal_assert(callee != nullptr);
  const std::string inner = ir::join_path(frame.path, let.attrs.path);
  const int64_t layers = layer_count(inner, frame.depth);
  const CValue initial = frame.value(let.operands.at(0));
  const std::vector<int64_t>& stacked = let.attrs.axes;
  const bool scan = let.op == ir::Op::scan;
  for (const ir::ValueRef& ref : let.operands) {
    if (!is_quantized(frame.value(ref).store)) continue;
    user_error("E1549").hint("read the parameter inside the folded function (a `param` of its module)")
        << "`presk export c` does not pass integer weights (" << store_name(frame.value(ref).store) << ") to `"
        << ir::op_name(let.op) << " " << callee->name << "` as an operand";
  }
  std::vector<Store> stores{initial.store};
  std::vector<bool> writable{false};
  for (size_t k = 1; k < let.operands.size(); ++k) {
    const bool is_stacked = std::find(stacked.begin(), stacked.end(), static_cast<int64_t>(k)) != stacked.end();
    stores.push_back(frame.value(let.operands[k]).store);
    writable.push_back(is_stacked && frame.is_writable(let.operands[k]) && frame.sole_reader(let.operands[k]));
  }
  // The operands after the carried one at layer `l` (a C expression).
  auto further = [&](const std::string& l) {
    std::string text;
    for (size_t k = 1; k < let.operands.size(); ++k) {
      const CValue& v = frame.value(let.operands[k]);
      const bool is_stacked = std::find(stacked.begin(), stacked.end(), static_cast<int64_t>(k)) != stacked.end();
      const int64_t layer_size = v.shape.empty() ? 0 : element_count(v.shape) / std::max<int64_t>(v.shape[0], 1);
      text += ", " + (is_stacked ? "(" + std::string(c_type(v.store)) + "*)" + v.name + " + " + l + " * " + std::to_string(layer_size) : v.name);
    }
    return text + (scan ? ", v" + std::to_string(index) + "_rest" : "");
  };
  std::ostringstream& out = frame.body;
  const std::string name = "v" + std::to_string(index);
  out << "  /* " << ir::op_name(let.op) << " " << callee->name << " over `" << inner << "`, " << layers << " layers */\n";
  out << "  pk_index L" << index << "[" << frame.depth + 1 << "];\n";
  if (scan) out << "  void* " << name << "_rest[" << callee->results.size() - 1 << "];\n";
  for (size_t d = 0; d < frame.depth; ++d)
    out << "  L" << index << "[" << d << "] = L[" << d << "];\n";
  std::string current = initial.name;
  Store store = initial.store;
  bool owned = false;
  int64_t layer = 0;
  std::vector<int> aliases;  // a scan's: which operand each further result is
  std::vector<Store> last_stores;
  for (int peeled = 0; layer < layers; ++peeled) {
    stores[0] = store;
    const Specialization s = specialize(*callee, inner, frame.depth + 1, stores, writable);
    aliases = s.aliases, last_stores = s.results;
    for (size_t j = 1; scan && j < s.aliases.size(); ++j) {
      if (s.aliases[j] >= 0 && writable[static_cast<size_t>(s.aliases[j])]) continue;
      if (!probe_) unsupported_scan(*callee);
      aliases.assign(s.aliases.size(), -1);
      last_stores = s.results;
    }
    if (s.result == store && peeled > 0) {  // settled: the remaining layers in a loop
      out << "  for (pk_index l = " << layer << "; l < " << layers << "; ++l) {\n    "
          << c_type(store) << "* next;\n    L" << index << "[" << frame.depth
          << "] = l;\n    next = " << s.c_name << "(cx, W, L" << index << ", " << current << further("l")
          << ");\n    pk_free(cx, " << current << ");\n    " << current << " = next;\n  }\n";
      layer = layers;
      break;
    }
    if (peeled > 3) {
      user_error("E1545") << "the value `" << callee->name
                          << "` carries from layer to layer changes its type at every layer";
    }
    const std::string next = name + "_layer" + std::to_string(layer);
    out << "  L" << index << "[" << frame.depth << "] = " << layer << ";\n  " << c_type(s.result)
        << "* " << next << " = " << s.c_name << "(cx, W, L" << index << ", " << current << further(std::to_string(layer)) << ");\n";
    if (owned) out << "  pk_free(cx, " << current << ");\n";
    current = next, store = s.result, owned = true, ++layer;
  }
  const CValue value{scan ? name + "_0" : name, store, scan ? let.type.elements[0].shape : let.type.shape};
  if (owned) {
    out << "  " << c_type(store) << "* " << value.name << " = " << current << ";\n";
  } else {  // no layers: the argument handed on, in a buffer of its own
    out << allocation(value) << "  memcpy(" << value.name << ", " << current << ", "
        << std::max<int64_t>(element_count(value.shape), 1) << " * sizeof(" << c_type(store)
        << "));\n";
  }
  if (!scan) {
    frame.lets[index] = value;
    frame.owned[index] = true;
    return;
  }
  if (layers > 0) out << "  (void)" << name << "_rest;\n";
  scan_results(frame, index, value, aliases, last_stores);
}

// A scan's tuple: the carried value, then each stack (its operand, written in place).
void Functions::scan_results(Frame& frame, uint32_t index, const CValue& carried, const std::vector<int>& aliases,
                             const std::vector<Store>& stores) {
  const ir::Let& let = frame.function.lets[index];
  const ir::Function& callee = *program_.find_function(let.attrs.callee);
  frame.tuples[index].push_back(carried);
  frame.tuple_holders[index].push_back(Holder{true, -1});
  for (size_t j = 1; j < callee.results.size(); ++j) {
    if (aliases.empty() || aliases[j] < 0) {  // a probe's (or no layers): the type only
      if (!probe_) unsupported_scan(callee);
      frame.tuples[index].push_back(CValue{"v" + std::to_string(index) + "_" + std::to_string(j),
                                           stores.empty() ? carried.store : stores[j], {}});
      frame.tuple_holders[index].push_back(Holder{});
      continue;
    }
    const ir::ValueRef operand = let.operands.at(static_cast<size_t>(aliases[j]));
    frame.tuples[index].push_back(frame.value(operand));
    frame.tuple_holders[index].push_back(frame.hand_on(operand));
  }
}

}  // namespace presk::export_c
