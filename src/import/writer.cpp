// Writing the imported program and its weights (docs/import.md, "What the program looks like").
#include "import/writer.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lang/frontend.h"

namespace presk::onnx_import {
namespace {

const char* kind_letter(Kind kind) { return kind == Kind::R ? "R" : kind == Kind::Z ? "Z" : "B"; }

std::string type_text(Kind kind, const Shape& shape) {
  return shape.empty() ? kind_letter(kind) : kind_letter(kind) + shape_list(shape);
}

// The module tree of the parameters: each node a module, each leaf a tensor.
struct ModuleNode {
  std::string type_name;
  std::vector<std::pair<std::string, std::unique_ptr<ModuleNode>>> children;  // in first-use order
  std::vector<std::pair<std::string, const ParamRecord*>> leaves;
  ModuleNode* child(const std::string& name) {
    for (auto& [key, node] : children) {
      if (key == name) return node.get();
    }
    children.emplace_back(name, std::make_unique<ModuleNode>());
    return children.back().second.get();
  }
};

void name_modules(ModuleNode& node, const std::string& name, std::set<std::string>& taken) {
  std::string type = name;
  for (int k = 2; taken.count(type) > 0; ++k) type = name + "_" + std::to_string(k);
  taken.insert(type);
  node.type_name = type;
  for (auto& [key, child] : node.children) name_modules(*child, name + "_" + key, taken);
}

// Children first: a module is declared before the modules that hold it.
void write_modules(std::ostream& out, const ModuleNode& node) {
  for (const auto& [key, child] : node.children) write_modules(out, *child);
  out << "module " << node.type_name << " {\n";
  for (const auto& [key, child] : node.children) out << "  param " << key << " : " << child->type_name << "\n";
  for (const auto& [key, record] : node.leaves) {
    Shape shape;
    for (int64_t extent : record->constant->shape) shape.push_back(Extent{extent, {}});
    out << "  param " << key << " : " << type_text(Kind::R, shape) << " = zeros   # ONNX `" << printable(record->onnx_name) << "`\n";
  }
  out << "}\n\n";
}

std::string path_text(const std::vector<std::string>& path) {
  std::string text;
  for (const std::string& part : path) text += (text.empty() ? "" : ".") + part;
  return text;
}

// The lets an output needs, in program order.
std::vector<const LetLine*> needed_lets(const Builder& builder, const std::string& result) {
  std::set<std::string> wanted = {result};
  std::vector<const LetLine*> needed;
  for (auto it = builder.lets.rbegin(); it != builder.lets.rend(); ++it) {
    if (wanted.count(it->name) == 0) continue;
    needed.push_back(&*it);
    wanted.insert(it->uses.begin(), it->uses.end());
  }
  return {needed.rbegin(), needed.rend()};
}

void write_entry(std::ostream& out, const Builder& builder, const ModelOutput& output, const std::string& name) {
  out << "# The graph output `" << printable(output.onnx_name) << "`.\n";
  out << "entry " << name << "(";
  bool first = true;
  if (!builder.params.empty()) {
    out << "p : Model";
    first = false;
  }
  for (const Argument& argument : builder.arguments) {
    out << (first ? "" : ", ") << argument.name << " : " << type_text(argument.kind, argument.shape);
    first = false;
  }
  out << ") -> " << type_text(output.value.kind, output.value.shape) << " {\n";
  for (const LetLine* let : needed_lets(builder, output.value.expr)) {
    out << "  let " << let->name << " = " << let->expr << "   # " << let->comment << "\n";
  }
  out << "  " << output.value.expr << "\n}\n";
}

// Compiles the program (each dim bound to 2: numbering does not depend on extents) and
// appends to each let's line the sites it lowered to; returns site → node for the metadata.
// A program that does not compile is E1312: the import missed a check, never a file to write.
std::map<std::string, std::string> annotate_sites(std::string& program, const std::vector<std::string>& dims,
                                                   const std::string& source_name) {
  auto source = std::make_shared<SourceFile>(SourceFile{source_name + ".psk", program});
  lang::FrontendOptions options;
  for (const std::string& dim : dims) options.dims.push_back({dim, 2});
  ir::Program compiled;
  try {
    compiled = lang::compile(source, options);
  } catch (const UserError& error) {
    user_error("E1312").hint("please report it with the model; the import should have refused it earlier")
        << "the program imported from " << printable(source_name) << " does not compile: "
        << error.diagnostics().front().code << " " << error.diagnostics().front().message;
  }
  std::vector<size_t> line_starts = {0};
  for (size_t i = 0; i < program.size(); ++i) if (program[i] == '\n') line_starts.push_back(i + 1);
  std::map<size_t, std::vector<std::string>> sites_of_line;
  for (const ir::Function& function : compiled.functions) {
    for (uint32_t i = 0; i < function.lets.size(); ++i) {
      const Span& span = function.lets[i].span;
      if (!span.known()) continue;
      size_t line = std::upper_bound(line_starts.begin(), line_starts.end(), span.begin) - line_starts.begin() - 1;
      sites_of_line[line].push_back(function.site_name(i));
    }
  }
  std::map<std::string, std::string> node_of_site;
  std::string annotated;
  for (size_t line = 0; line < line_starts.size(); ++line) {
    size_t end = line + 1 < line_starts.size() ? line_starts[line + 1] - 1 : program.size();
    std::string text = program.substr(line_starts[line], end - line_starts[line]);
    auto found = sites_of_line.find(line);
    size_t comment = text.find("   # node ");
    if (found != sites_of_line.end() && comment != std::string::npos) {
      const std::vector<std::string>& sites = found->second;
      for (const std::string& site : sites) node_of_site[site] = text.substr(comment + 5);
      text += sites.size() > 1 ? "; sites " : "; site ";
      for (size_t i = 0; i < sites.size(); ++i) text += (i == 0 ? "" : ", ") + sites[i];
    }
    annotated += text + (line + 1 < line_starts.size() ? "\n" : "");
  }
  program = annotated;
  return node_of_site;
}

}  // namespace

ImportedModel write_model(const Builder& builder, const WriterInput& input) {
  ModuleNode root;
  for (const ParamRecord& record : builder.params) {
    ModuleNode* node = &root;
    for (size_t i = 0; i + 1 < record.path.size(); ++i) node = node->child(record.path[i]);
    node->leaves.emplace_back(record.path.back(), &record);
  }
  std::set<std::string> taken;
  name_modules(root, "Model", taken);

  std::ostringstream out;
  out << "# Imported from " << printable(input.source_name) << " by `presk import` (ONNX opset " << input.opset;
  if (!input.producer.empty()) out << ", produced by " << printable(input.producer);
  out << ").\n# Each `let` is one ONNX node, named after it; its comment names the node and its operator.\n";
  out << "# Every site of a let's expression belongs to that node (docs/import.md, \"Sites\").\n";
  if (!builder.params.empty()) {
    out << "# Parameters (presk path <- ONNX name); the weights file holds them under these paths:\n";
    for (const ParamRecord& record : builder.params) {
      out << "#   " << path_text(record.path) << " <- " << printable(record.onnx_name) << "\n";
    }
  }
  out << "\n";
  if (!input.dims.empty()) {
    out << "dim ";
    for (size_t i = 0; i < input.dims.size(); ++i) out << (i == 0 ? "" : ", ") << input.dims[i];
    out << "\n\n";
  }
  if (!builder.params.empty()) write_modules(out, root);
  std::set<std::string> entries;
  for (size_t i = 0; i < input.outputs.size(); ++i) {
    std::string name = sanitize(input.outputs[i].onnx_name);
    std::string unique = name;
    for (int k = 2; entries.count(unique) > 0; ++k) unique = name + "_" + std::to_string(k);
    entries.insert(unique);
    if (i > 0) out << "\n";
    write_entry(out, builder, input.outputs[i], unique);
  }

  ImportedModel model;
  model.program = out.str();
  std::map<std::string, std::string> node_of_site = annotate_sites(model.program, input.dims, input.source_name);
  nlohmann::json names = nlohmann::json::object();
  for (const ParamRecord& record : builder.params) {
    names[path_text(record.path)] = record.onnx_name;
    const Constant& constant = *record.constant;
    model.weights.push_back({path_text(record.path), weight_type(constant), constant.shape, record.constant});
  }
    // Names that are not UTF-8 are written with U+FFFD in place of the bad bytes.
  const auto replace = nlohmann::json::error_handler_t::replace;
  model.metadata["presk:onnx_names"] = names.dump(-1, ' ', false, replace);
  model.metadata["presk:onnx_sites"] = nlohmann::json(node_of_site).dump(-1, ' ', false, replace);
  model.metadata["presk:onnx_model"] = nlohmann::json(input.source_name).dump(-1, ' ', false, replace);
  return model;
}

}  // namespace presk::onnx_import
