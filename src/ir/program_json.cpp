// The IR as JSON (ir/program_json.h): the same fields as the printed form, with values
// written "%3" / "$0" and types both as text and as shape + axis names.
#include "ir/program_json.h"

#include "ir/printed_form.h"

namespace presk::ir {
namespace {

nlohmann::json type_json(const Type& type) {
  nlohmann::json json = {
      {"kind", elem_kind_name(type.kind)}, {"shape", type.shape}, {"text", type_text(type)}};
  if (!type.axes.empty()) json["axes"] = type.axes;
  return json;
}

nlohmann::json attrs_json(const Attrs& attrs) {
  nlohmann::json json = nlohmann::json::object();
  if (!attrs.axes.empty()) json["axes"] = attrs.axes;
  if (!attrs.starts.empty()) json["starts"] = attrs.starts;
  if (!attrs.stops.empty()) json["stops"] = attrs.stops;
  if (!attrs.literal.empty()) json["literal"] = attrs.literal;
  if (!attrs.spec.empty()) json["spec"] = attrs.spec;
  if (!attrs.callee.empty()) json["callee"] = attrs.callee;
  if (!attrs.path.empty()) json["path"] = attrs.path;
  if (attrs.rate != 0) json["rate"] = attrs.rate;
  return json;
}

nlohmann::json function_json(const Function& function) {
  nlohmann::json arguments = nlohmann::json::array();
  for (size_t i = 0; i < function.argument_types.size(); ++i) {
    std::string name = i < function.argument_names.size() ? function.argument_names[i] : "";
    arguments.push_back({{"name", name}, {"type", type_json(function.argument_types[i])}});
  }
  nlohmann::json lets = nlohmann::json::array();
  for (uint32_t i = 0; i < function.lets.size(); ++i) {
    const Let& let = function.lets[i];
    nlohmann::json operands = nlohmann::json::array();
    for (ValueRef operand : let.operands) operands.push_back(value_ref_text(operand));
    lets.push_back({{"site", function.site_name(i)},
                    {"op", op_name(let.op)},
                    {"operands", operands},
                    {"attrs", attrs_json(let.attrs)},
                    {"type", type_json(let.type)}});
  }
  nlohmann::json results = nlohmann::json::array();
  for (ValueRef result : function.results) results.push_back(value_ref_text(result));
  return {{"name", function.name},
          {"module", function.module},
          {"entry", function.is_entry},
          {"arguments", arguments},
          {"lets", lets},
          {"results", results}};
}

}  // namespace

nlohmann::json program_json(const Program& program) {
  nlohmann::json params = nlohmann::json::array();
  for (const Param& param : program.params) {
    params.push_back({{"path", param.path},
                      {"type", type_json(param.type)},
                      {"init", initializer_to_string(param.init)},
                      {"stack_depth", param.stack_depth}});
  }
  nlohmann::json functions = nlohmann::json::array();
  for (const Function& function : program.functions) functions.push_back(function_json(function));
  nlohmann::json consts = nlohmann::json::object();
  for (const auto& [name, value] : program.consts) consts[name] = value;
  nlohmann::json dims = nlohmann::json::object();
  for (const auto& [name, value] : program.dims) dims[name] = value;
  return {{"format", 1},
          {"consts", consts},
          {"dims", dims},
          {"params", params},
          {"functions", functions}};
}

}  // namespace presk::ir
