// `presk tensors FILE.safetensors`: lists a file's tensors (name, type, shape, first values)
// and its metadata, as a table or as one JSON object.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "support/safetensors.h"

namespace presk::cli {
namespace {

struct TensorsOptions {
  std::string path;
  int values = 6;  // first values shown per tensor
};

// Shortest text that reads back as the same value of the tensor's type (integers exactly, not
// through a double).
std::string format_value(const SafetensorsFile& file, const SafetensorsEntry& entry, uint64_t index) {
  if (!facts(entry.type).is_float) return fmt::format("{}", file.integer(entry, index));
  const double value = file.value(entry, index);
  if (std::isnan(value)) return "nan";
  if (entry.type == ElementType::f64) return fmt::format("{}", value);
  return fmt::format("{}", static_cast<float>(value));  // f32 and bf16 values are floats
}

uint64_t shown_count(const SafetensorsEntry& entry, int values) {
  return std::min<uint64_t>(entry.element_count, static_cast<uint64_t>(values));
}

// Non-finite values are strings ("nan", "inf", "-inf"): JSON has no number for them.
nlohmann::json json_value(const SafetensorsFile& file, const SafetensorsEntry& entry, uint64_t index) {
  if (!facts(entry.type).is_float) return file.integer(entry, index);
  const double value = file.value(entry, index);
  if (!std::isfinite(value)) return format_value(file, entry, index);
  return value;
}

nlohmann::json file_as_json(const SafetensorsFile& file, int values) {
  nlohmann::json tensors = nlohmann::json::array();
  for (const SafetensorsEntry& entry : file.entries()) {
    nlohmann::json shown = nlohmann::json::array();
    for (uint64_t i = 0; i < shown_count(entry, values); ++i) {
      shown.push_back(json_value(file, entry, i));
    }
    nlohmann::json row = {{"name", entry.name},
                          {"dtype", type_name(entry.type)},
                          {"file_dtype", entry.file_dtype},
                          {"shape", entry.shape},
                          {"elements", entry.element_count},
                          {"bytes", entry.end - entry.begin},
                          {"values", shown}};
    if (!entry.axis_names.empty()) row["axes"] = entry.axis_names;
    tensors.push_back(std::move(row));
  }
  return {{"file", file.name()},
          {"bytes", file.file_size()},
          {"metadata", file.metadata()},
          {"tensors", tensors}};
}

std::string shape_text(const SafetensorsEntry& entry) {
  if (entry.axis_names.empty()) return format_shape(entry.shape);
  std::string text = "[";
  for (size_t i = 0; i < entry.shape.size(); ++i) {
    text += fmt::format("{}{}={}", i == 0 ? "" : ", ", entry.axis_names[i], entry.shape[i]);
  }
  return text + "]";
}

void print_table(const SafetensorsFile& file, int values) {
  std::cout << fmt::format("{}: {} tensors, {} bytes{}\n", file.name(), file.entries().size(),
                           file.file_size(), file.is_memory_mapped() ? " (mapped)" : "");
  size_t name_width = 4, shape_width = 5;
  for (const SafetensorsEntry& entry : file.entries()) {
    name_width = std::max(name_width, entry.name.size());
    shape_width = std::max(shape_width, shape_text(entry).size());
  }
  std::cout << fmt::format("{:<{}}  {:<5}  {:<{}}  values\n", "name", name_width, "dtype", "shape",
                           shape_width);
  for (const SafetensorsEntry& entry : file.entries()) {
    std::string shown;
    for (uint64_t i = 0; i < shown_count(entry, values); ++i) {
      shown += i == 0 ? "" : ", ";
      shown += format_value(file, entry, i);
    }
    if (shown_count(entry, values) < entry.element_count) {
      shown += shown.empty() ? "..." : ", ...";
    }
    std::cout << fmt::format("{:<{}}  {:<5}  {:<{}}  {}\n", entry.name, name_width,
                             type_name(entry.type), shape_text(entry), shape_width, shown);
  }
  if (!file.metadata().empty()) std::cout << "metadata:\n";
  for (const auto& [key, text] : file.metadata()) std::cout << "  " << key << ": " << text << "\n";
}

Registration registration("tensors", 80, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<TensorsOptions>();
  CLI::App* command = app.add_subcommand("tensors", "List the tensors of a safetensors file");
  command->add_option("FILE", options->path, "A .safetensors file")->required();
  command->add_option("--values", options->values, "First values shown per tensor")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  add_json_option(*command, global);
  return [options, &global] {
    SafetensorsFile file = SafetensorsFile::open(options->path);
    if (global.json) {
      std::cout << file_as_json(file, options->values).dump(2) << std::endl;
    } else {
      print_table(file, options->values);
    }
    return 0;
  };
});

}  // namespace
}  // namespace presk::cli
