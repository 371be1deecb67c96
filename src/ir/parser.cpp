// Reads the printed IR (docs/ir.md) back into a Program: a recursive-descent parser over
// the tokens of parser_lexer.h. Every malformed input is a user error E0400–E0449 with a
// span; numbers are bounded, so no input can make the parser overflow or allocate wildly.
#include "ir/parser.h"

#include <charconv>
#include <limits>

#include "ir/parser_lexer.h"

namespace presk::ir {
namespace {

using detail::Lexer;
using detail::Token;
using detail::TokenKind;

constexpr int64_t kMaxExtent = int64_t{1} << 40;
constexpr int64_t kMaxElements = int64_t{1} << 62;
constexpr size_t kMaxRank = 64;
constexpr size_t kMaxTextBytes = size_t{1} << 30;

class Parser {
 public:
  explicit Parser(std::shared_ptr<const SourceFile> source) : lexer_(source) { advance(); }

  Program parse() {
    Program program;
    while (current_.kind != TokenKind::End) parse_item(program);
    return program;
  }

 private:
  // ---- tokens ----
  void advance() {
    previous_end_ = current_.end;
    current_ = lexer_.next();
  }
  Span here() const { return lexer_.span(current_.begin, current_.end); }
  bool at_keyword(const char* word) const {
    return current_.kind == TokenKind::Name && current_.text == word;
  }
  [[noreturn]] void expected(const std::string& what) {
    user_error("E0401", here()) << "expected " << what << ", found " << describe_token(current_);
  }
  void expect(TokenKind kind, const char* what) {
    if (current_.kind != kind) expected(what);
    advance();
  }
  void expect_keyword(const char* word) {
    if (!at_keyword(word)) expected(std::string("`") + word + "`");
    advance();
  }

  // ---- numbers and names ----
  int64_t parse_int(const char* what, int64_t low, int64_t high) {
    if (current_.kind != TokenKind::Number) expected(what);
    int64_t value = 0;
    const std::string& text = current_.text;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (end != text.data() + text.size() && error != std::errc::result_out_of_range) {
      expected(what);
    }
    if (error == std::errc::result_out_of_range || value < low || value > high) {
      user_error("E0402", here()) << what << " " << text << " is outside " << low << "…" << high;
    }
    advance();
    return value;
  }
  double parse_real(const char* what) {
    if (current_.kind != TokenKind::Number && current_.kind != TokenKind::Name) expected(what);
    double value = 0;
    const std::string& text = current_.text;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
      user_error("E0410", here()) << "`" << text << "` is not a real number (" << what << ")";
    }
    advance();
    return value;
  }
  std::string parse_name(const char* what) {
    if (current_.kind != TokenKind::Name && current_.kind != TokenKind::String) expected(what);
    std::string name = current_.text;
    advance();
    return name;
  }
  uint32_t reference_index() const {
    uint64_t value = 0;
    std::from_chars(current_.text.data(), current_.text.data() + current_.text.size(), value);
    return value > std::numeric_limits<uint32_t>::max() ? std::numeric_limits<uint32_t>::max()
                                                        : static_cast<uint32_t>(value);
  }

  // ---- types ----
  ElemKind parse_kind() {
    if (current_.kind == TokenKind::Name) {
      for (ElemKind kind : {ElemKind::Real, ElemKind::Int, ElemKind::Bool}) {
        if (current_.text == elem_kind_name(kind)) {
          advance();
          return kind;
        }
      }
    }
    user_error("E0404", here()).hint("an element kind is R, Z or B")
        << "expected a type, found " << describe_token(current_);
  }
  void parse_axis(Type& type, int64_t& count) {
    std::string name;
    if (current_.kind == TokenKind::Name || current_.kind == TokenKind::String) {
      name = parse_name("an axis name");
      expect(TokenKind::Colon, "`:` after an axis name");
    }
    Span span = here();
    int64_t extent = parse_int("an extent", 0, kMaxExtent);
    if (extent > 0 && count > kMaxElements / extent) {
      user_error("E0402", span) << "a type with more than 2^62 elements";
    }
    count *= extent;
    if (type.shape.size() == kMaxRank) user_error("E0402", span) << "a type of rank above 64";
    type.shape.push_back(extent);
    type.axes.push_back(std::move(name));
  }
  Type parse_type() {
    if (current_.kind == TokenKind::LParen) return parse_tuple_type();
    Type type;
    type.kind = parse_kind();
    if (current_.kind != TokenKind::LBracket) return type;
    advance();
    int64_t count = 1;
    while (current_.kind != TokenKind::RBracket) {
      if (!type.shape.empty()) expect(TokenKind::Comma, "`,` or `]` in a shape");
      parse_axis(type, count);
    }
    advance();
    bool named = false;
    for (const std::string& axis : type.axes) named = named || !axis.empty();
    if (!named) type.axes.clear();
    return type;
  }

  // A tuple type `(T, T, …)` of at least two tensor types.
  Type parse_tuple_type() {
    Span span = here();
    advance();
    std::vector<Type> elements;
    while (current_.kind != TokenKind::RParen) {
      if (!elements.empty()) expect(TokenKind::Comma, "`,` or `)` in a tuple type");
      if (current_.kind == TokenKind::LParen) user_error("E0404", here()) << "a tuple inside a tuple";
      elements.push_back(parse_type());
      if (elements.size() > 1024) user_error("E0402", here()) << "a tuple of more than 1024 types";
    }
    advance();
    if (elements.size() < 2) user_error("E0404", span) << "a tuple type has at least two elements";
    return tuple_type(std::move(elements));
  }

  // ---- program items ----
  void parse_item(Program& program) {
    if (at_keyword("const") || at_keyword("dim")) {
      bool is_const = current_.text == "const";
      advance();
      std::string name = parse_name("a name");
      expect(TokenKind::Equals, "`=`");
      int64_t value = parse_int("a value", std::numeric_limits<int64_t>::min(),
                                std::numeric_limits<int64_t>::max());
      (is_const ? program.consts : program.dims).emplace_back(std::move(name), value);
    } else if (at_keyword("param")) {
      program.params.push_back(parse_param());
    } else if (at_keyword("fn") || at_keyword("entry")) {
      program.functions.push_back(parse_function());
    } else {
      expected("`const`, `dim`, `param`, `fn` or `entry`");
    }
  }
  Initializer parse_initializer() {
    Initializer init;
    if (at_keyword("zeros") || at_keyword("ones")) {
      init.kind = current_.text == "zeros" ? Initializer::Kind::Zeros : Initializer::Kind::Ones;
      advance();
      return init;
    }
    bool normal = at_keyword("normal");
    if (!normal && !at_keyword("uniform")) {
      user_error("E0409", here()).hint("initializers: zeros, ones, normal(σ), uniform(low, high)")
          << "unknown initializer " << describe_token(current_);
    }
    init.kind = normal ? Initializer::Kind::Normal : Initializer::Kind::Uniform;
    advance();
    expect(TokenKind::LParen, "`(`");
    init.a = parse_real("an initializer argument");
    if (!normal) {
      expect(TokenKind::Comma, "`,`");
      init.b = parse_real("an initializer argument");
    }
    expect(TokenKind::RParen, "`)`");
    return init;
  }
  Param parse_param() {
    advance();
    Param param;
    param.path = parse_name("a parameter path");
    expect(TokenKind::Colon, "`:`");
    param.type = parse_type();
    expect(TokenKind::Equals, "`=` and an initializer");
    param.init = parse_initializer();
    if (at_keyword("stack")) {
      advance();
      param.stack_depth = static_cast<int>(parse_int("a stack depth", 0, kMaxRank));
    }
    return param;
  }

  // ---- functions ----
  // `adjoint %n` repeated: the forward sites a vjp value is the complete adjoint of.
  std::vector<uint32_t> parse_adjoint_sites() {
    std::vector<uint32_t> sites;
    while (at_keyword("adjoint")) {
      advance();
      if (current_.kind != TokenKind::LetRef) expected("the forward site `%n` after `adjoint`");
      sites.push_back(reference_index());
      advance();
    }
    return sites;
  }
  void parse_arguments(Function& function) {
    expect(TokenKind::LParen, "`(` and the arguments");
    while (current_.kind != TokenKind::RParen) {
      if (!function.argument_types.empty()) expect(TokenKind::Comma, "`,` or `)`");
      if (current_.kind != TokenKind::ArgRef)
        expected("an argument `$" + std::to_string(function.argument_types.size()) + "`");
      if (reference_index() != function.argument_types.size()) {
        user_error("E0407", here()) << "argument " << describe_token(current_) << " where `$"
                                    << function.argument_types.size() << "` comes next";
      }
      advance();
      std::string name;
      if (current_.kind == TokenKind::Name || current_.kind == TokenKind::String)
        name = parse_name("a name");
      expect(TokenKind::Colon, "`:` and the argument's type");
      function.argument_names.push_back(std::move(name));
      function.argument_types.push_back(parse_type());
      if (!function.cotangent_adjoint_of.empty()) expected("`)` after the cotangent marked `adjoint`");
      function.cotangent_adjoint_of = parse_adjoint_sites();
    }
    advance();
    bool named = false;
    for (const std::string& name : function.argument_names) named = named || !name.empty();
    if (!named) function.argument_names.clear();
  }
  // The result types, and the result names where they are given (`"g" : R[8]`).
  std::vector<Type> parse_result_types(Function& function) {
    expect(TokenKind::Arrow, "`->` and the result types");
    if (current_.kind != TokenKind::LParen) return {parse_type()};
    advance();
    std::vector<Type> types;
    while (current_.kind != TokenKind::RParen) {
      if (!types.empty()) expect(TokenKind::Comma, "`,` or `)`");
      if (current_.kind == TokenKind::String) {
        if (function.result_names.size() != types.size())
          user_error("E0411", here()) << "either every result is named or none is";
        function.result_names.push_back(parse_name("a result name"));
        expect(TokenKind::Colon, "`:` and the result's type");
      }
      if (current_.kind == TokenKind::LParen) user_error("E0404", here()) << "a tuple-valued result";
      types.push_back(parse_type());
      if (types.size() > 1024) user_error("E0402", here()) << "more than 1024 results";
    }
    advance();
    return types;
  }
  ValueRef parse_ref(const Function& function) {
    bool argument = current_.kind == TokenKind::ArgRef;
    if (!argument && current_.kind != TokenKind::LetRef) expected("a value `%n` or `$n`");
    uint32_t index = reference_index();
    size_t count = argument ? function.argument_types.size() : function.lets.size();
    if (index >= count) {
      user_error("E0406", here()) << describe_token(current_) << " refers to "
                                  << (argument ? "no argument" : "no earlier let");
    }
    advance();
    return argument ? ValueRef::argument(index) : ValueRef::let(index);
  }
  Function parse_function() {
    Function function;
    function.is_entry = current_.text == "entry";
    advance();
    function.span = here();
    function.name = parse_name("a function name");
    if (at_keyword("module")) {
      advance();
      function.module = parse_name("a module name");
    }
    parse_arguments(function);
    Span signature = here();
    std::vector<Type> result_types = parse_result_types(function);
    if (!function.result_names.empty() && function.result_names.size() != result_types.size())
      user_error("E0411", signature) << "either every result is named or none is";
    while (at_keyword("precision")) {  // precision rel_error "1e-3"
      advance();
      std::string key = parse_name("a budget term (rel_error, abs_error)");
      if (current_.kind != TokenKind::String) expected("the budget's value as a string, \"1e-3\"");
      function.budget.emplace_back(std::move(key), current_.text);
      advance();
    }
    expect(TokenKind::LBrace, "`{`");
    while (!at_keyword("return")) function.lets.push_back(parse_let(function));
    advance();
    if (current_.kind == TokenKind::LetRef || current_.kind == TokenKind::ArgRef) {
      function.results.push_back(parse_ref(function));
      while (current_.kind == TokenKind::Comma) {
        advance();
        function.results.push_back(parse_ref(function));
      }
    }
    expect(TokenKind::RBrace, "`}` after the returned values");
    check_result_types(function, result_types, signature);
    return function;
  }
  void check_result_types(const Function& function, const std::vector<Type>& declared,
                          const Span& span) {
    bool same = declared.size() == function.results.size();
    for (size_t i = 0; same && i < declared.size(); ++i) {
      same = declared[i] == function.type_of(function.results[i]);
    }
    if (!same) {
      user_error("E0411", span) << "the result types of `" << function.name
                                << "` differ from the types of the values it returns";
    }
  }

  // ---- lets ----
  Let parse_let(const Function& function) {
    if (current_.kind != TokenKind::LetRef)
      expected("a let `%" + std::to_string(function.lets.size()) + "` or `return`");
    uint32_t begin = current_.begin;
    if (reference_index() != function.lets.size()) {
      user_error("E0405", here()) << "let " << describe_token(current_) << " where `%"
                                  << function.lets.size() << "` comes next";
    }
    advance();
    expect(TokenKind::Equals, "`=`");
    Let let;
    let.op = parse_op();
    parse_primary(let);
    if (current_.kind == TokenKind::LParen) {
      advance();
      while (current_.kind != TokenKind::RParen) {
        if (!let.operands.empty()) expect(TokenKind::Comma, "`,` or `)`");
        let.operands.push_back(parse_ref(function));
      }
      advance();
    }
    parse_attrs(let);
    expect(TokenKind::Colon, "`:` and the let's type");
    let.type = parse_type();
    let.adjoint_of = parse_adjoint_sites();
    let.span = lexer_.span(begin, previous_end_);
    return let;
  }
  Op parse_op() {
    if (current_.kind != TokenKind::Name) expected("an op name");
    std::optional<Op> op = op_from_name(current_.text);
    if (!op) user_error("E0403", here()) << "unknown op " << describe_token(current_);
    advance();
    return *op;
  }
  void parse_primary(Let& let) {
    if (let.op == Op::literal || let.op == Op::param) {
      if (current_.kind != TokenKind::String) expected("a quoted string");
      (let.op == Op::literal ? let.attrs.literal : let.attrs.path) = current_.text;
      advance();
    } else if (is_calling(let.op)) {
      expect(TokenKind::At, "`@` and the callee");
      let.attrs.callee = parse_name("a callee name");
    }
  }
  std::vector<int64_t> parse_int_list() {
    expect(TokenKind::LBracket, "`[`");
    std::vector<int64_t> values;
    while (current_.kind != TokenKind::RBracket) {
      if (!values.empty()) expect(TokenKind::Comma, "`,` or `]`");
      values.push_back(parse_int("an integer", -kMaxExtent, kMaxExtent));
      if (values.size() > 1024) user_error("E0402", here()) << "a list of more than 1024 integers";
    }
    advance();
    return values;
  }
  void parse_attrs(Let& let) {
    uint8_t seen = 0;
    while (current_.kind == TokenKind::Name) {
      static const char* kKeys[] = {"axes", "starts", "stops", "literal",
                                    "spec", "callee", "path",  "rate"};
      int key = 0;
      while (key < 8 && current_.text != kKeys[key]) ++key;
      if (key == 8 || (seen & (1u << key))) {
        user_error("E0408", here()).hint("keys: axes starts stops literal spec callee path rate")
            << (key == 8 ? "unknown" : "repeated") << " attribute " << describe_token(current_);
      }
      seen = static_cast<uint8_t>(seen | (1u << key));
      advance();
      expect(TokenKind::Equals, "`=`");
      Attrs& a = let.attrs;
      std::vector<int64_t>* lists[] = {&a.axes, &a.starts, &a.stops};
      std::string* strings[] = {&a.literal, &a.spec, &a.callee, &a.path};
      if (key < 3)
        *lists[key] = parse_int_list();
      else if (key < 7)
        *strings[key - 3] = parse_name("a quoted string");
      else
        a.rate = parse_real("a rate");
    }
  }

  Lexer lexer_;
  Token current_;
  uint32_t previous_end_ = 0;
};

}  // namespace

Program parse_program(std::shared_ptr<const SourceFile> source) {
  internal_assert(source != nullptr);
  if (source->text.size() > kMaxTextBytes) {
    user_error("E0402", Span{}) << "`" << source->path << "` is larger than 1 GiB";
  }
  return Parser(std::move(source)).parse();
}

}  // namespace presk::ir
