// Constructs outside the subset are refused with the construct, the reason
// and the file:line:col of the offending code.
#include <doctest/doctest.h>

#include "translate_test_util.h"

using namespace kgen;

namespace {
struct Refused {
  const char* what;
  const char* body;  // from line 3, after the include and `using namespace kgen;`
  uint32_t line, column;
  const char* message;  // a part of the message
};

const Refused kRefused[] = {
    {"recursion",
     "int f(int x) { if (x > 0) return f(x - 1); return 0; }\n"
     "KGEN_KERNEL void k(int* y) { y[0] = f(3); }\n",
     3, 34, "recursive call to 'f'"},
    {"virtual call",
     "struct S { virtual int v() const { return 1; } };\n"
     "KGEN_KERNEL void k(int* y) { y[0] = S{}.v(); }\n",
     4, 37, "virtual call to 'v'"},
    {"throw", "KGEN_KERNEL void k(int* y) {\n  if (y[0] < 0) throw 1;\n}\n", 4, 17, "exceptions"},
    {"try", "KGEN_KERNEL void k(int* y) {\n  try { y[0] = 1; } catch (...) {}\n}\n", 4, 3, "exceptions"},
    {"new", "KGEN_KERNEL void k(int* y) {\n  y[0] = *new int(3);\n}\n", 4, 11, "heap allocation"},
    {"delete", "KGEN_KERNEL void k(int* y) {\n  delete y;\n}\n", 4, 3, "heap allocation"},
    {"pointer to pointers", "KGEN_KERNEL void k(float** p) {}\n", 3, 28, "pointers stored in memory"},
    {"pointer variable modified", "KGEN_KERNEL void k(float* y) {\n  float* q = y;\n  q = y;\n  q[0] = 1;\n}\n", 4,
     10, "pointer 'q' is modified"},
    {"struct with a pointer field", "struct P { int* a; };\nKGEN_KERNEL void k(int* y) {\n  P p{y};\n  y[0] = 1;\n}\n", 5,
     5, "variable 'p': field 'a' of struct 'P' has type 'int *'"},
    {"struct with a constructor",
     "struct P { int a; P(int v) : a(v) {} };\nKGEN_KERNEL void k(int* y) {\n  P p(1);\n  y[0] = p.a;\n}\n", 5, 5,
     "structs in kernels are plain aggregates"},
    {"pointer to a struct", "struct P { int a; };\nKGEN_KERNEL void k(int* y) {\n  P p{};\n  P* q = &p;\n  y[0] = q->a;\n}\n",
     6, 10, "pointers to structs are not supported"},
    {"long double", "KGEN_KERNEL void k(float* y) {\n  long double v = 1;\n  y[0] = 1;\n}\n", 4, 15,
     "variable 'v' has type 'long double'"},
    {"global variable", "int g;\nKGEN_KERNEL void k(int* y) { y[0] = g; }\n", 4, 37, "global variable 'g'"},
    {"no body", "int ext(int);\nKGEN_KERNEL void k(int* y) { y[0] = ext(1); }\n", 4, 37, "no body in this file"},
    {"address of a local", "KGEN_KERNEL void k(int* y) {\n  int v = 0;\n  atomic_add(&v, 1);\n  y[0] = v;\n}\n", 5,
     14, "address of a local variable"},
    {"non-void kernel", "KGEN_KERNEL int k(int* y) { return 0; }\n", 3, 17, "must return void"},
    {"barrier under divergent control flow",
     "KGEN_KERNEL void k(int* y) {\n  if (global_id(0) < 3) barrier();\n  y[0] = 1;\n}\n", 4, 25,
     "barrier in divergent control flow"},
    {"return in a helper's loop",
     "int find(const int* v) {\n  for (int j = 0; j < 4; ++j)\n    if (v[j] < 0) return j;\n  return -1;\n}\n"
     "KGEN_KERNEL void k(const int* v, int* y) { y[0] = find(v); }\n",
     5, 19, "return inside a loop of helper 'find'"},
    {"switch fallthrough",
     "KGEN_KERNEL void k(int* y) {\n  switch (y[0]) {\n    case 1: y[1] = 2;\n    case 2: y[1] = 3; break;\n  }\n}\n", 6, 5,
     "falls through into it"},
    {"break inside a case", "KGEN_KERNEL void k(int* y) {\n  switch (y[0]) {\n    case 1: if (y[1]) break; y[1] = 2; break;\n  }\n}\n",
     5, 23, "break before the end of a case"},
    {"large local array", "KGEN_KERNEL void k(int* y) {\n  int big[100];\n  y[0] = big[1];\n}\n", 4, 7,
     "at most 64"},
    {"run-time lane index", "KGEN_KERNEL void k(const f32x4* x, float* y, int j) {\n  y[0] = x[0][j];\n}\n", 4, 15,
     "a lane index must be a constant expression"},
    {"a line comparison as a condition", "KGEN_KERNEL void k(const f32x4* x, int* y) {\n  if (x[0] < x[1]) y[0] = 1;\n}\n",
     4, 7, "not contextually convertible to 'bool'"},
    {"select with a mask of other lanes",
     "KGEN_KERNEL void k(const f32x4* a, const f32x8* b, f32x8* y) {\n  y[0] = select(a[0] < a[1], b[0], b[1]);\n}\n", 4,
     17, "select of f32x8 needs a mask line of 8 lanes"},
    {"select of scalars with a mask line",
     "KGEN_KERNEL void k(const f32x4* a, float* y) {\n  y[0] = select(a[0] < a[1], 1.0f, 2.0f);\n}\n", 4, 10,
     "no matching function for call to 'select'"},
    {"load_line of other lanes than the buffer's",
     "KGEN_KERNEL void k(const f16* x, f32x4* y) {\n  y[0] = load_line<f32x4>(x, 0u);\n}\n", 4, 10,
     "load_line() of f32x4 on a buffer of f16"},
    {"load_line from a buffer of lines",
     "KGEN_KERNEL void k(const f32x4* x, f32x4* y) {\n  y[0] = load_line<f32x4>(x, 0u);\n}\n", 4, 10,
     "no matching function for call to 'load_line'"},
    {"stream to a shared array",
     "KGEN_KERNEL KGEN_WORKGROUP(64) void k(float* y) {\n  KGEN_SHARED float sh[64];\n"
     "  stream(&sh[local_id(0)], 1.0f);\n  barrier();\n  y[0] = sh[0];\n}\n",
     5, 10, "stream() needs a buffer parameter, not a shared array"},
    {"prefetch of a local array",
     "KGEN_KERNEL void k(float* y) {\n  float a[4] = {1, 2, 3, 4};\n  prefetch(&a[1]);\n  y[0] = a[1];\n}\n", 5, 12,
     "prefetch() on a local array"},
    {"subgroup reduction under divergent control flow",
     "KGEN_KERNEL void k(float* y) {\n  if (global_id(0) < 3u) y[0] = subgroup_add(1.0f);\n}\n", 4, 33,
     "subgroup_add in divergent control flow"},
    {"parse error", "KGEN_KERNEL void k(int* y) {\n  y[0] = ;\n}\n", 4, 10, "expected expression"},
};
}  // namespace

TEST_CASE("refused constructs name what, why and where") {
  for (const Refused& r : kRefused) {
    CAPTURE(std::string(r.what));
    std::string code = std::string("#include \"kgen_kernel.h\"\nusing namespace kgen;\n") + r.body;
    try {
      translate::translate_source(code, "refused.cpp");
      FAIL("accepted");
    } catch (const ir::Error& e) {
      CAPTURE(std::string(e.what()));
      CHECK(e.message.find(r.message) != std::string::npos);
      REQUIRE(e.loc.known());
      CHECK(std::string(e.loc.file) == "refused.cpp");
      CHECK(e.loc.line == r.line);
      CHECK(e.loc.column == r.column);
    }
  }
}

TEST_CASE("an unknown kernel name lists the kernels of the file") {
  try {
    translate::translate_kernel(kgen::translate::testing::sample_path("histogram.cpp"), "nope");
    FAIL("accepted");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("histogram256_shared") != std::string::npos);
  }
}
