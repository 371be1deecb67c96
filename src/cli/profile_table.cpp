// The per-op-kind time table (profile_table.h).
#include "cli/profile_table.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace presk::cli {
namespace {

std::vector<std::pair<std::string, exec::native::OpTime>> by_time(const exec::native::OpProfile& profile) {
  std::vector<std::pair<std::string, exec::native::OpTime>> rows(profile.begin(), profile.end());
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return x.second.seconds > y.second.seconds; });
  return rows;
}

}  // namespace

nlohmann::json profile_json(const exec::native::OpProfile& profile, size_t runs) {
  nlohmann::json rows = nlohmann::json::array();
  runs = std::max<size_t>(runs, 1);
  for (const auto& [op, time] : by_time(profile)) {
    rows.push_back({{"op", op}, {"ms_per_run", time.seconds * 1e3 / static_cast<double>(runs)}, {"calls_per_run", time.calls / runs}});
  }
  return rows;
}

void print_profile(const exec::native::OpProfile& profile, size_t runs, double total_ms, const char* unit,
                   const char* share_of) {
  runs = std::max<size_t>(runs, 1);
  std::cout << "  per op kind (ms per " << unit << ", share of " << share_of << ", calls per " << unit << "):\n";
  int width = 24;
  for (const auto& [op, time] : profile) width = std::max(width, static_cast<int>(op.size()));
  for (const auto& [op, time] : by_time(profile)) {
    std::cout << "    " << std::left << std::setw(width) << op << std::right << std::fixed << std::setprecision(3)
              << std::setw(9) << time.seconds * 1e3 / static_cast<double>(runs) << " ms " << std::setprecision(1)
              << std::setw(6) << 100 * time.seconds * 1e3 / total_ms << " %" << std::setw(7) << time.calls / runs << "\n";
  }
  std::cout << std::defaultfloat;
}

}  // namespace presk::cli
