// The runtime text of an exported entry: the conversions of exec/native/value.cpp and
// numeric.h (load rules, bf16 RNE, integers rounded once), the run context, and a safetensors
// reader and writer. Plain C99 and libm; little-endian hosts (safetensors is little-endian).
#include <cmath>
#include <cstdio>
#include <string>

#include "export/c_text.h"

namespace presk::export_c {

namespace {

// Includes, the FLT_EVAL_METHOD check, the run context, bf16 and integer conversions, Z arithmetic.
constexpr const char* kPrelude = R"C(#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bits depend on every operation rounding to its own type, unfused: */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "presk's exported C needs FLT_EVAL_METHOD == 0 (SSE2 or another IEEE unit; not x87)"
#endif
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

/* The runtime's functions: file-local, and unused ones are no warning. */
#if defined(__GNUC__)
#define PK_INTERNAL static inline __attribute__((unused))
#else
#define PK_INTERNAL static inline
#endif

/* Element counts and indices: as wide as a pointer (64 bits where long is 32). */
typedef ptrdiff_t pk_index;

/* A run: its allocations (a list, all freed on an error) and where an error goes. */
typedef struct pk_block { struct pk_block *prev, *next; double align; } pk_block;
typedef struct pk_context {
  jmp_buf on_error;
  pk_block blocks;
  char* message;
  size_t message_size;
} pk_context;

PK_INTERNAL void pk_fail(pk_context* cx, const char* text) {
  if (cx->message && cx->message_size) {
    strncpy(cx->message, text, cx->message_size - 1);
    cx->message[cx->message_size - 1] = 0;
  }
  longjmp(cx->on_error, 1);
}
PK_INTERNAL void* pk_alloc(pk_context* cx, size_t bytes) {
  pk_block* block = (pk_block*)malloc(sizeof(pk_block) + (bytes ? bytes : 1));
  if (!block) pk_fail(cx, "out of memory");
  block->prev = &cx->blocks;
  block->next = cx->blocks.next;
  if (block->next) block->next->prev = block;
  cx->blocks.next = block;
  return block + 1;
}
PK_INTERNAL void pk_free(pk_context* cx, void* p) {
  pk_block* block = (pk_block*)p - 1;
  (void)cx;
  block->prev->next = block->next;
  if (block->next) block->next->prev = block->prev;
  free(block);
}
PK_INTERNAL void pk_free_all(pk_context* cx) {
  while (cx->blocks.next) pk_free(cx, cx->blocks.next + 1);
}

/* bf16 as its 16-bit pattern; f32 -> bf16 rounds to nearest, ties to even; NaN stays quiet. */
PK_INTERNAL uint16_t pk_bf16_from_f32(float x) {
  uint32_t bits;
  memcpy(&bits, &x, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> 16) | 0x0040u);
  return (uint16_t)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}
PK_INTERNAL float pk_f32_from_bf16(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float x;
  memcpy(&x, &bits, 4);
  return x;
}
PK_INTERNAL float pk_round_bf16(float x) { return pk_f32_from_bf16(pk_bf16_from_f32(x)); }
/* f64 -> bf16 rounded once (never through f32, which could round twice). */
PK_INTERNAL uint16_t pk_bf16_from_f64(double x) {
  uint64_t bits;
  double a = fabs(x), r;
  if (x != x) return (uint16_t)(signbit(x) ? 0xffc0u : 0x7fc0u);
  if (a < 0x1p-126) {
    r = rint(x * 0x1p133) * 0x1p-133; /* bf16's subnormal quantum, 2^-133 */
  } else {
    memcpy(&bits, &x, 8);
    bits = (bits + 0x00000fffffffffffull + ((bits >> 45) & 1u)) & ~0x00001fffffffffffull;
    memcpy(&r, &bits, 8);
  }
  return pk_bf16_from_f32((float)r); /* exact: r has 8 significant bits (or is infinite) */
}
/* An integer rounded once (RNE) to `precision` significant bits, as a float. */
PK_INTERNAL float pk_float_from_i64(int64_t z, int precision) {
  uint64_t magnitude = z < 0 ? (uint64_t)0 - (uint64_t)z : (uint64_t)z, kept = magnitude, rest, half;
  int width = 0, shift = 0;
  float value;
  while (width < 64 && (magnitude >> width) != 0) ++width;
  if (width > precision) {
    shift = width - precision;
    rest = magnitude & (((uint64_t)1 << shift) - 1);
    half = (uint64_t)1 << (shift - 1);
    kept = magnitude >> shift;
    if (rest > half || (rest == half && (kept & 1))) ++kept;
  }
  value = ldexpf((float)kept, shift);
  return z < 0 ? -value : value;
}

/* Z arithmetic is exact: a result outside int64 is an error, never a wrapped value. */
PK_INTERNAL int64_t pk_add_i64(pk_context* cx, int64_t a, int64_t b) {
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) pk_fail(cx, "integer overflow in `add`");
  return a + b;
}
PK_INTERNAL int64_t pk_sub_i64(pk_context* cx, int64_t a, int64_t b) {
  if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b)) pk_fail(cx, "integer overflow in `sub`");
  return a - b;
}
PK_INTERNAL int64_t pk_mul_i64(pk_context* cx, int64_t a, int64_t b) {
  if (a != 0 && b != 0) {
    if ((a == -1 && b == INT64_MIN) || (b == -1 && a == INT64_MIN)) pk_fail(cx, "integer overflow in `mul`");
    if (a != -1 && b != -1) {
      int64_t r = (int64_t)((uint64_t)a * (uint64_t)b);
      if (r / b != a) pk_fail(cx, "integer overflow in `mul`");
    }
  }
  return (int64_t)((uint64_t)a * (uint64_t)b);
}
PK_INTERNAL int64_t pk_neg_i64(pk_context* cx, int64_t a) { return pk_sub_i64(cx, 0, a); }
PK_INTERNAL int64_t pk_abs_i64(pk_context* cx, int64_t a) { return a < 0 ? pk_sub_i64(cx, 0, a) : a; }
PK_INTERNAL int64_t pk_max_i64(int64_t a, int64_t b) { return a > b ? a : b; }
PK_INTERNAL int64_t pk_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
)C";

// The safetensors reader and integer-weight quantization.
constexpr const char* kReader = R"C(
/* safetensors: an 8-byte little-endian header length, the JSON header, the tensors' bytes. */
typedef struct pk_tensor_info {
  char name[256];
  char dtype[16];
  int64_t shape[16];
  int rank;
  uint64_t begin, end;
} pk_tensor_info;
typedef struct pk_file {
  FILE* file;
  uint64_t data_start, size;
  char* header;
  const char* at;
} pk_file;

PK_INTERNAL void pk_skip_space(pk_file* f) { while (*f->at == ' ' || *f->at == '\n' || *f->at == '\r' || *f->at == '\t') ++f->at; }
PK_INTERNAL int pk_expect(pk_file* f, char c) { pk_skip_space(f); if (*f->at != c) return 0; ++f->at; return 1; }
PK_INTERNAL int pk_string(pk_file* f, char* out, size_t size) {
  size_t n = 0;
  if (!pk_expect(f, '"')) return 0;
  while (*f->at && *f->at != '"') {
    char c = *f->at++;
    if (c == '\\') { c = *f->at++; if (c != '"' && c != '\\' && c != '/') c = '?'; }
    if (n + 1 < size) out[n++] = c;
  }
  if (out && size) out[n] = 0;
  return *f->at++ == '"';
}
PK_INTERNAL int pk_integer(pk_file* f, int64_t* out) {
  char* end;
  pk_skip_space(f);
  *out = (int64_t)strtoll(f->at, &end, 10);
  if (end == f->at) return 0;
  f->at = end;
  return 1;
}
PK_INTERNAL int pk_skip_value(pk_file* f) {
  int depth = 0;
  char scratch[2];
  pk_skip_space(f);
  do {
    pk_skip_space(f);
    if (*f->at == '"') { if (!pk_string(f, scratch, sizeof scratch)) return 0; }
    else if (*f->at == '{' || *f->at == '[') { ++depth; ++f->at; }
    else if (*f->at == '}' || *f->at == ']') { --depth; ++f->at; }
    else if (*f->at == 0) return 0;
    else ++f->at;
  } while (depth > 0);
  return 1;
}
PK_INTERNAL int pk_integer_list(pk_file* f, int64_t* out, int capacity, int* count) {
  *count = 0;
  if (!pk_expect(f, '[')) return 0;
  if (pk_expect(f, ']')) return 1;
  do {
    int64_t v;
    if (*count >= capacity || !pk_integer(f, &v)) return 0;
    out[(*count)++] = v;
  } while (pk_expect(f, ','));
  return pk_expect(f, ']');
}
PK_INTERNAL int pk_tensor_fields(pk_file* f, pk_tensor_info* t) {
  char key[32];
  int64_t offsets[2];
  int count = 0;
  if (!pk_expect(f, '{')) return 0;
  if (pk_expect(f, '}')) return 1;
  do {
    if (!pk_string(f, key, sizeof key) || !pk_expect(f, ':')) return 0;
    if (!strcmp(key, "dtype")) { if (!pk_string(f, t->dtype, sizeof t->dtype)) return 0; }
    else if (!strcmp(key, "shape")) { if (!pk_integer_list(f, t->shape, 16, &t->rank)) return 0; }
    else if (!strcmp(key, "data_offsets")) {
      if (!pk_integer_list(f, offsets, 2, &count) || count != 2 || offsets[0] < 0 || offsets[1] < offsets[0]) return 0;
      t->begin = (uint64_t)offsets[0], t->end = (uint64_t)offsets[1];
    } else if (!pk_skip_value(f)) return 0;
  } while (pk_expect(f, ','));
  return pk_expect(f, '}');
}
/* Finds tensor `name`: 1 found, 0 absent, -1 a malformed header. */
PK_INTERNAL int pk_find_tensor(pk_file* f, const char* name, pk_tensor_info* t) {
  char key[256];
  f->at = f->header;
  if (!pk_expect(f, '{')) return -1;
  if (pk_expect(f, '}')) return 0;
  do {
    if (!pk_string(f, key, sizeof key) || !pk_expect(f, ':')) return -1;
    if (!strcmp(key, name)) {
      memset(t, 0, sizeof *t);
      strncpy(t->name, name, sizeof t->name - 1);
      return pk_tensor_fields(f, t) ? 1 : -1;
    }
    if (!pk_skip_value(f)) return -1;
  } while (pk_expect(f, ','));
  return 0;
}
PK_INTERNAL int pk_open(pk_file* f, const char* path, char* message, size_t size) {
  unsigned char length[8];
  uint64_t n = 0;
  int i;
  memset(f, 0, sizeof *f);
  f->file = fopen(path, "rb");
  if (!f->file) { snprintf(message, size, "cannot open %s", path); return 0; }
  if (fread(length, 1, 8, f->file) != 8) { snprintf(message, size, "%s is not a safetensors file", path); return 0; }
  for (i = 7; i >= 0; --i) n = n << 8 | length[i];
  if (n > ((uint64_t)100 << 20)) { snprintf(message, size, "%s: header too large", path); return 0; }
  f->header = (char*)malloc((size_t)n + 1);
  if (!f->header || fread(f->header, 1, (size_t)n, f->file) != (size_t)n) { snprintf(message, size, "%s: cannot read the header", path); return 0; }
  f->header[n] = 0;
  f->data_start = 8 + n;
  return 1;
}
PK_INTERNAL void pk_close(pk_file* f) {
  if (f->file) fclose(f->file);
  free(f->header);
  memset(f, 0, sizeof *f);
}
PK_INTERNAL int pk_dtype_bytes(const char* dtype) {
  if (!strcmp(dtype, "F64") || !strcmp(dtype, "I64")) return 8;
  if (!strcmp(dtype, "F32") || !strcmp(dtype, "I32")) return 4;
  if (!strcmp(dtype, "BF16")) return 2;
  if (!strcmp(dtype, "I8") || !strcmp(dtype, "U8") || !strcmp(dtype, "BOOL")) return 1;
  return 0;
}
PK_INTERNAL double pk_element_as_double(const char* dtype, const unsigned char* p) {
  uint64_t u = 0;
  int i, n = pk_dtype_bytes(dtype);
  double d;
  float f;
  for (i = n - 1; i >= 0; --i) u = u << 8 | p[i];
  if (!strcmp(dtype, "F64")) { memcpy(&d, &u, 8); return d; }
  if (!strcmp(dtype, "F32")) { uint32_t b = (uint32_t)u; memcpy(&f, &b, 4); return f; }
  if (!strcmp(dtype, "BF16")) return pk_f32_from_bf16((uint16_t)u);
  if (!strcmp(dtype, "I64")) { int64_t v; memcpy(&v, &u, 8); return (double)v; }
  if (!strcmp(dtype, "I32")) return (double)(int32_t)(uint32_t)u;
  if (!strcmp(dtype, "I8")) return (double)(int8_t)(uint8_t)u;
  return (double)(uint8_t)u;
}
PK_INTERNAL int64_t pk_element_as_i64(const char* dtype, const unsigned char* p) {
  uint64_t u = 0;
  int i, n = pk_dtype_bytes(dtype);
  int64_t v;
  for (i = n - 1; i >= 0; --i) u = u << 8 | p[i];
  if (!strcmp(dtype, "I64")) { memcpy(&v, &u, 8); return v; }
  if (!strcmp(dtype, "I32")) return (int32_t)(uint32_t)u;
  if (!strcmp(dtype, "I8")) return (int8_t)(uint8_t)u;
  return (int64_t)u;
}
/* Integer weights (exec/native/kernels_int.cpp): q = round(w / s) to nearest even, clamped to
   ±qmax, one f32 scale per index of every axis but `over` (or per `group` elements along it);
   absmax s = f32(max|w| / qmax), pow2 the least power of two >= that. They are kept as their
   codes (int8 one a byte; int4 two a byte, low nibble first) and scales, in one allocation, and
   element i is read as its meaning f32(q·s), what the native kernels compute with. */
typedef struct {
  uint8_t* q;
  float* scales;
  int bits;
  pk_index stride, extent, group; /* axis `over`: its stride and extent; the group (0: the axis) */
} pk_qweights;
/* A view of a quantized parameter from element `base` (a layer of a stack). */
typedef struct {
  const pk_qweights* w;
  pk_index base;
} pk_qview;
PK_INTERNAL pk_index pk_scale_index(const pk_qweights* w, pk_index index) {
  const pk_index outer = index / (w->stride * w->extent), inner = index % w->stride;
  if (w->group == 0) return outer * w->stride + inner;
  return (outer * (w->extent / w->group) + index / w->stride % w->extent / w->group) * w->stride + inner;
}
PK_INTERNAL float pk_qat(const pk_qview* v, pk_index i) {
  const pk_index index = v->base + i;
  int q;
  if (v->w->bits == 8) {
    q = (int8_t)v->w->q[index];
  } else {
    q = (v->w->q[index / 2] >> ((index % 2) * 4)) & 0xF;
    q = q >= 8 ? q - 16 : q;
  }
  return (float)q * v->w->scales[pk_scale_index(v->w, index)];
}
PK_INTERNAL float pk_scale_of(double max_abs, int qmax, int pow2) {
  double s, mantissa;
  int exponent;
  if (max_abs == 0) return 0.0f;
  s = max_abs / qmax;
  if (!pow2) return (float)s;
  mantissa = frexp(s, &exponent);
  return (float)ldexp(1.0, mantissa == 0.5 ? exponent - 1 : exponent);
}
/* `values` quantized (one free() releases it); NULL: out of memory. */
PK_INTERNAL pk_qweights* pk_quantize(const double* values, pk_index count, const int64_t* shape, int rank, int bits, int over,
                                     int pow2, int64_t group) {
  const int qmax = (1 << (bits - 1)) - 1;
  const pk_index per_scale = (pk_index)(group == 0 ? shape[over] : group) > 0 ? (pk_index)(group == 0 ? shape[over] : group) : 1;
  const pk_index scales = shape[over] == 0 ? 0 : count / per_scale;
  const pk_index bytes = bits == 8 ? count : (count + 1) / 2;
  pk_qweights* w = (pk_qweights*)calloc(1, sizeof(pk_qweights) + (size_t)scales * sizeof(float) + (size_t)bytes + 1);
  double* max_abs = (double*)calloc((size_t)(scales ? scales : 1), sizeof(double));
  pk_index i, c;
  int a;
  if (!w || !max_abs) { free(w); free(max_abs); return NULL; }
  w->scales = (float*)(w + 1);
  w->q = (uint8_t*)(w->scales + scales);
  w->bits = bits;
  w->stride = 1;
  for (a = rank - 1; a > over; --a) w->stride *= (pk_index)shape[a];
  w->extent = (pk_index)shape[over];
  w->group = (pk_index)group;
  for (i = 0; i < count; ++i) {
    double* m = &max_abs[pk_scale_index(w, i)];
    *m = *m < fabs(values[i]) ? fabs(values[i]) : *m; /* std::max(m, |w|) */
  }
  for (c = 0; c < scales; ++c) w->scales[c] = pk_scale_of(max_abs[c], qmax, pow2);
  for (i = 0; i < count; ++i) {
    const float s = w->scales[pk_scale_index(w, i)];
    double q = s == 0 ? 0.0 : nearbyint(values[i] / s);
    int qi;
    q = q < -1.0 * qmax ? -1.0 * qmax : q > 1.0 * qmax ? 1.0 * qmax : q;
    qi = (int)q;
    if (bits == 8) w->q[i] = (uint8_t)(int8_t)qi;
    else w->q[i / 2] |= (uint8_t)((qi & 0xF) << ((i % 2) * 4));
  }
  free(max_abs);
  return w;
}
/* Reads tensor `name` of `shape` (its `rank` axes; a leading sample axis of extent 1 allowed
   when `sample_axis`), as doubles (`reals`) or int64 (`integers`): 1, or 0 with a message. */
PK_INTERNAL int pk_read_tensor(pk_file* f, const char* name, const int64_t* shape, int rank, int sample_axis,
                          double* reals, int64_t* integers, char* message, size_t size) {
  pk_tensor_info t;
  int found = pk_find_tensor(f, name, &t), i, skip, bytes, is_real;
  uint64_t count = 1, k;
  unsigned char* data;
  if (found < 0) { snprintf(message, size, "malformed safetensors header"); return 0; }
  if (!found) { snprintf(message, size, "no tensor `%s`", name); return 0; }
  skip = sample_axis && t.rank == rank + 1 && t.shape[0] == 1;
  if (t.rank != rank + skip) { snprintf(message, size, "tensor `%s` has rank %d, expected %d", name, t.rank, rank); return 0; }
  for (i = 0; i < rank; ++i) {
    if (t.shape[i + skip] != shape[i]) { snprintf(message, size, "tensor `%s` has the wrong shape", name); return 0; }
    count *= (uint64_t)shape[i];
  }
  bytes = pk_dtype_bytes(t.dtype);
  is_real = !strcmp(t.dtype, "F64") || !strcmp(t.dtype, "F32") || !strcmp(t.dtype, "BF16");
  if (!bytes || (integers && is_real)) { snprintf(message, size, "tensor `%s` has dtype %s", name, t.dtype); return 0; }
  if (t.end - t.begin != count * (uint64_t)bytes) { snprintf(message, size, "tensor `%s`: its data offsets disagree with its shape", name); return 0; }
  data = (unsigned char*)malloc((size_t)(t.end - t.begin) + 1);
  if (!data) { snprintf(message, size, "out of memory"); return 0; }
  if (fseek(f->file, (long)(f->data_start + t.begin), SEEK_SET) != 0 ||
      fread(data, 1, (size_t)(t.end - t.begin), f->file) != (size_t)(t.end - t.begin)) {
    free(data);
    snprintf(message, size, "tensor `%s`: cannot read its data", name);
    return 0;
  }
  for (k = 0; k < count; ++k) {
    if (reals) reals[k] = pk_element_as_double(t.dtype, data + k * (uint64_t)bytes);
    else integers[k] = pk_element_as_i64(t.dtype, data + k * (uint64_t)bytes);
  }
  free(data);
  return 1;
}
)C";

// The driver's safetensors writer.
constexpr const char* kWriter = R"C(
typedef struct pk_output {
  const char* name;
  const char* dtype;
  int bytes;
  const int64_t* shape;
  int rank;
  const void* data;
  uint64_t count;
} pk_output;
/* Writes the outputs to `path` (little-endian safetensors): 1, or 0. */
PK_INTERNAL int pk_write_outputs(const char* path, const pk_output* outputs, int n) {
  char header[65536], *at = header;
  uint64_t offset = 0, length;
  unsigned char prefix[8];
  int i, j;
  FILE* file;
  at += sprintf(at, "{");
  for (i = 0; i < n; ++i) {
    uint64_t size = outputs[i].count * (uint64_t)outputs[i].bytes;
    at += sprintf(at, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[", i ? "," : "", outputs[i].name, outputs[i].dtype);
    for (j = 0; j < outputs[i].rank; ++j) at += sprintf(at, "%s%lld", j ? "," : "", (long long)outputs[i].shape[j]);
    at += sprintf(at, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)offset, (unsigned long long)(offset + size));
    offset += size;
  }
  at += sprintf(at, "}");
  while ((at - header) % 8) *at++ = ' ';
  length = (uint64_t)(at - header);
  for (i = 0; i < 8; ++i) prefix[i] = (unsigned char)(length >> (8 * i));
  file = fopen(path, "wb");
  if (!file) return 0;
  fwrite(prefix, 1, 8, file);
  fwrite(header, 1, (size_t)length, file);
  for (i = 0; i < n; ++i) fwrite(outputs[i].data, (size_t)outputs[i].bytes, (size_t)outputs[i].count, file);
  return fclose(file) == 0;
}
)C";

}  // namespace

std::string c_real_literal(double value, bool as_float) {
  const char* suffix = as_float ? "f" : "";
  const std::string type = as_float ? "(float)" : "(double)";
  if (std::isnan(value)) return std::signbit(value) ? "(-" + type + "NAN)" : type + "NAN";
  if (std::isinf(value)) return value < 0 ? "(-" + type + "INFINITY)" : type + "INFINITY";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%a%s", value, suffix);
  return value < 0 || std::signbit(value) ? "(" + std::string(buffer) + ")" : std::string(buffer);
}

std::string c_runtime_prelude() {
  return kPrelude;
}

std::string c_safetensors_reader() {
  return kReader;
}

std::string c_safetensors_writer() {
  return kWriter;
}

}  // namespace presk::export_c
