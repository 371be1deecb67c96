// The exported files: the header (the API), and the source: the runtime, the weights loader,
// the entry's functions, presk_<name>_run, and a command-line driver under PRESK_MAIN.
#include "export/c_export.h"

#include <algorithm>

#include "export/c_functions.h"
#include "export/c_text.h"
#include "support/diagnostics.h"

namespace presk::export_c {
namespace {

using exec::native::Realization;

// The loader's code for parameter k: its elements read as doubles (Z: int64) and stored once,
// rounded (RNE) into the parameter's realized type, as prepare_parameters does; integer weights
// quantized as it quantizes them and kept as their codes and scales (pk_quantize).
std::string load_parameter(const ir::Param& param, size_t k, Store store,
                           const exec::native::QuantSpec* quant) {
  std::ostringstream out;
  const int64_t count = element_count(param.type.shape);
  out << "  {\n    static const int64_t shape[] = {";
  for (size_t a = 0; a < param.type.shape.size(); ++a)
    out << (a ? ", " : "") << param.type.shape[a];
  if (param.type.shape.empty()) out << "0";
  const bool integer = store == Store::i64 || store == Store::b8;
  const std::string values_type = integer ? "int64_t" : "double";
  out << "};\n    " << values_type << "* values = (" << values_type << "*)malloc(" << std::max<int64_t>(count, 1)
      << " * 8);\n    if (!values) { snprintf(message, message_size, \"out of memory\"); goto fail; }\n"
      << "    if (!pk_read_tensor(&file, \"" << param.path << "\", shape, " << param.type.shape.size() << ", 0, "
      << (integer ? "NULL, values" : "values, NULL") << ", message, message_size)) { free(values); goto fail; }\n";
  if (quant) {
    const int64_t rank = static_cast<int64_t>(param.type.shape.size()),
                  over = quant->over < 0 ? quant->over + rank : quant->over;
    out << "    w->p[" << k << "] = pk_quantize(values, " << count << ", shape, " << rank << ", " << quant->bits << ", "
        << over << ", " << (quant->scheme == exec::native::QuantScheme::pow2) << ", " << quant->group
        << ");\n    free(values);\n    if (!w->p[" << k
        << "]) { snprintf(message, message_size, \"out of memory\"); goto fail; }\n  }\n";
    return out.str();
  }
  out << "    {\n    " << c_type(store) << "* into = (" << c_type(store) << "*)malloc(" << std::max<int64_t>(count, 1)
      << " * sizeof(" << c_type(store) << "));\n    pk_index i;\n    w->p[" << k << "] = into;\n"
      << "    if (!into) { free(values); snprintf(message, message_size, \"out of memory\"); goto fail; }\n"
      << "    for (i = 0; i < " << count << "; ++i) into[i] = ";
  switch (store) {
    case Store::f64:
    case Store::i64:
      out << "values[i]";
      break;
    case Store::f32:
      out << "(float)values[i]";
      break;
    case Store::bf16:
      out << "pk_bf16_from_f64(values[i])";
      break;
    case Store::b8:
      out << "(uint8_t)(values[i] != 0)";
      break;
    case Store::q8:
    case Store::q4:
      break;
  }
  out << ";\n    }\n    free(values);\n  }\n";
  return out.str();
}

std::string input_type(const ir::Type& type) {
  return type.kind == ir::ElemKind::Real  ? "double"
         : type.kind == ir::ElemKind::Int ? "int64_t"
                                          : "uint8_t";
}

struct Parts {
  const ir::Program& program;
  const ir::Function& entry;
  const Realization& realization;
  std::string name;  // the API's prefix, presk_<name>
  Specialization main;
  Store result = Store::f32;
  std::vector<int64_t> result_shape;
};

std::string signature(const Parts& p) {
  std::string text = "int presk_" + p.name + "_run(const presk_" + p.name + "_weights* weights";
  for (size_t k = 0; k < p.entry.argument_types.size(); ++k) {
    text += ", const " + input_type(p.entry.argument_types[k]) + "* " + p.entry.argument_names[k];
  }
  return text + ", " + c_type(p.result) + "* result, char* message, size_t message_size)";
}

std::string header_text(const Parts& p, const std::string& origin) {
  std::ostringstream out;
  const std::string guard = "PRESK_EXPORT_" + p.name + "_H";
  out << "/* " << origin << " */\n#ifndef " << guard << "\n#define " << guard
      << "\n\n#include <stddef.h>\n#include <stdint.h>\n\n"
      << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
      << "/* The parameters, each in its realized type, read from a safetensors file. */\n"
      << "typedef struct presk_" << p.name << "_weights presk_" << p.name << "_weights;\n\n"
      << "/* Reads the parameters (named by their paths) from `path`; NULL with a message on "
         "failure.\n"
      << "   An entry without parameters takes path NULL. */\n"
      << "presk_" << p.name << "_weights* presk_" << p.name
      << "_load(const char* path, char* message, size_t message_size);\n"
      << "void presk_" << p.name << "_free(presk_" << p.name << "_weights* weights);\n\n"
      << "/* Runs `" << p.entry.name
      << "`: real inputs as doubles (rounded once into the realization's default type),\n"
      << "   Z as int64, B as bytes; row-major. The result: " << store_name(p.result)
      << ir::shape_text(p.result_shape) << (p.result == Store::bf16 ? " (bf16 bit patterns)" : "")
      << ".\n   Returns 0, or 1 with a message. */\n";
  for (size_t k = 0; k < p.entry.argument_types.size(); ++k) {
    out << "/*   " << p.entry.argument_names[k] << " : "
        << ir::type_to_string(p.entry.argument_types[k]) << " */\n";
  }
  out << signature(p) << ";\n\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return out.str();
}

std::string loader_text(const Parts& p, const Functions& functions) {
  std::ostringstream out;
  out << "struct presk_" << p.name << "_weights { void* p["
      << std::max<size_t>(p.program.params.size(), 1) << "]; };\n"
      << "typedef struct presk_" << p.name << "_weights pk_weights;\n\n"
      << "void presk_" << p.name << "_free(presk_" << p.name
      << "_weights* w) {\n  size_t k;\n  if (!w) return;\n"
      << "  for (k = 0; k < sizeof w->p / sizeof w->p[0]; ++k) free(w->p[k]);\n  free(w);\n}\n\n"
      << "presk_" << p.name << "_weights* presk_" << p.name
      << "_load(const char* path, char* message, size_t message_size) {\n"
      << "  pk_file file;\n  presk_" << p.name << "_weights* w = (presk_" << p.name
      << "_weights*)calloc(1, sizeof *w);\n"
      << "  memset(&file, 0, sizeof file);\n"
      << "  if (!w) { snprintf(message, message_size, \"out of memory\"); return NULL; }\n";
  if (functions.used_parameters().empty()) {
    out << "  (void)path;\n  return w;\n";
  } else {
    out << "  if (!path) snprintf(message, message_size, \"no weights file\");\n"
        << "  if (!path || !pk_open(&file, path, message, message_size)) goto fail;\n";
    for (size_t k : functions.used_parameters()) {
      const ir::Param& param = p.program.params[k];
      out << load_parameter(param, k, functions.parameter_store(param),
                            p.realization.param_quant(param.path));
    }
    out << "  pk_close(&file);\n  return w;\nfail:\n  pk_close(&file);\n  presk_" << p.name
        << "_free(w);\n  return NULL;\n";
  }
  out << "}\n\n";
  return out.str();
}

// Each argument rounded once into the realization's default type (executor.cpp's input_value).
std::string run_text(const Parts& p) {
  std::ostringstream out;
  const RealType default_type = p.realization.default_type;
  out << signature(p) << " {\n  static const pk_index no_layers[1] = {0};\n"
      << "  pk_context* cx = (pk_context*)calloc(1, sizeof(pk_context));\n  pk_index i;\n";
  for (size_t k = 0; k < p.entry.argument_types.size(); ++k) {
    const ir::Type& type = p.entry.argument_types[k];
    const Store store = type.kind == ir::ElemKind::Real  ? store_of(default_type)
                        : type.kind == ir::ElemKind::Int ? Store::i64
                                                         : Store::b8;
    out << "  " << c_type(store) << "* a" << k << ";\n";
  }
  out << "  " << c_type(p.result) << "* r;\n"
      << "  if (!cx) { snprintf(message, message_size, \"out of memory\"); return 1; }\n"
      << "  cx->message = message;\n  cx->message_size = message_size;\n"
      << "  if (setjmp(cx->on_error)) {\n    pk_free_all(cx);\n    free(cx);\n    return 1;\n  }\n";
  std::string arguments;
  for (size_t k = 0; k < p.entry.argument_types.size(); ++k) {
    const ir::Type& type = p.entry.argument_types[k];
    const Store store = type.kind == ir::ElemKind::Real  ? store_of(default_type)
                        : type.kind == ir::ElemKind::Int ? Store::i64
                                                         : Store::b8;
    const std::string x = p.entry.argument_names[k] + "[i]";
    const std::string value = store == Store::f32    ? "(float)" + x
                              : store == Store::bf16 ? "pk_bf16_from_f64(" + x + ")"
                              : store == Store::b8   ? "(uint8_t)(" + x + " != 0)"
                                                     : x;
    const int64_t count = element_count(type.shape);
    out << "  a" << k << " = (" << c_type(store) << "*)pk_alloc(cx, " << std::max<int64_t>(count, 1)
        << " * sizeof(" << c_type(store) << "));\n  for (i = 0; i < " << count << "; ++i) a" << k
        << "[i] = " << value << ";\n";
    arguments += ", a" + std::to_string(k);
  }
  out << "  r = " << p.main.c_name << "(cx, weights, no_layers" << arguments << ");\n"
      << "  memcpy(result, r, " << std::max<int64_t>(element_count(p.result_shape), 1)
      << " * sizeof(" << c_type(p.result) << "));\n"
      << "  pk_free_all(cx);\n  free(cx);\n  return 0;\n}\n\n";
  return out.str();
}

// `prog WEIGHTS DATA OUT`: the inputs by argument name from a safetensors file (`-`: none),
// the result written to OUT as presk run --out writes it (one tensor named after the entry).
std::string driver_text(const Parts& p) {
  std::ostringstream out;
  out << "#ifdef PRESK_MAIN\n"
      << c_safetensors_writer() << "\nint main(int argc, char** argv) {\n"
      << "  char message[512] = \"\";\n  pk_file data;\n  presk_" << p.name << "_weights* w;\n"
      << "  static const int64_t result_shape[] = {";
  for (size_t a = 0; a < p.result_shape.size(); ++a) out << (a ? ", " : "") << p.result_shape[a];
  if (p.result_shape.empty()) out << "0";
  out << "};\n  " << c_type(p.result) << "* result = (" << c_type(p.result) << "*)malloc("
      << std::max<int64_t>(element_count(p.result_shape), 1) << " * sizeof(" << c_type(p.result)
      << "));\n"
      << "  pk_output output;\n  int ok;\n";
  std::string arguments;
  for (size_t k = 0; k < p.entry.argument_types.size(); ++k) {
    const ir::Type& type = p.entry.argument_types[k];
    const std::string c = input_type(type),
                      read = type.kind == ir::ElemKind::Int ? "int64_t" : "double";
    out << "  static const int64_t shape" << k << "[] = {";
    for (size_t a = 0; a < type.shape.size(); ++a) out << (a ? ", " : "") << type.shape[a];
    if (type.shape.empty()) out << "0";
    out << "};\n  " << read << "* read" << k << " = (" << read << "*)malloc("
        << std::max<int64_t>(element_count(type.shape), 1) << " * 8);\n";
    arguments += type.kind == ir::ElemKind::Bool ? ", bytes" + std::to_string(k)
                                                 : ", read" + std::to_string(k);
    if (type.kind == ir::ElemKind::Bool) {
      out << "  uint8_t* bytes" << k << " = (uint8_t*)malloc("
          << std::max<int64_t>(element_count(type.shape), 1) << ");\n";
    }
  }
  out << "  if (argc != 4) { fprintf(stderr, \"usage: %s WEIGHTS.safetensors|- DATA.safetensors|- "
         "OUT.safetensors\\n\", argv[0]); return 2; }\n"
      << "  w = presk_" << p.name
      << "_load(strcmp(argv[1], \"-\") ? argv[1] : NULL, message, sizeof message);\n"
      << "  if (!w) { fprintf(stderr, \"%s: %s\\n\", argv[1], message); return 1; }\n";
  if (!p.entry.argument_types.empty()) {
    out << "  if (!pk_open(&data, argv[2], message, sizeof message)) { fprintf(stderr, \"%s\\n\", "
           "message); return 1; }\n";
  } else {
    out << "  memset(&data, 0, sizeof data);\n";
  }
  for (size_t k = 0; k < p.entry.argument_types.size(); ++k) {
    const ir::Type& type = p.entry.argument_types[k];
    const bool integer = type.kind == ir::ElemKind::Int;
    out << "  if (!pk_read_tensor(&data, \"" << p.entry.argument_names[k] << "\", shape" << k
        << ", " << type.shape.size() << ", 1, " << (integer ? "NULL, read" : "read") << k
        << (integer ? "" : ", NULL") << ", message, sizeof message)) {\n"
        << "    fprintf(stderr, \"%s: %s\\n\", argv[2], message);\n    return 1;\n  }\n";
    if (type.kind == ir::ElemKind::Bool) {
      out << "  { pk_index i; for (i = 0; i < " << element_count(type.shape) << "; ++i) bytes" << k
          << "[i] = read" << k << "[i] != 0; }\n";
    }
  }
  out << "  pk_close(&data);\n"
      << "  if (presk_" << p.name << "_run(w" << arguments
      << ", result, message, sizeof message)) {\n"
      << "    fprintf(stderr, \"%s\\n\", message);\n    return 1;\n  }\n"
      << "  output.name = \"" << p.entry.name << "\";\n  output.dtype = \""
      << safetensors_dtype(p.result) << "\";\n"
      << "  output.bytes = (int)sizeof(" << c_type(p.result)
      << ");\n  output.shape = result_shape;\n  output.rank = " << p.result_shape.size()
      << ";\n  output.data = result;\n  output.count = " << element_count(p.result_shape) << ";\n"
      << "  ok = pk_write_outputs(argv[3], &output, 1);\n  presk_" << p.name << "_free(w);\n"
      << "  if (!ok) { fprintf(stderr, \"cannot write %s\\n\", argv[3]); return 1; }\n  return "
         "0;\n}\n#endif\n";
  return out.str();
}

// A decode entry: `decode(states…, at : Z, token : Z[1]) -> (R[1, V], states…)`, each state a
// real tensor returned in its next form.
bool is_decode_entry(const ir::Function& f) {
  const size_t n = f.argument_types.size();
  if (n < 3 || f.results.size() != n - 1) return false;
  const ir::Type &at = f.argument_types[n - 2], &token = f.argument_types[n - 1], logits = f.type_of(f.results[0]);
  bool ok = at.kind == ir::ElemKind::Int && at.shape.empty() && token.kind == ir::ElemKind::Int &&
            token.shape == std::vector<int64_t>{1} && logits.kind == ir::ElemKind::Real && logits.rank() == 2 &&
            logits.shape[0] == 1;
  for (size_t i = 0; i + 2 < n; ++i) {
    ok = ok && f.argument_types[i].kind == ir::ElemKind::Real && f.type_of(f.results[i + 1]) == f.argument_types[i];
  }
  return ok;
}

std::string state_fields(const Parts& p, const std::vector<Store>& states) {
  std::string text;
  for (size_t k = 0; k < states.size(); ++k) {
    text += "     " + p.entry.argument_names[k] + " : " + store_name(states[k]) + ir::shape_text(p.entry.argument_types[k].shape) + "\n";
  }
  return text;
}

std::string step_signature(const Parts& p) {
  return "int presk_" + p.name + "_step(const presk_" + p.name + "_weights* weights, presk_" + p.name +
         "_state* state, int64_t at, int64_t token, " + c_type(p.result) + "* logits, char* message, size_t message_size)";
}

std::string decode_header_text(const Parts& p, const std::vector<Store>& states, int64_t context, const std::string& origin) {
  std::ostringstream out;
  const std::string guard = "PRESK_EXPORT_" + p.name + "_H", N = "presk_" + p.name;
  out << "/* " << origin << " */\n#ifndef " << guard << "\n#define " << guard
      << "\n\n#include <stddef.h>\n#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
      << "#define PRESK_" << p.name << "_CONTEXT " << context << "\n#define PRESK_" << p.name << "_VOCABULARY "
      << p.result_shape.at(1) << "\n\n"
      << "/* The parameters, each in its realized type, read from a safetensors file. */\n"
      << "typedef struct " << N << "_weights " << N << "_weights;\n"
      << N << "_weights* " << N << "_load(const char* path, char* message, size_t message_size);\n"
      << "void " << N << "_free(" << N << "_weights* weights);\n\n"
      << "/* A generation's state: the caches, each in its realized type, zero (NULL: out of memory).\n"
      << state_fields(p, states) << "   */\n"
      << "typedef struct " << N << "_state " << N << "_state;\n"
      << N << "_state* " << N << "_state_new(void);\n"
      << "void " << N << "_state_free(" << N << "_state* state);\n\n"
      << "/* One step of `" << p.entry.name << "`: `token` at position `at` (0 <= at < " << context
      << "), the state's caches written in place at `at`,\n   the next token's logits (" << store_name(p.result)
      << ir::shape_text(p.result_shape) << (p.result == Store::bf16 ? ", bf16 bit patterns" : "")
      << ") into `logits`. Returns 0, or 1 with a message. */\n"
      << step_signature(p) << ";\n\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return out.str();
}

// The state and the step: the caches handed to the entry's function as writable buffers, so
// cache_write writes their rows in place (copied back only if a cache was not).
std::string step_text(const Parts& p, const std::vector<Store>& states) {
  std::ostringstream out;
  const std::string N = "presk_" + p.name;
  out << "struct " << N << "_state {";
  for (size_t k = 0; k < states.size(); ++k) out << " " << c_type(states[k]) << "* s" << k << ";";
  out << " };\n\nvoid " << N << "_state_free(" << N << "_state* s) {\n  if (!s) return;\n";
  for (size_t k = 0; k < states.size(); ++k) out << "  free(s->s" << k << ");\n";
  out << "  free(s);\n}\n\n" << N << "_state* " << N << "_state_new(void) {\n  " << N << "_state* s = ("
      << N << "_state*)calloc(1, sizeof *s);\n  if (!s) return NULL;\n";
  for (size_t k = 0; k < states.size(); ++k) {
    const int64_t count = element_count(p.entry.argument_types[k].shape);
    out << "  s->s" << k << " = (" << c_type(states[k]) << "*)calloc(" << std::max<int64_t>(count, 1) << ", sizeof("
        << c_type(states[k]) << "));\n  if (!s->s" << k << ") { " << N << "_state_free(s); return NULL; }\n";
  }
  out << "  return s;\n}\n\n" << step_signature(p) << " {\n  static const pk_index no_layers[1] = {0};\n"
      << "  pk_context* cx = (pk_context*)calloc(1, sizeof(pk_context));\n  int64_t a_at[1], a_token[1];\n"
      << "  void* rest[" << states.size() << "];\n  " << c_type(p.result) << "* r;\n"
      << "  if (!cx) { snprintf(message, message_size, \"out of memory\"); return 1; }\n"
      << "  cx->message = message;\n  cx->message_size = message_size;\n"
      << "  if (setjmp(cx->on_error)) {\n    pk_free_all(cx);\n    free(cx);\n    return 1;\n  }\n"
      << "  a_at[0] = at;\n  a_token[0] = token;\n  r = " << p.main.c_name << "(cx, weights, no_layers";
  for (size_t k = 0; k < states.size(); ++k) out << ", state->s" << k;
  out << ", a_at, a_token, rest);\n  memcpy(logits, r, " << element_count(p.result_shape) << " * sizeof(" << c_type(p.result)
      << "));\n";
  for (size_t k = 0; k < states.size(); ++k) {
    out << "  if (rest[" << k << "] != state->s" << k << ") memcpy(state->s" << k << ", rest[" << k << "], "
        << element_count(p.entry.argument_types[k].shape) << " * sizeof(" << c_type(states[k]) << "));\n";
  }
  out << "  pk_free_all(cx);\n  free(cx);\n  return 0;\n}\n\n";
  return out.str();
}

// `decode WEIGHTS DATA OUT`: the tokens (DATA's `tokens`, Z[context]) fed one step each from
// position 0, the logits of every step written to OUT as `logits` [context, V]: what
// `presk run --entry logits --out` writes for those tokens (row t of logits is decode at t).
std::string decode_driver_text(const Parts& p, int64_t context) {
  std::ostringstream out;
  const std::string N = "presk_" + p.name, type = c_type(p.result);
  const int64_t width = p.result_shape.at(1);
  out << "#ifdef PRESK_MAIN\n" << c_safetensors_writer() << "\nint main(int argc, char** argv) {\n"
      << "  char message[512] = \"\";\n  pk_file data;\n  static const int64_t token_shape[] = {" << context
      << "}, logits_shape[] = {" << context << ", " << width << "};\n  int64_t tokens[" << context << "];\n  "
      << type << "* logits = (" << type << "*)malloc(" << context * width << " * sizeof(" << type << "));\n  pk_output output;\n"
      << "  " << N << "_weights* w;\n  " << N << "_state* state = " << N << "_state_new();\n  pk_index t;\n"
      << "  if (argc != 4) { fprintf(stderr, \"usage: %s WEIGHTS.safetensors DATA.safetensors OUT.safetensors\\n\", argv[0]); return 2; }\n"
      << "  if (!logits || !state) { fprintf(stderr, \"out of memory\\n\"); return 1; }\n"
      << "  w = " << N << "_load(argv[1], message, sizeof message);\n"
      << "  if (!w) { fprintf(stderr, \"%s: %s\\n\", argv[1], message); return 1; }\n"
      << "  if (!pk_open(&data, argv[2], message, sizeof message) ||\n"
      << "      !pk_read_tensor(&data, \"tokens\", token_shape, 1, 1, NULL, tokens, message, sizeof message)) {\n"
      << "    fprintf(stderr, \"%s: %s\\n\", argv[2], message);\n    return 1;\n  }\n  pk_close(&data);\n"
      << "  for (t = 0; t < " << context << "; ++t) {\n"
      << "    if (" << N << "_step(w, state, t, tokens[t], logits + t * " << width << ", message, sizeof message)) {\n"
      << "      fprintf(stderr, \"%s\\n\", message);\n      return 1;\n    }\n  }\n"
      << "  output.name = \"logits\";\n  output.dtype = \"" << safetensors_dtype(p.result) << "\";\n"
      << "  output.bytes = (int)sizeof(" << type << ");\n  output.shape = logits_shape;\n  output.rank = 2;\n"
      << "  output.data = logits;\n  output.count = " << context * width << ";\n"
      << "  if (!pk_write_outputs(argv[3], &output, 1)) { fprintf(stderr, \"cannot write %s\\n\", argv[3]); return 1; }\n"
      << "  " << N << "_state_free(state);\n  " << N << "_free(w);\n  free(logits);\n  return 0;\n}\n#endif\n";
  return out.str();
}

// A cache's extent along T: the axis named T, else the third (generate/generate.cpp's rule).
int64_t context_of(const ir::Function& f) {
  int64_t context = 0;
  for (size_t i = 0; i + 2 < f.argument_types.size(); ++i) {
    const ir::Type& state = f.argument_types[i];
    const auto named = std::find(state.axes.begin(), state.axes.end(), "T");
    const int64_t extent = named != state.axes.end() ? state.shape[static_cast<size_t>(named - state.axes.begin())]
                                                     : state.shape[std::min<size_t>(2, state.shape.size() - 1)];
    context = context == 0 ? extent : std::min(context, extent);
  }
  return context;
}

CExport export_decode(const ir::Program& program, const ir::Function& function, const Realization& realization,
                      const std::string& name, const std::string& origin) {
  const size_t states = function.argument_types.size() - 2;
  // The caches' types: what the entry returns them as (their cache_write sites'), found by a
  // first specialization with the caches in the default type.
  std::vector<Store> stores(states, store_of(realization.default_type));
  stores.push_back(Store::i64), stores.push_back(Store::i64);
  std::vector<bool> writable(states, true);
  writable.push_back(false), writable.push_back(false);
  {
    Functions probe(program, realization);
    probe.set_probe();
    const Specialization first = probe.specialize(function, "", 0, stores, writable);
    for (size_t k = 0; k < states; ++k) stores[k] = first.results.at(k + 1);
  }
  Functions functions(program, realization);
  Parts parts{program, function, realization, name, functions.specialize(function, "", 0, stores, writable), Store::f32, {}};
  parts.result = parts.main.result;
  parts.result_shape = function.type_of(function.results[0]).shape;
  const std::vector<Store> state_stores(stores.begin(), stores.begin() + static_cast<long>(states));
  const int64_t context = context_of(function);
  CExport out;
  out.header = decode_header_text(parts, state_stores, context, origin);
  out.source = "/* " + origin + " */\n" + c_runtime_prelude() + c_math_functions() + c_safetensors_reader() +
               "\n#include \"" + name + ".h\"\n\n" + loader_text(parts, functions) + functions.definitions() +
               step_text(parts, state_stores) + decode_driver_text(parts, context);
  out.generate = c_generate_text(name, parts.result, origin);
  return out;
}

}  // namespace

bool is_c_name(const std::string& name) {
  if (name.empty() || name.size() > 64 || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

CExport export_c(const ir::Program& program, const std::string& entry,
                 const Realization& realization, const std::string& name,
                 const std::string& origin) {
  const ir::Function* function = program.find_function(entry);
  if (!function || !function->is_entry) {
    user_error("E1540").hint("`presk dump --stage ir PROGRAM` lists the entries")
        << "the program has no entry `" << entry << "`";
  }
  if (function->results.size() != 1 && is_decode_entry(*function)) {
    return export_decode(program, *function, realization, name, origin);
  }
  if (function->results.size() != 1) {
    user_error("E1543").hint("export an entry with one result, or a decode entry (docs/language.md, \"State\")")
        << "`presk export c` does not cover entries with " << function->results.size()
        << " results yet (`" << entry << "`)";
  }
  Functions functions(program, realization);
  std::vector<Store> arguments;
  for (const ir::Type& type : function->argument_types) {
    arguments.push_back(type.kind == ir::ElemKind::Real  ? store_of(realization.default_type)
                        : type.kind == ir::ElemKind::Int ? Store::i64
                                                         : Store::b8);
  }
  Parts parts{
      program,    *function, realization, name, functions.specialize(*function, "", 0, arguments),
      Store::f32, {}};
  parts.result = parts.main.result;
  parts.result_shape = function->type_of(function->results[0]).shape;
  CExport out;
  out.header = header_text(parts, origin);
  out.source = "/* " + origin + " */\n" + c_runtime_prelude() + c_math_functions() +
               c_safetensors_reader() + "\n#include \"" + name + ".h\"\n\n" +
               loader_text(parts, functions) + functions.definitions() + run_text(parts) +
               driver_text(parts);
  return out;
}

}  // namespace presk::export_c
