// Reading the fields of a versioned JSON file presk wrote (a step envelope, a solve record, a
// profile), after parse_user_json (json_reader.h) has checked its syntax: each field looked up
// by name, of the kind it must be, and a coded user error naming the file, the field's path and
// what is wrong with it ("is missing", "is not a number: …"), with the file kind's remedy.
// Numbers may be written as "inf", "-inf", "nan" (json_number).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace presk {

// What a kind of file is called and how a bad one is fixed.
struct JsonFileKind {
  std::string what;      // "the step envelope", "the solve record", "profile"
  const char* code;      // a field missing or of the wrong kind
  std::string hint;      // how to get a good file
  int format = 1;        // the `format` (version) it must have, when check_format is called
  const char* format_code = nullptr;  // another format is this code (null: `code`)
};

class JsonFields {
 public:
  JsonFields(std::string origin, JsonFileKind kind) : origin_(std::move(origin)), kind_(std::move(kind)) {}

  // E(format_code) unless `root` is an object whose `format` is kind.format.
  void check_format(const nlohmann::json& root) const;

  // `where` is the path of `object` ("solve", "solve.moves[3]"; "" for the root).
  const nlohmann::json& field(const nlohmann::json& object, const std::string& name, const std::string& where) const;
  const nlohmann::json& object(const nlohmann::json& object, const std::string& name, const std::string& where) const;
  const nlohmann::json& array(const nlohmann::json& object, const std::string& name, const std::string& where) const;
  double number(const nlohmann::json& object, const std::string& name, const std::string& where) const;
  // A finite number ≥ 0 (and > 0 when `positive`), `code` for one that is not (null: the kind's).
  double non_negative(const nlohmann::json& object, const std::string& name, const std::string& where, bool positive,
                      const char* code = nullptr) const;
  int64_t integer(const nlohmann::json& object, const std::string& name, int64_t least, const std::string& where) const;
  std::string text(const nlohmann::json& object, const std::string& name, const std::string& where) const;
  bool boolean(const nlohmann::json& object, const std::string& name, const std::string& where) const;

  static std::string join(const std::string& where, const std::string& name) { return where.empty() ? name : where + "." + name; }
  [[noreturn]] void fail(const std::string& path, const std::string& what, const char* code = nullptr) const;
  const std::string& origin() const { return origin_; }

 private:
  std::string origin_;
  JsonFileKind kind_;
};

}  // namespace presk
