// The static element counts of footprint.h.
#include "ir/footprint.h"

#include "ir/cotangent_stream.h"

#include <algorithm>
#include <string>
#include <limits>
#include <map>

namespace presk::ir {
namespace {

void add(uint64_t& total, int64_t elements) {
  const auto count = static_cast<uint64_t>(elements < 0 ? 0 : elements);
  total = count > std::numeric_limits<uint64_t>::max() - total ? std::numeric_limits<uint64_t>::max() : total + count;
}

uint64_t sum(uint64_t a, uint64_t b) { return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max() : a + b; }

uint64_t elements(const Type& type) { return static_cast<uint64_t>(std::max<int64_t>(type.element_count(), 0)); }

// A contraction spec without its spaces.
std::string text_of(const std::string& spec) {
  std::string text;
  for (char c : spec) if (c != ' ') text += c;
  return text;
}

// A transient copy of operand `ref` of let `reader`: the operand whole, or for a parameter read in
// place (footprint.h) a contraction's tile and its packed rows, an embed's nothing.
uint64_t transient(const Function& function, const Let& reader, const ValueRef& ref, bool params_in_place) {
  if (ref.kind != ValueRef::Kind::Let) return elements(function.argument_types.at(ref.index));
  const uint64_t whole = elements(function.lets[ref.index].type);
  if (!params_in_place || !read_in_place(function, ref.index)) return whole;
  if (reader.op == Op::embed) return 0;
  // A tile holds about kInPlaceTileElements, at least one index of its letter (all the others).
  const Type& type = function.lets[ref.index].type;
  const int operand = reader.operands.at(0) == ref ? 0 : 1;
  const std::string spec = text_of(reader.attrs.spec);
  const std::string own = operand == 0 ? spec.substr(0, spec.find(',')) : spec.substr(spec.find(',') + 1, spec.find("->") - spec.find(',') - 1);
  uint64_t per_index = 0;
  for (char c : tile_letters(reader.attrs.spec, operand)) {
    const int64_t extent = type.shape.at(own.find(c));
    per_index = std::max(per_index, extent > 0 ? whole / static_cast<uint64_t>(extent) : 0);
  }
  return 2 * std::min(whole, sum(static_cast<uint64_t>(kInPlaceTileElements), per_index));
}

// What peak_of needs besides the function: the program, the options, and the peaks so far by
// function and the results of it that stream (cotangent_stream.h; empty: none).
struct Peaks {
  const Program& program;
  bool gets_share, params_in_place;
  std::map<std::pair<const Function*, std::vector<uint8_t>>, uint64_t> memo;
};

// Each let's elements held and the last let that holds it (n: to the function's end): a let
// nothing reads, or a result, is held to the end; a streamed cotangent only while it is made.
struct Lifetimes {
  std::vector<uint64_t> size;
  std::vector<size_t> last;
};

Lifetimes lifetimes(const Peaks& peaks, const Function& function, const CotangentStream& stream) {
  const size_t n = function.lets.size();
  Lifetimes out{std::vector<uint64_t>(n, 0), std::vector<size_t>(n, 0)};
  for (size_t j = 0; j < n; ++j) {
    out.last[j] = j;
    for (const ValueRef& ref : function.lets[j].operands) {
      if (ref.kind == ValueRef::Kind::Let) out.last[ref.index] = std::max(out.last[ref.index], j);
    }
  }
  for (size_t j = 0; j < n; ++j) {
    if (out.last[j] == j) out.last[j] = n;  // a let nothing reads: held to the end
  }
  for (const ValueRef& ref : function.results) {
    if (ref.kind == ValueRef::Kind::Let) out.last[ref.index] = n;  // returned
  }
  for (size_t j = 0; j < n; ++j) {
    const Let& let = function.lets[j];
    // A shared `get` (the native executor's) hands on its tuple's element: nothing new. A
    // parameter read in place holds nothing of its own. A tuple holds no streamed element.
    const bool none = (peaks.gets_share && let.op == Op::get) ||
                      (peaks.params_in_place && read_in_place(function, static_cast<uint32_t>(j)));
    out.size[j] = none ? 0 : elements(let.type);
    const std::vector<uint8_t> no_finals, &streamed = stream.callee_finals.empty() ? no_finals : stream.callee_finals[j];
    for (size_t k = 0; k < streamed.size(); ++k) {
      if (streamed[k]) out.size[j] -= std::min(out.size[j], elements(let.type.elements.at(k)));
    }
    if (!stream.emits.empty() && stream.emits[j]) out.last[j] = j;  // handed on and freed at once
  }
  return out;
}

uint64_t peak_of(Peaks& peaks, const Function& function, const std::vector<uint8_t>& finals);

// While let j runs beside `held` (its own elements among them): the let and an observer's
// binary64 copy of it, or a callee's peak in its place, and transient copies.
uint64_t peak_at(Peaks& peaks, const Function& function, size_t j, uint64_t held, uint64_t own,
                 const CotangentStream& stream) {
  const Let& let = function.lets[j];
  const Function* callee = is_calling(let.op) ? peaks.program.find_function(let.attrs.callee) : nullptr;
  const bool in_place = peaks.params_in_place && read_in_place(function, static_cast<uint32_t>(j));
  const std::vector<uint8_t> no_finals, &callee_finals = stream.callee_finals.empty() ? no_finals : stream.callee_finals[j];
  // (A get of a streamed cotangent hands on nothing: no copy; a tuple holds its own elements.)
  bool streamed = false;
  if (let.op == Op::get && !stream.callee_finals.empty() && let.operands.at(0).kind == ValueRef::Kind::Let) {
    const std::vector<uint8_t>& element = stream.callee_finals[let.operands[0].index];
    const auto k = static_cast<size_t>(let.attrs.axes.at(0));
    streamed = k < element.size() && element[k];
  }
  uint64_t at = sum(held, in_place || streamed ? 0 : let.type.is_tuple() ? own : elements(let.type));
  if (let.op == Op::call && callee != nullptr) {
    // The callee's results become the let (moved, not copied; an argument returned is
    // copied): while it runs, the let is not yet there and the callee holds its own peak.
    uint64_t running = sum(held - std::min(held, own), peak_of(peaks, *callee, callee_finals));
    for (const ValueRef& ref : callee->results) {
      if (ref.kind == ValueRef::Kind::Argument) running = sum(running, elements(callee->argument_types.at(ref.index)));
    }
    return std::max(at, running);
  }
  if (let.op == Op::get) return at;
  // Transient copies while let j runs: an operation's converted or packed operands, or an
  // observer's binary64 copies of its operands (precision/native_sweep.cpp).
  for (const ValueRef& ref : let.operands) at = sum(at, transient(function, let, ref, peaks.params_in_place));
  if (callee != nullptr) {  // a fold: the layer's peak, its carry and slices beside the stack
    at = sum(at, peak_of(peaks, *callee, callee_finals));
    for (const Type& argument : callee->argument_types) at = sum(at, elements(argument));
    if (!callee_finals.empty() && let.type.elements.size() > 1 && !let.type.elements[1].shape.empty()) {
      // A fold_vjp that streams keeps each layer's carry for its second pass.
      const Type& carry = callee->argument_types.back();
      at = sum(at, elements(carry) * static_cast<uint64_t>(std::max<int64_t>(let.type.elements[1].shape[0], 0)));
    }
  }
  return at;
}

// The peak of footprint.h of `function` with `finals` streamed, memoised (functions are
// callees before callers, so the recursion ends; a missing callee counts as nothing more).
uint64_t peak_of(Peaks& peaks, const Function& function, const std::vector<uint8_t>& finals) {
  const auto key = std::make_pair(&function, finals);
  if (auto found = peaks.memo.find(key); found != peaks.memo.end()) return found->second;
  peaks.memo[key] = std::numeric_limits<uint64_t>::max();  // a cycle, were there one: no bound
  const CotangentStream stream = finals.empty() ? CotangentStream{} : cotangent_stream(function, finals);
  const Lifetimes lives = lifetimes(peaks, function, stream);
  const size_t n = function.lets.size();
  // held[j]: the lets alive while let j is computed, by a difference array over [birth, last].
  std::vector<uint64_t> born(n + 1, 0), died(n + 2, 0);
  for (size_t j = 0; j < n; ++j) {
    born[j] = sum(born[j], lives.size[j]);
    died[lives.last[j] + 1] = sum(died[lives.last[j] + 1], lives.size[j]);
  }
  uint64_t held = 0, peak = 0;
  for (size_t j = 0; j < n; ++j) {
    held = sum(held, born[j]) - std::min(sum(held, born[j]), died[j]);
    peak = std::max(peak, peak_at(peaks, function, j, held, lives.size[j], stream));
  }
  peaks.memo[key] = peak;
  return peak;
}

}  // namespace

std::string tile_letters(const std::string& spec, int operand) {
  const std::string text = text_of(spec);
  const size_t comma = text.find(','), arrow = text.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || comma > arrow) return "";
  const std::string x = text.substr(0, comma), w = text.substr(comma + 1, arrow - comma - 1), out = text.substr(arrow + 2);
  const std::string& own = operand == 0 ? x : w;
  const std::string& other = operand == 0 ? w : x;
  std::string letters;
  for (char c : own) {
    const bool once = std::count(own.begin(), own.end(), c) == 1;
    if (once && other.find(c) == std::string::npos && out.find(c) != std::string::npos) letters += c;
  }
  return letters;
}

bool read_in_place(const Function& function, uint32_t index) {
  const Let& let = function.lets.at(index);
  if (let.op != Op::param || let.type.kind != ElemKind::Real) return false;
  for (const ValueRef& ref : function.results) {
    if (ref == ValueRef::let(index)) return false;
  }
  bool read = false;
  for (size_t j = index + 1; j < function.lets.size(); ++j) {
    const Let& reader = function.lets[j];
    for (size_t k = 0; k < reader.operands.size(); ++k) {
      if (reader.operands[k] != ValueRef::let(index)) continue;
      read = true;
      if (reader.op == Op::embed && k == 0) continue;
      if (reader.op != Op::contract || reader.operands.size() != 2) return false;
      const ValueRef other = reader.operands[1 - k];
      const bool other_param = other.kind == ValueRef::Kind::Let && function.lets[other.index].op == Op::param;
      if (other_param || other == reader.operands[k] || tile_letters(reader.attrs.spec, static_cast<int>(k)).empty()) {
        return false;
      }
    }
  }
  return read;
}

Footprint footprint(const Program& program, const Function* entry, bool gets_share, bool params_in_place,
                    bool streams_cotangents) {
  Footprint result;
  for (const Function& function : program.functions) {
    for (const Let& let : function.lets) add(result.let_elements, let.type.element_count());
  }
  for (const Param& param : program.params) add(result.param_elements, param.type.element_count());
  if (entry != nullptr) {
    Peaks peaks{program, gets_share, params_in_place, {}};
    // Callees before callers: each function's peak from its callees' memoised ones, so a chain
    // of calls thousands deep recurses one level, not its depth.
    for (const Function& function : program.functions) peak_of(peaks, function, {});
    const std::vector<uint8_t> finals = streams_cotangents ? parameter_results(program, *entry) : std::vector<uint8_t>{};
    result.peak_let_elements = peak_of(peaks, *entry, finals);
    for (ValueRef value : entry->results) add(result.result_elements, entry->type_of(value).element_count());
  }
  return result;
}

}  // namespace presk::ir
