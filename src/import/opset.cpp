// Every opset from kMinOpset to kMaxOpset read as one: older models through ONNX's version
// converter (libonnx's onnx::version_conversion), newer ones by rewriting, node by node, the
// forms that opsets 18 … 21 changed into their opset-17 forms (the converter of Debian's ONNX
// 1.12 does not know them). Opsets 19 … 21 otherwise only added types presk does not import.
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <exception>
#include <map>
#include <set>

#include "import/builder.h"
#include "import/onnx_reader.h"
#include "import/opset.h"

namespace presk::onnx_import {
namespace {

// The operators whose axes became an operand at 18 (ReduceSum's did at 13).
const std::set<std::string> kReduceAxesOperand18 = {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                                                    "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd",
                                                    "ReduceSumSquare"};

std::string node_label(const onnx::NodeProto& node) {
  return "node \"" + printable(node.name().empty() && node.output_size() > 0 ? node.output(0) : node.name()) +
         "\" (" + node.op_type() + ")";
}

[[noreturn]] void no_opset17_form(const onnx::NodeProto& node, int opset, const std::string& what) {
  user_error("E1334").hint("export with an opset between 6 and 17, or without the form")
      << node_label(node) << " of opset " << opset << ": " << what << " has no opset-17 form presk translates";
}

const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

void remove_attribute(onnx::NodeProto& node, const std::string& name) {
  auto* attributes = node.mutable_attribute();
  for (int i = 0; i < attributes->size(); ++i) {
    if (attributes->Get(i).name() == name) {
      attributes->DeleteSubrange(i, 1);
      return;
    }
  }
}

// The constant integer vectors of the graph (initializers and Constant nodes' `value`), by name.
std::map<std::string, const onnx::TensorProto*> constants(const onnx::GraphProto& graph) {
  std::map<std::string, const onnx::TensorProto*> made;
  for (const onnx::TensorProto& tensor : graph.initializer()) made[tensor.name()] = &tensor;
  for (const onnx::NodeProto& node : graph.node()) {
    const onnx::AttributeProto* value = attribute(node, "value");
    if (node.op_type() == "Constant" && node.output_size() == 1 && value != nullptr && value->has_t()) {
      made[node.output(0)] = &value->t();
    }
  }
  return made;
}

// A Reduce* of opset 18 with its axes an operand: the axes as the attribute of opset 17.
void reduce_axes_to_attribute(onnx::NodeProto& node, int opset,
                              const std::map<std::string, const onnx::TensorProto*>& known,
                              const ExternalData& external) {
  const onnx::AttributeProto* noop = attribute(node, "noop_with_empty_axes");
  bool has_axes = node.input_size() > 1 && !node.input(1).empty();
  if (noop != nullptr && noop->i() != 0 && !has_axes) no_opset17_form(node, opset, "noop_with_empty_axes=1");
  remove_attribute(node, "noop_with_empty_axes");
  if (!has_axes) return;  // every axis, as in opset 17
  auto axes = known.find(node.input(1));
  if (axes == known.end()) no_opset17_form(node, opset, "axes computed at run time");
  std::shared_ptr<Constant> values = decode_tensor(*axes->second, node_label(node), {nullptr, &external});
  if (values->element_count() == 0) {
    if (noop != nullptr && noop->i() != 0) no_opset17_form(node, opset, "noop_with_empty_axes=1");
  } else {
    onnx::AttributeProto* made = node.add_attribute();
    made->set_name("axes");
    made->set_type(onnx::AttributeProto::INTS);
    for (double axis : values->values()) made->add_ints(static_cast<int64_t>(axis));
  }
  node.mutable_input()->DeleteSubrange(1, node.input_size() - 1);
}

void node_to_opset17(onnx::NodeProto& node, int opset, const std::map<std::string, const onnx::TensorProto*>& known,
                     const ExternalData& external) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return;
  const std::string& op = node.op_type();
  if (kReduceAxesOperand18.count(op)) {
    reduce_axes_to_attribute(node, opset, known, external);
  } else if (op == "Split") {
    // num_outputs (18) is the number of outputs; opset 17's Split without sizes splits equally
    // (an extent that does not split equally is refused by the translator, E1303).
    remove_attribute(node, "num_outputs");
  } else if (op == "Pad" && node.input_size() > 3 && !node.input(3).empty()) {
    no_opset17_form(node, opset, "Pad's axes operand");
  } else if (op == "Resize") {
    const onnx::AttributeProto* antialias = attribute(node, "antialias");
    const onnx::AttributeProto* policy = attribute(node, "keep_aspect_ratio_policy");
    const onnx::AttributeProto* mode = attribute(node, "coordinate_transformation_mode");
    if (antialias != nullptr && antialias->i() != 0) no_opset17_form(node, opset, "Resize's antialias");
    if (attribute(node, "axes") != nullptr) no_opset17_form(node, opset, "Resize's axes");
    if (policy != nullptr && policy->s() != "stretch") no_opset17_form(node, opset, "keep_aspect_ratio_policy");
    if (mode != nullptr && mode->s() == "half_pixel_symmetric") no_opset17_form(node, opset, "half_pixel_symmetric");
    remove_attribute(node, "antialias");
    remove_attribute(node, "keep_aspect_ratio_policy");
  } else if ((op == "ScatterElements" || op == "ScatterND")) {
    const onnx::AttributeProto* reduction = attribute(node, "reduction");
    if (reduction != nullptr && (reduction->s() == "max" || reduction->s() == "min")) {
      no_opset17_form(node, opset, "reduction=" + reduction->s());
    }
  }
}

// Why ONNX's version converter cannot read the model, before it tries: a node outside the
// default domain, or an operator with no schema at the model's opset. Empty when none.
std::string unconvertible(const onnx::GraphProto& graph, int opset) {
  // The converter assumes a well-formed graph (it dereferences a value no one makes): every
  // operand made before its node, each value made once, every graph output made.
  std::set<std::string> made;
  for (const onnx::ValueInfoProto& input : graph.input()) made.insert(input.name());
  for (const onnx::TensorProto& initializer : graph.initializer()) made.insert(initializer.name());
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& input : node.input()) {
      if (!input.empty() && made.count(input) == 0) return node_label(node) + " reads a value made by no node before it";
    }
    for (const std::string& output : node.output()) {
      if (!output.empty() && !made.insert(output).second) return node_label(node) + " makes a value made before";
    }
  }
  for (const onnx::ValueInfoProto& output : graph.output()) {
    if (made.count(output.name()) == 0) return "graph output `" + printable(output.name()) + "` is made by no node";
  }
  for (const onnx::NodeProto& node : graph.node()) {
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      return node_label(node) + " is of the domain " + node.domain() + ", which the converter does not convert";
    }
    if (onnx::OpSchemaRegistry::Schema(node.op_type(), opset, "") == nullptr) {
      return node_label(node) + ": " + node.op_type() + " is not an operator of opset " + std::to_string(opset);
    }
  }
  return {};
}

[[noreturn]] void cannot_convert(const std::string& name, int opset, const std::string& reason) {
  user_error("E1333").hint("convert the model with onnx.version_converter.convert_version(model, 17) and check it")
      << "`" << name << "` uses opset " << opset << ", older than the " << kOldestTranslated
      << " presk translates as written, and ONNX's version converter cannot bring it to " << kCanonicalOpset
      << ": " << reason;
}

void set_default_opset(onnx::ModelProto& model, int opset) {
  for (onnx::OperatorSetIdProto& entry : *model.mutable_opset_import()) {
    if (entry.domain().empty() || entry.domain() == "ai.onnx") entry.set_version(opset);
  }
}

}  // namespace

OpsetRead canonicalize_opset(onnx::ModelProto& model, const std::string& name, const ExternalData& external) {
  int opset = default_opset(model, name);
  if (opset > kCanonicalOpset) {
    std::map<std::string, const onnx::TensorProto*> known = constants(model.graph());
    for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) node_to_opset17(node, opset, known, external);
    set_default_opset(model, kCanonicalOpset);
    return {opset, kCanonicalOpset};
  }
  // Opsets 9 … 16 are read as written: the translators know their forms, and ONNX's shape
  // inference, which the converter needs, crashes on some malformed models (a fuzzer finding in
  // libonnx 1.12), so only the opsets that need it (6 … 8) go through it.
  if (opset >= kOldestTranslated) return {opset, opset};
  std::string reason = unconvertible(model.graph(), opset);
  if (reason.empty()) {
    try {
      // The converter's adapters read operand shapes: ONNX's shape inference first (with data
      // propagation, for shapes computed by Shape … Reshape), on a copy whose value_info is
      // dropped after.
      external.load_into(model);  // the converter keeps no external references
      onnx::ModelProto inferred = model;
      onnx::ShapeInferenceOptions options{false, 0, true};
      onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(), options);
      onnx::ModelProto converted = onnx::version_conversion::ConvertVersion(inferred, kCanonicalOpset);
      *converted.mutable_graph()->mutable_value_info() = model.graph().value_info();
      model = std::move(converted);
      return {opset, kCanonicalOpset};
    } catch (const std::exception& e) {
      reason = e.what();
      reason = reason.substr(0, reason.find('\n'));
    }
  }
  if (opset < kOldestTranslated) cannot_convert(name, opset, reason);
  return {opset, opset};  // the translators read opsets 9 … 16 as written too
}

}  // namespace presk::onnx_import
