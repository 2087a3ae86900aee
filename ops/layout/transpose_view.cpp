// The "transpose" op's view of a problem and the kernels' fit (ops/layout/transpose_view.h).
#include "ops/layout/transpose_view.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace kgen::ops::transpose_detail {

std::vector<int> perm_of(const Problem& p) {
  const int R = int(p.dims.size());
  std::vector<int> perm(static_cast<size_t>(R));
  std::iota(perm.begin(), perm.end(), 0);
  if (R >= 2) std::swap(perm[size_t(R - 1)], perm[size_t(R - 2)]);
  if (p.attrs.count("perm")) {
    int64_t v = p.attr("perm");
    for (int k = R - 1; k >= 0; --k) {
      perm[size_t(k)] = int(v % 10);
      v /= 10;
    }
    if (v != 0) throw std::invalid_argument("perm has more digits than the rank");
  }
  std::vector<int> seen(static_cast<size_t>(R), 0);
  for (int a : perm) {
    if (a < 0 || a >= R || seen[size_t(a)]++) throw std::invalid_argument("perm is not a permutation of the axes");
  }
  return perm;
}

View view_of(const Problem& p) {
  const auto perm = perm_of(p);
  const int R = int(p.dims.size());
  std::vector<int64_t> st(static_cast<size_t>(R));
  int64_t s = 1;
  for (int a = R - 1; a >= 0; --a) {
    st[size_t(a)] = s;
    s *= p.dims[size_t(a)];
  }
  View v;
  for (int k = 0; k < R; ++k) {
    int64_t d = p.dims[size_t(perm[size_t(k)])], is = st[size_t(perm[size_t(k)])];
    if (d == 1) continue;
    if (!v.dims.empty() && v.in_stride.back() == is * d) {
      v.dims.back() *= d;
      v.in_stride.back() = is;
    } else {
      v.dims.push_back(d);
      v.in_stride.push_back(is);
    }
  }
  if (v.dims.empty()) v = {{1}, {1}};
  return v;
}

bool inner_contiguous(const View& v) { return v.in_stride.back() == 1; }

bool rows_fit(const View& v) { return inner_contiguous(v) && v.dims.size() >= 3 && v.dims.back() % 16 == 0; }

bool rows_a_inner(const View& v) {
  const size_t R = v.dims.size();
  return v.in_stride[R - 3] < v.in_stride[R - 2];
}

int narrow_mode(const View& v) {
  const size_t R = v.dims.size();
  if (R < 2 || v.in_stride[R - 2] != 1 || v.in_stride[R - 1] == 1) return 0;
  const int64_t A = v.dims[R - 2], B = v.dims[R - 1];
  const bool il = B >= 2 && B <= 24, dl = A >= 2 && A <= 16 && v.in_stride[R - 1] == A;
  if (il && (!dl || B <= A)) return 1;
  return dl ? 2 : 0;
}

bool narrow_streams(const View& v) {
  const size_t R = v.dims.size();
  const int64_t A = v.dims[R - 2], B = v.dims[R - 1];
  return narrow_mode(v) == 1 ? A % 16 == 0 && (A * B) % 16 == 0 : B % 16 == 0;
}

bool pairs32_fit(const Problem& p, const View& v) {
  const size_t R = v.dims.size();
  if (ir::Type(p.dtype).bytes() != 2 || R < 2 || v.in_stride[R - 2] != 1) return false;
  if (v.dims[R - 1] % 32 || v.dims[R - 2] % 32) return false;
  for (size_t a = 0; a + 2 < R; ++a)
    if (v.in_stride[a] % 2) return false;
  return v.in_stride[R - 1] % 2 == 0;
}

}  // namespace kgen::ops::transpose_detail
