// The import driver: the graph's initializers and inputs, each node through its operator's
// translator, then the outputs handed to the writer.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "import/builder.h"
#include "import/onnx_import.h"
#include "import/onnx_reader.h"
#include "import/opset.h"
#include "import/writer.h"

namespace presk::onnx_import {
namespace {

const std::map<std::string, Translator>& translators() {
  static const std::map<std::string, Translator> table = [] {
    std::map<std::string, Translator> made;
    add_elementwise_translators(made);
    add_contraction_translators(made);
    add_layout_translators(made);
    add_conv_translators(made);
    add_activation_translators(made);
    add_reduce_translators(made);
    add_quant_translators(made);
    add_select_translators(made);
    add_resize_translators(made);
    add_math_translators(made);
    add_scatter_translators(made);
    add_integer_translators(made);
    add_cast_translators(made);
    add_einsum_translators(made);
    add_group_norm_translators(made);
    return made;
  }();
  return table;
}

std::string supported_list() {
  std::string list;
  for (const auto& [name, translator] : translators()) list += (list.empty() ? "" : ", ") + name;
  std::string at_import;
  for (const std::string& name : import_time_operators()) {
    if (translators().count(name) == 0) at_import += (at_import.empty() ? "" : ", ") + name;
  }
  return list + " (and com.microsoft Gelu); at import, on constants and shapes: " + at_import;
}

Kind kind_of(Builder& builder, int data_type, const std::string& name) {
  switch (data_type) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: return Kind::R;
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::UINT8: return Kind::Z;
    case onnx::TensorProto::BOOL: return Kind::B;
    default:
      builder.fail("E1304").hint("supported: FLOAT, DOUBLE, FLOAT16, BFLOAT16 (as R), INT64, INT32, INT16, INT8, UINT32, UINT16, UINT8 (as Z), BOOL (as B)")
          << "graph input `" << name << "` has the unsupported element type " << data_type_name(data_type);
  }
  return Kind::R;
}

// A graph input's extent: a number, a --dim binding, or a symbolic dim.
Extent input_extent(Builder& builder, const onnx::TensorShapeProto::Dimension& dimension,
                    const std::string& input, size_t axis, std::map<std::string, std::string>& dims) {
  if (dimension.has_dim_value() && dimension.dim_value() > 0 && dimension.dim_value() <= (int64_t{1} << 40)) {
    return Extent{dimension.dim_value(), {}};
  }
  if (dimension.has_dim_param() && !dimension.dim_param().empty()) {
    auto bound = builder.options.dims.find(dimension.dim_param());
    if (bound != builder.options.dims.end()) return Extent{bound->second, {}};
    auto [it, fresh] = dims.emplace(dimension.dim_param(), "");
    if (fresh) it->second = builder.fresh_name(dimension.dim_param());
    return Extent{1, {it->second}};
  }
  builder.fail("E1307").hint("give the axis a name when exporting (dynamic_axes) or a size")
      << "axis " << axis << " of graph input `" << input << "` has neither a positive size nor a name";
  return {};
}

// --fix-input NAME=FILE: the graph input NAME becomes an initializer holding the tensor in FILE,
// which must have the input's element type and an extent equal to each of its numbered axes
// (E1338); a name that is no graph input, or one an initializer already holds, is E1339.
void fix_inputs(onnx::GraphProto& graph, const ImportOptions& options) {
  for (const auto& fixed : options.fixed_inputs) {
    const std::string& name = fixed.first;  // not a structured binding: lambdas capture it (clang 14)
    const std::string& file = fixed.second;
    auto input = std::find_if(graph.input().begin(), graph.input().end(),
                              [&](const onnx::ValueInfoProto& in) { return in.name() == name; });
    auto initialized = [&](const std::string& wanted) {
      return std::any_of(graph.initializer().begin(), graph.initializer().end(),
                         [&](const onnx::TensorProto& t) { return t.name() == wanted; });
    };
    if (input == graph.input().end() || initialized(name)) {
      std::string names;
      for (const onnx::ValueInfoProto& in : graph.input()) {
        if (!initialized(in.name())) names += (names.empty() ? "" : ", ") + printable(in.name());
      }
      user_error("E1339").hint("the model's graph inputs: " + (names.empty() ? std::string("none") : names))
          << "--fix-input " << printable(name) << " names no graph input of the model that is not an initializer";
    }
    onnx::TensorProto tensor = read_tensor_file(file);
    tensor.set_name(name);
    const onnx::TypeProto::Tensor& declared = input->type().tensor_type();
    bool fits = declared.elem_type() == tensor.data_type();
    if (declared.has_shape()) {
      fits = fits && declared.shape().dim_size() == tensor.dims_size();
      for (int axis = 0; fits && axis < tensor.dims_size(); ++axis) {
        const auto& dimension = declared.shape().dim(axis);
        fits = !dimension.has_dim_value() || dimension.dim_value() == tensor.dims(axis);
      }
    }
    if (!fits) {
      Shape given;
      for (int64_t extent : tensor.dims()) given.push_back(Extent{extent, {}});
      user_error("E1338").hint("give a tensor of the input's element type and shape (the model declares " +
                               std::string(data_type_name(declared.elem_type())) + ", rank " +
                               std::to_string(declared.shape().dim_size()) + ")")
          << "--fix-input " << printable(name) << ": `" << printable(file) << "` holds "
          << data_type_name(tensor.data_type()) << " " << shape_list(given) << ", which the graph input does not take";
    }
    *graph.add_initializer() = std::move(tensor);
  }
}

void read_inputs(Builder& builder, const onnx::GraphProto& graph, std::map<std::string, std::string>& dims) {
  for (const onnx::TensorProto& initializer : graph.initializer()) {
    std::shared_ptr<Constant> constant = decode_tensor(initializer, "initializer", builder.tensor_source);
    builder.define_value(initializer.name(), Value{"", {}, Kind::R, constant});
  }
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (builder.find(input.name()) != nullptr) continue;  // an initializer listed as an input (or fixed)
    if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) {
      builder.fail("E1304") << "graph input `" << input.name() << "` is not a tensor of known rank";
    }
    const onnx::TypeProto::Tensor& tensor = input.type().tensor_type();
    Argument argument{builder.fresh_name(input.name()), input.name(), {}, kind_of(builder, tensor.elem_type(), input.name())};
    for (int axis = 0; axis < tensor.shape().dim_size(); ++axis) {
      argument.shape.push_back(input_extent(builder, tensor.shape().dim(axis), input.name(), axis, dims));
    }
    check_element_count(builder, argument.shape, "graph input `" + input.name() + "`");
    builder.arguments.push_back(argument);
    builder.define_value(input.name(), Value{argument.name, argument.shape, argument.kind, nullptr});
  }
  for (const auto& [name, extent] : builder.options.dims) {
    std::set<std::string> names;
    for (const onnx::ValueInfoProto& input : graph.input()) {
      for (const auto& dimension : input.type().tensor_type().shape().dim()) {
        if (!dimension.dim_param().empty()) names.insert(dimension.dim_param());
      }
    }
    std::string symbolic;
    for (const std::string& dim : names) symbolic += (symbolic.empty() ? "" : ", ") + printable(dim);
    if (names.count(name) == 0) {
      user_error("E1310").hint(symbolic.empty() ? "the model's inputs have no symbolic dimensions"
                                                : "the model's symbolic dimensions: " + symbolic)
          << "--dim " << printable(name) << "=" << extent << " names no symbolic dimension of the model's inputs";
    }
  }
}

std::string qualified_name(const onnx::NodeProto& node) {
  std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  return (domain.empty() ? "" : domain + ".") + node.op_type();
}

bool has_translator(const onnx::NodeProto& node) {
  std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  return translators().count(node.op_type()) > 0 && (domain.empty() || (domain == "com.microsoft" && node.op_type() == "Gelu"));
}

bool is_import_time(const onnx::NodeProto& node) {
  return (node.domain().empty() || node.domain() == "ai.onnx") && import_time_operators().count(node.op_type()) > 0;
}

// Every operator of the graph that presk does not import, in one E1302 before translating:
// each with its count and its first node.
void check_operators(const onnx::GraphProto& graph) {
  std::vector<std::string> order;
  std::map<std::string, std::pair<int, std::string>> missing;  // operator → count, first node
  for (const onnx::NodeProto& node : graph.node()) {
    if (has_translator(node) || is_import_time(node)) continue;
    auto [it, fresh] = missing.emplace(qualified_name(node), std::make_pair(0, node.name()));
    if (fresh) order.push_back(it->first);
    ++it->second.first;
  }
  if (missing.empty()) return;
  std::string list;
  for (const std::string& name : order) {
    const auto& [count, first] = missing.at(name);
    list += (list.empty() ? "" : ", ") + printable(name) + " (" + std::to_string(count) +
            (count == 1 ? " node: \"" : " nodes, the first \"") + printable(first) + "\")";
  }
  user_error("E1302").hint("rewrite these operators with supported ones before exporting; supported: " + supported_list())
      << order.size() << (order.size() == 1 ? " operator" : " operators") << " of the model "
      << (order.size() == 1 ? "is" : "are") << " not supported: " << list;
}

// --strip-qdq: each QuantizeLinear whose codes only DequantizeLinear nodes read (and no graph
// output is) becomes the identity, and so do those DequantizeLinear nodes; a Clip of the codes
// between them (torch's export of a narrowed range) is part of the pair. Returns the codes' names:
// the QuantizeLinear outputs and those Clips' outputs.
std::set<std::string> stripped_quantize(const onnx::GraphProto& graph) {
  std::map<std::string, std::string> pair_of;  // codes → the QuantizeLinear output they come from
  std::map<std::string, bool> only_dequantized;
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() == "QuantizeLinear" && node.output_size() > 0) {
      pair_of[node.output(0)] = node.output(0);
      only_dequantized[node.output(0)] = true;
    } else if (node.op_type() == "Clip" && node.input_size() > 0 && node.output_size() > 0 &&
               pair_of.count(node.input(0)) > 0) {
      pair_of[node.output(0)] = pair_of.at(node.input(0));
    }
  }
  for (const onnx::NodeProto& node : graph.node()) {
    for (int i = 0; i < node.input_size(); ++i) {
      auto it = pair_of.find(node.input(i));
      if (it == pair_of.end() || i != 0) continue;
      const bool clip = node.op_type() == "Clip" && pair_of.count(node.output(0)) > 0;
      if (node.op_type() != "DequantizeLinear" && !clip) only_dequantized[it->second] = false;
    }
    for (int i = 1; i < node.input_size(); ++i) {
      if (pair_of.count(node.input(i)) > 0) only_dequantized[pair_of.at(node.input(i))] = false;
    }
  }
  for (const onnx::ValueInfoProto& output : graph.output()) {
    auto it = pair_of.find(output.name());
    if (it != pair_of.end()) only_dequantized[it->second] = false;
  }
  std::set<std::string> stripped;
  for (const auto& [codes, quantized] : pair_of) {
    if (only_dequantized.at(quantized)) stripped.insert(codes);
  }
  return stripped;
}

// The integer type of each integer output the graph does not state (integer Add and Sub wrap at
// it): a Cast's `to`, OneHot's values', else that of the node's first integer operand.
void record_integer_types(Builder& builder, const onnx::NodeProto& node) {
  for (const std::string& output : node.output()) {
    const Value* value = builder.find(output);
    if (output.empty() || builder.element_types.count(output) > 0 || value == nullptr || value->kind != Kind::Z) continue;
    if (node.op_type() == "Cast") {
      builder.element_types[output] = static_cast<int>(builder.int_attribute("to", 0));
      continue;
    }
    for (int i = node.op_type() == "OneHot" ? 2 : 0; i < node.input_size(); ++i) {
      auto type = builder.element_types.find(node.input(i));
      const Value* operand = builder.find(node.input(i));
      if (type != builder.element_types.end() && operand != nullptr && operand->kind == Kind::Z) {
        builder.element_types[output] = type->second;
        break;
      }
    }
  }
}

void translate_node(Builder& builder, const onnx::NodeProto& node) {
  builder.node = &node;
  if (node.output_size() == 0) {
    builder.fail("E1309").hint("export the model again; run the ONNX checker") << "the node has no outputs";
  }
  if (node.op_type() == "Clip" && builder.stripped_quantize.count(node.output(0)) > 0) {
    return builder.define(0, builder.raw_input(0));  // --strip-qdq: part of a Q/DQ pair
  }
  if (is_import_time(node) && fold_node(builder)) return;
  if (!has_translator(node)) {  // an import-time operator (check_operators) given run-time data
    int index = 0;
    for (int i = 0; i < node.input_size(); ++i) {
      if (builder.has_input(i) && !builder.raw_input(i).expr.empty()) index = i;
    }
    builder.fail("E1314").hint("presk evaluates this operator at import only, on constants and shapes")
        << "operand " << index << " (`" << printable(node.input(index)) << "`) is computed from run-time data";
  }
  check_integer_reals(builder, node);
  translators().at(node.op_type())(builder);
  record_integer_types(builder, node);
  mark_integer_reals(builder, node);
}

// The element types the graph states: its inputs, value_info, outputs, initializers and
// Constant nodes (a value without one is absent).
std::map<std::string, int> declared_types(const onnx::GraphProto& graph) {
  std::map<std::string, int> types;
  for (const auto* infos : {&graph.input(), &graph.value_info(), &graph.output()}) {
    for (const onnx::ValueInfoProto& info : *infos) {
      if (info.type().tensor_type().elem_type() != 0) types[info.name()] = info.type().tensor_type().elem_type();
    }
  }
  for (const onnx::TensorProto& tensor : graph.initializer()) types[tensor.name()] = tensor.data_type();
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() == "Constant" && node.output_size() == 1 && node.attribute_size() == 1 &&
        node.attribute(0).has_t()) {
      types[node.output(0)] = node.attribute(0).t().data_type();
    }
  }
  return types;
}

// CastLike(x, like) whose `like` has a type the graph states (a graph input, an initializer, a
// Constant, a value_info) is Cast(x, to = that type); `like` is read for its type only.
void castlike_to_cast(onnx::GraphProto& graph, const std::map<std::string, int>& types) {
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    if (node.op_type() != "CastLike" || !(node.domain().empty() || node.domain() == "ai.onnx") ||
        node.input_size() != 2) {
      continue;
    }
    auto type = types.find(node.input(1));
    if (type == types.end() || type->second == 0) continue;  // E1302 names it
    node.set_op_type("Cast");
    node.mutable_input()->RemoveLast();
    onnx::AttributeProto* to = node.add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(type->second);
  }
}

// A graph output known at import (the Shape of an input of static shape, a Constant): an entry
// that returns it, its values a parameter (integers as reals, exact when |v| ≤ 2^24, as f32
// holds them; E1311 beyond), booleans a mask as every BOOL constant is.
Value constant_output(Builder& builder, const std::string& name, const Value& value) {
  const Constant& constant = *value.constant;
  if (constant.element_count() == 0) {
    user_error("E1311").hint("presk has no empty tensors") << "graph output `" << printable(name) << "` is an empty constant";
  }
  auto held = std::make_shared<Constant>(constant);
  if (!constant.is_float() && !constant.is_bool()) {
    for (double v : constant.values()) {
      if (!(std::fabs(v) <= 16777216.0)) {
        user_error("E1311").hint("compute the output from the model's inputs, or read it from the model")
            << "graph output `" << printable(name) << "` is a constant integer beyond 2^24 (" << v
            << "), which an entry returns only rounded";
      }
    }
    held->data_type = onnx::TensorProto::FLOAT;
  }
  onnx::NodeProto holder;  // the lets of a BOOL constant name the output
  holder.set_name(name);
  holder.set_op_type("Constant");
  holder.add_output(name);
  builder.node = &holder;
  Value made = builder.materialize(*held, /*as_parameter=*/true);
  builder.node = nullptr;
  return made;
}

// Held by a shared pointer: the constants of its initializers point into it, until the
// weights are written.
ImportedModel import_parsed(const std::shared_ptr<onnx::ModelProto>& held, const ImportOptions& options) {
  onnx::ModelProto& model = *held;
  ExternalData external(options.folder);
  external.check_all(model);
  fix_inputs(*model.mutable_graph(), options);
  OpsetRead opset = canonicalize_opset(model, options.source_name, external);
  Builder builder(opset.read, options);
  builder.tensor_source = {held, &external};
  builder.names_in_use.insert("p");
  std::map<std::string, std::string> dims;  // ONNX dim_param → presk dim
  builder.element_types = declared_types(model.graph());
  castlike_to_cast(*model.mutable_graph(), builder.element_types);
  check_operators(model.graph());
  if (options.strip_qdq) builder.stripped_quantize = stripped_quantize(model.graph());
  read_inputs(builder, model.graph(), dims);
  for (const onnx::NodeProto& node : model.graph().node()) translate_node(builder, node);
  builder.node = nullptr;
  if (model.graph().output_size() == 0) user_error("E1311") << "the model's graph has no outputs";
  std::vector<ModelOutput> outputs;
  for (const onnx::ValueInfoProto& output : model.graph().output()) {
    const Value* value = builder.find(output.name());
    if (value == nullptr) user_error("E1311") << "graph output `" << output.name() << "` is computed by no node";
    outputs.push_back({output.name(), value->expr.empty() ? constant_output(builder, output.name(), *value) : *value});
  }
  std::vector<std::string> dim_names;
  for (const auto& [onnx_name, name] : dims) dim_names.push_back(name);
  std::sort(dim_names.begin(), dim_names.end());
  WriterInput input{options.source_name, opset.written, model.producer_name(), dim_names, outputs};
  return write_model(builder, input);
}

}  // namespace

ImportedModel import_onnx(std::span<const uint8_t> bytes, const ImportOptions& options) {
  return import_parsed(std::make_shared<onnx::ModelProto>(parse_model(bytes, options.source_name)), options);
}

ImportedModel import_onnx_file(const std::string& path, const ImportOptions& options) {
  ImportOptions with_folder = options;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  with_folder.folder = parent.empty() ? std::string(".") : parent.string();
  return import_parsed(std::make_shared<onnx::ModelProto>(parse_model_file(path, options.source_name)), with_folder);
}

}  // namespace presk::onnx_import
