// The site table (ir/sites.h): every let by its stable name, every parameter by its path,
// as aligned columns for people and as JSON for tools.
#include "ir/sites.h"

#include <algorithm>
#include <sstream>

namespace presk::ir {
namespace {

// Rows of cells printed in columns, each as wide as its widest cell; `right` marks the
// columns aligned right (numbers).
std::string columns(const std::vector<std::vector<std::string>>& rows,
                    const std::vector<bool>& right) {
  std::vector<size_t> width(right.size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::ostringstream out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      std::string pad(width[i] - row[i].size(), ' ');
      line += (i ? "  " : "") + (right[i] ? pad + row[i] : row[i] + pad);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  }
  return out.str();
}

int64_t parameter_elements(const Program& program) {
  int64_t total = 0;
  for (const Param& param : program.params) total += param.type.element_count();
  return total;
}

nlohmann::json type_json(const Type& type) {
  return {
      {"type", type_to_string(type)}, {"shape", type.shape}, {"elements", type.element_count()}};
}

}  // namespace

std::vector<Site> site_table(const Program& program) {
  std::vector<Site> sites;
  for (const Function& function : program.functions) {
    for (uint32_t i = 0; i < function.lets.size(); ++i) {
      const Let& let = function.lets[i];
      sites.push_back(Site{function.site_name(i), function.name, i, let.op, let.type,
                           let.type.element_count()});
    }
  }
  return sites;
}

std::string print_site_table(const Program& program) {
  std::vector<Site> sites = site_table(program);
  std::vector<std::vector<std::string>> rows = {{"site", "op", "type", "elements"}};
  int64_t site_elements = 0;
  for (const Site& site : sites) {
    rows.push_back({site.name, op_name(site.op), type_to_string(site.type),
                    std::to_string(site.element_count)});
    site_elements += site.element_count;
  }
  std::string text = columns(rows, {false, false, false, true});
  rows = {{"parameter", "type", "elements", "stack", "init"}};
  for (const Param& param : program.params) {
    rows.push_back({param.path, type_to_string(param.type),
                    std::to_string(param.type.element_count()), std::to_string(param.stack_depth),
                    initializer_to_string(param.init)});
  }
  text += '\n' + columns(rows, {false, false, true, true, false});
  std::ostringstream totals;
  totals << "\ntotals: " << sites.size() << " sites, " << site_elements << " elements; "
         << program.params.size() << " parameters, " << parameter_elements(program)
         << " elements\n";
  return text + totals.str();
}

nlohmann::json site_table_json(const Program& program) {
  nlohmann::json sites = nlohmann::json::array();
  int64_t site_elements = 0;
  for (const Site& site : site_table(program)) {
    nlohmann::json row = type_json(site.type);
    row["name"] = site.name;
    row["function"] = site.function;
    row["let"] = site.let_index;
    row["op"] = op_name(site.op);
    sites.push_back(std::move(row));
    site_elements += site.element_count;
  }
  nlohmann::json params = nlohmann::json::array();
  for (const Param& param : program.params) {
    nlohmann::json row = type_json(param.type);
    row["path"] = param.path;
    row["stack_depth"] = param.stack_depth;
    row["init"] = initializer_to_string(param.init);
    params.push_back(std::move(row));
  }
  nlohmann::json totals = {{"sites", sites.size()},
                           {"site_elements", site_elements},
                           {"params", params.size()},
                           {"param_elements", parameter_elements(program)}};
  return {
      {"sites", std::move(sites)}, {"params", std::move(params)}, {"totals", std::move(totals)}};
}

}  // namespace presk::ir
