// Available memory and the estimate's refusal (memory.h).
#include "support/memory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <fstream>
#include <limits>
#include <sstream>

#include "support/diagnostics.h"
#include "support/input_file.h"

namespace presk {
namespace {

std::optional<uint64_t> digits_of(const std::string& text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoull(text);
}

std::optional<uint64_t> meminfo_available() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key, amount, unit;
    fields >> key >> amount >> unit;
    if (key != "MemAvailable:") continue;
    auto kib = digits_of(amount);
    if (kib && unit == "kB") return saturating_product(*kib, 1024);
  }
  return std::nullopt;
}

}  // namespace

uint64_t saturating_product(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return std::numeric_limits<uint64_t>::max();
  return a * b;
}

uint64_t saturating_sum(uint64_t a, uint64_t b) {
  return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max() : a + b;
}

namespace {

std::optional<uint64_t> machine_available() {
  if (auto bytes = meminfo_available()) return bytes;
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page_size = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) return saturating_product(uint64_t(pages), uint64_t(page_size));
  return std::nullopt;
}

// PRESK_MEMORY_LIMIT: a byte count (digits, or digits and K, M or G for 2^10, 2^20, 2^30).
std::optional<uint64_t> memory_limit() {
  const char* text = std::getenv("PRESK_MEMORY_LIMIT");
  if (text == nullptr || *text == '\0') return std::nullopt;
  std::string digits(text);
  uint64_t unit = 1;
  const char last = digits.back();
  if (last == 'K' || last == 'M' || last == 'G') {
    unit = uint64_t{1} << (last == 'K' ? 10 : last == 'M' ? 20 : 30);
    digits.pop_back();
  }
  const std::optional<uint64_t> count = digits_of(digits);
  if (!count || *count == 0) {
    user_error("E1402").hint("a positive byte count: PRESK_MEMORY_LIMIT=16G (or 16384M, 17179869184), or unset it")
        << "PRESK_MEMORY_LIMIT is `" << text << "`, not a byte count";
  }
  return saturating_product(*count, unit);
}

}  // namespace

std::optional<uint64_t> available_memory() {
  const std::optional<uint64_t> machine = machine_available(), limit = memory_limit();
  if (machine && limit) return std::min(*machine, *limit);
  return machine ? machine : limit;
}

// PRESK_MEMORY_ESTIMATE: `refuse` (unset: the default) or `warn`.
bool estimate_only_warns() {
  const char* text = std::getenv("PRESK_MEMORY_ESTIMATE");
  if (text == nullptr || *text == '\0' || std::string(text) == "refuse") return false;
  if (std::string(text) == "warn") return true;
  user_error("E1605").hint("PRESK_MEMORY_ESTIMATE=warn runs past a too-large estimate with a warning; "
                           "PRESK_MEMORY_ESTIMATE=refuse (or unset) refuses it (E0017)")
      << "PRESK_MEMORY_ESTIMATE is `" << text << "`, not `refuse` or `warn`";
  return false;
}

void check_memory(uint64_t needed, const std::string& what, const std::string& hint) {
  const bool warn = estimate_only_warns();
  const std::optional<uint64_t> available = available_memory();
  if (!available || needed <= *available) return;
  if (warn) {
    std::cerr << "warning[E0017]: " << what << " needs about " << byte_count_text(needed)
              << " of memory by its estimate (an upper bound); the machine has " << byte_count_text(*available)
              << " available; running anyway (PRESK_MEMORY_ESTIMATE=warn)" << std::endl;
    return;
  }
  user_error("E0017").hint(hint + "; or PRESK_MEMORY_ESTIMATE=warn to run past the estimate, an upper bound")
      << what << " needs about " << byte_count_text(needed) << " of memory; the machine has "
      << byte_count_text(*available) << " available";
}

}  // namespace presk
