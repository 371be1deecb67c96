// The readers of each value (readers.h).
#include "solve/readers.h"

#include <utility>
#include <vector>

#include "exec/native/realization.h"

namespace presk::solve {
namespace {

class ReaderSearch {
 public:
  explicit ReaderSearch(const ir::Program& program) : program_(program) {
    for (const ir::Function& function : program.functions) {
      for (uint32_t i = 0; i < function.lets.size(); ++i) {
        const ir::Let& let = function.lets[i];
        if (ir::is_calling(let.op)) callers_[let.attrs.callee].push_back({&function, i});
      }
    }
  }

  // The typable sites that read `value` of `function`, through calls, folds and results.
  const std::set<std::string>& readers(const ir::Function& function, ir::ValueRef value) {
    const Key key{function.name, value.kind == ir::ValueRef::Kind::Let, value.index};
    if (auto found = memo_.find(key); found != memo_.end()) return found->second;
    std::set<std::string>& out = memo_[key];  // empty while being computed: cycles end here
    std::set<std::string> found;
    collect(function, value, found);
    out = std::move(found);
    return out;
  }

 private:
  struct Key {
    std::string function;
    bool is_let;
    uint32_t index;
    bool operator<(const Key& o) const {
      return std::tie(function, is_let, index) < std::tie(o.function, o.is_let, o.index);
    }
  };
  struct Caller {
    const ir::Function* function;
    uint32_t let;
  };

  void collect(const ir::Function& function, ir::ValueRef value, std::set<std::string>& out) {
    for (uint32_t j = 0; j < function.lets.size(); ++j) {
      const ir::Let& let = function.lets[j];
      for (size_t p = 0; p < let.operands.size(); ++p) {
        if (!(let.operands[p] == value)) continue;
        if (ir::is_calling(let.op)) {
          const ir::Function* callee = program_.find_function(let.attrs.callee);
          if (callee != nullptr && p < callee->argument_types.size()) {
            add(readers(*callee, ir::ValueRef::argument(static_cast<uint32_t>(p))), out);
          }
        } else if (exec::native::is_typable(let)) {
          out.insert(function.site_name(j));
        }
      }
    }
    for (const ir::ValueRef& result : function.results) {
      if (!(result == value)) continue;
      for (const Caller& caller : callers_[function.name]) {
        add(readers(*caller.function, ir::ValueRef::let(caller.let)), out);
        if (ir::is_folding(caller.function->lets[caller.let].op)) {
          add(readers(function, ir::ValueRef::argument(0)), out);  // the next layer's input
        }
      }
    }
  }

  static void add(const std::set<std::string>& from, std::set<std::string>& to) {
    to.insert(from.begin(), from.end());
  }

  const ir::Program& program_;
  std::map<std::string, std::vector<Caller>> callers_;
  std::map<Key, std::set<std::string>> memo_;
};

}  // namespace

ReaderMap find_readers(const ir::Program& program, const ir::Function& entry) {
  ReaderSearch search(program);
  ReaderMap map;
  for (const ir::Function& function : program.functions) {
    for (uint32_t i = 0; i < function.lets.size(); ++i) {
      if (!exec::native::is_typable(function.lets[i])) continue;
      map.of_site[function.site_name(i)] = search.readers(function, ir::ValueRef::let(i));
    }
  }
  // Each parameter's readers: those of the param lets that read it.
  ir::for_each_param_let(program, entry, [&](const ir::Function& function, uint32_t i, const std::string& path) {
    const std::set<std::string>& sites = search.readers(function, ir::ValueRef::let(i));
    map.of_parameter[path].insert(sites.begin(), sites.end());
  });
  return map;
}

}  // namespace presk::solve
