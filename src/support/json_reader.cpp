// Strict JSON for user files (json_reader.h): the checks run inside nlohmann's parse, through
// its callback, so a hostile text is refused before it is built deeper than kMaxJsonDepth.
#include "support/json_reader.h"

#include <set>
#include <vector>

#include "support/diagnostics.h"

namespace presk {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
constexpr size_t kDetailLimit = 160;  // characters of nlohmann's own message kept

// A prefix of `text` of at most `limit` bytes that does not split a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view text, size_t limit) {
  if (text.size() <= limit) return text;
  size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

std::string quoted(std::string_view text) {
  return Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Checks the structure while nlohmann parses: nesting depth and keys unique per object. The
// path of the container being read (`sites[].rounding`) names where a duplicate sits.
class StructureChecker {
 public:
  explicit StructureChecker(const std::string& origin) : origin_(origin) {}

  bool operator()(int depth, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (depth >= kMaxJsonDepth) {
          user_error("E0010").hint("presk's JSON files nest a few levels; check that this is the file you meant")
              << origin_ << ": the JSON nests more than " << kMaxJsonDepth << " levels deep";
        }
        open(event == Json::parse_event_t::object_start);
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        levels_.pop_back();
        break;
      case Json::parse_event_t::key:
        key(parsed.get<std::string>());
        break;
      default:
        break;
    }
    return true;
  }

 private:
  struct Level {
    bool object = false;
    std::string name;            // the path of this container
    std::string last_key;        // objects: the key whose value is read now
    std::set<std::string> keys;  // objects: the keys seen
  };

  void open(bool object) {
    std::string name;
    if (!levels_.empty()) {
      const Level& parent = levels_.back();
      name = parent.object ? (parent.name.empty() ? "" : parent.name + ".") + parent.last_key
                           : parent.name + "[]";
    }
    levels_.push_back({object, std::move(name), {}, {}});
  }

  void key(const std::string& text) {
    Level& level = levels_.back();
    if (!level.keys.insert(text).second) {
      std::string where = level.name.empty() ? "the top-level object" : "the object at " + text_excerpt(level.name, 120);
      user_error("E0011").hint("each key may appear once in an object; remove or rename the duplicate")
          << origin_ << ": key " << text_excerpt(text) << " appears twice in " << where;
    }
    level.last_key = std::string(utf8_prefix(text, 64));
  }

  const std::string& origin_;
  std::vector<Level> levels_;
};

// A syntax error at a `/` is a comment: nothing else in JSON starts with one outside a string.
bool is_comment_error(std::string_view text, const Json::parse_error& error) {
  size_t at = error.byte;  // the count of bytes read, the offending one included
  return at >= 1 && at <= text.size() && text[at - 1] == '/';
}

}  // namespace

std::string json_error_detail(const std::exception& error) {
  std::string_view what = error.what();
  std::string_view prefix = utf8_prefix(what, kDetailLimit);
  return std::string(prefix) + (prefix.size() < what.size() ? "…" : "");
}

Json parse_user_json(std::string_view text, const JsonSource& source) {
  if (text.starts_with(kByteOrderMark)) {
    user_error("E0013").hint("save the file as UTF-8 without a byte-order mark")
        << source.origin << ": the file starts with a byte-order mark (EF BB BF), which JSON does not allow";
  }
  StructureChecker checker(source.origin);
  Json parsed;
  try {
    parsed = Json::parse(text.begin(), text.end(), std::ref(checker), true, false);
  } catch (const Json::parse_error& error) {
    if (is_comment_error(text, error)) {
      user_error("E0012").hint("JSON has no comments; remove them")
          << source.origin << ": a comment at byte " << error.byte << "; presk reads strict JSON";
    }
    user_error(source.invalid_code).hint(source.hint)
        << source.origin << ": not valid JSON (" << json_error_detail(error) << ")";
  } catch (const Json::out_of_range& error) {
    user_error("E0014").hint("write numbers within binary64's range (about ±1.8e308); \"inf\" where a field allows it")
        << source.origin << ": a number beyond binary64's range (" << json_error_detail(error) << ")";
  } catch (const Json::exception& error) {
    user_error(source.invalid_code).hint(source.hint)
        << source.origin << ": not valid JSON (" << json_error_detail(error) << ")";
  }
  return parsed;
}

std::string text_excerpt(std::string_view text, size_t limit) {
  std::string_view prefix = utf8_prefix(text, limit);
  return quoted(prefix) + (prefix.size() < text.size() ? "…" : "");
}

namespace {

// Appends `value` to `out` until `out` holds `limit` characters; sets `cut` when it stops early.
void append_excerpt(const Json& value, size_t limit, std::string& out, bool& cut) {
  if (out.size() >= limit) {
    cut = true;
    return;
  }
  if (value.is_string()) {
    std::string_view text = value.get_ref<const std::string&>();
    std::string_view prefix = utf8_prefix(text, limit - out.size());
    out += quoted(prefix);
    cut = cut || prefix.size() < text.size();
    return;
  }
  if (!value.is_structured()) {
    out += value.dump();  // a number, a boolean or null: a few characters
    return;
  }
  out += value.is_array() ? '[' : '{';
  bool first = true;
  for (auto it = value.begin(); it != value.end() && !cut; ++it) {
    if (!first) out += ", ";
    first = false;
    if (value.is_object()) out += quoted(utf8_prefix(it.key(), out.size() < limit ? limit - out.size() : 0)) + ": ";
    append_excerpt(*it, limit, out, cut);
    if (out.size() >= limit && std::next(it) != value.end()) cut = true;
  }
  if (!cut) out += value.is_array() ? ']' : '}';
}

}  // namespace

std::string json_excerpt(const Json& value, size_t limit) {
  std::string out;
  bool cut = false;
  append_excerpt(value, limit, out, cut);
  return cut ? out + "…" : out;  // at most a quoted string's prefix past `limit`
}

}  // namespace presk
