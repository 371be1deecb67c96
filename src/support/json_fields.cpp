// Reading a versioned JSON file's fields (json_fields.h).
#include "support/json_fields.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "support/diagnostics.h"
#include "support/json_reader.h"

namespace presk {

void JsonFields::fail(const std::string& path, const std::string& what, const char* code) const {
  user_error(code ? code : kind_.code).hint(kind_.hint) << kind_.what << " `" << origin_ << "`: `" << path << "` " << what;
  internal_assert(false);
  std::abort();
}

void JsonFields::check_format(const nlohmann::json& root) const {
  const char* code = kind_.format_code ? kind_.format_code : kind_.code;
  if (!root.is_object()) fail("(the file)", "is not a JSON object", code);
  if (!root.contains("format")) fail("format", "is missing", code);
  const nlohmann::json& format = root["format"];
  if (!format.is_number_integer() || format.get<int64_t>() != kind_.format) {
    fail("format", "is " + json_excerpt(format) + ", not " + std::to_string(kind_.format), code);
  }
}

const nlohmann::json& JsonFields::field(const nlohmann::json& object, const std::string& name, const std::string& where) const {
  if (!object.is_object() || !object.contains(name)) fail(join(where, name), "is missing");
  return object[name];
}

const nlohmann::json& JsonFields::object(const nlohmann::json& object, const std::string& name, const std::string& where) const {
  const nlohmann::json& value = field(object, name, where);
  if (!value.is_object()) fail(join(where, name), "is not an object: " + json_excerpt(value));
  return value;
}

const nlohmann::json& JsonFields::array(const nlohmann::json& object, const std::string& name, const std::string& where) const {
  const nlohmann::json& value = field(object, name, where);
  if (!value.is_array()) fail(join(where, name), "is not an array: " + json_excerpt(value));
  return value;
}

double JsonFields::number(const nlohmann::json& object, const std::string& name, const std::string& where) const {
  const nlohmann::json& value = field(object, name, where);
  if (value.is_number()) return value.get<double>();
  if (value == "inf") return std::numeric_limits<double>::infinity();
  if (value == "-inf") return -std::numeric_limits<double>::infinity();
  if (value == "nan") return std::numeric_limits<double>::quiet_NaN();
  fail(join(where, name), "is not a number: " + json_excerpt(value));
}

double JsonFields::non_negative(const nlohmann::json& object, const std::string& name, const std::string& where,
                                bool positive, const char* code) const {
  const nlohmann::json& value = field(object, name, where);
  if (!value.is_number()) fail(join(where, name), "is not a number: " + json_excerpt(value), code);
  const double x = value.get<double>();
  if (!std::isfinite(x) || x < 0 || (positive && x == 0)) {
    fail(join(where, name), "is " + json_excerpt(value) + (positive ? ", not a finite number above 0" : ", not a finite number ≥ 0"),
         code);
  }
  return x;
}

int64_t JsonFields::integer(const nlohmann::json& object, const std::string& name, int64_t least, const std::string& where) const {
  const nlohmann::json& value = field(object, name, where);
  if (!value.is_number_integer()) fail(join(where, name), "is not a whole number: " + json_excerpt(value));
  const int64_t n = value.get<int64_t>();
  if (n < least) fail(join(where, name), "is " + std::to_string(n) + ", below " + std::to_string(least));
  return n;
}

std::string JsonFields::text(const nlohmann::json& object, const std::string& name, const std::string& where) const {
  const nlohmann::json& value = field(object, name, where);
  if (!value.is_string()) fail(join(where, name), "is not a string: " + json_excerpt(value));
  return value.get<std::string>();
}

bool JsonFields::boolean(const nlohmann::json& object, const std::string& name, const std::string& where) const {
  const nlohmann::json& value = field(object, name, where);
  if (!value.is_boolean()) fail(join(where, name), "is not true or false: " + json_excerpt(value));
  return value.get<bool>();
}

}  // namespace presk
