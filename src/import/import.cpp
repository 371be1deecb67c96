// The import driver: the graph's initializers and inputs, each node through its operator's
// translator, then the outputs handed to the writer.
#include <algorithm>

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
    case onnx::TensorProto::INT32: return Kind::Z;
    case onnx::TensorProto::BOOL: return Kind::B;
    default:
      builder.fail("E1304").hint("supported: FLOAT, DOUBLE, FLOAT16, BFLOAT16 (as R), INT64, INT32 (as Z), BOOL (as B)")
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

void read_inputs(Builder& builder, const onnx::GraphProto& graph, std::map<std::string, std::string>& dims) {
  for (const onnx::TensorProto& initializer : graph.initializer()) {
    std::shared_ptr<Constant> constant = decode_tensor(initializer, "initializer");
    builder.define_value(initializer.name(), Value{"", {}, Kind::R, constant});
  }
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (builder.find(input.name()) != nullptr) continue;  // an initializer listed as an input
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
  translators().at(node.op_type())(builder);
}

}  // namespace

ImportedModel import_onnx(std::span<const uint8_t> bytes, const ImportOptions& options) {
  onnx::ModelProto model = parse_model(bytes, options.source_name);
  OpsetRead opset = canonicalize_opset(model, options.source_name);
  Builder builder(opset.read, options);
  builder.names_in_use.insert("p");
  std::map<std::string, std::string> dims;  // ONNX dim_param → presk dim
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
    if (value->kind != Kind::R) {
      user_error("E1304") << "graph output `" << output.name() << "` is not a real tensor; presk entries return reals";
    }
    if (value->expr.empty()) {
      user_error("E1311") << "graph output `" << output.name() << "` is a constant; it needs no model";
    }
    outputs.push_back({output.name(), *value});
  }
  std::vector<std::string> dim_names;
  for (const auto& [onnx_name, name] : dims) dim_names.push_back(name);
  std::sort(dim_names.begin(), dim_names.end());
  WriterInput input{options.source_name, opset.written, model.producer_name(), dim_names, outputs};
  return write_model(builder, input);
}

ImportedModel import_onnx_file(const std::string& path, const ImportOptions& options) {
  std::string bytes = read_model_file(path);
  return import_onnx({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, options);
}

}  // namespace presk::onnx_import
