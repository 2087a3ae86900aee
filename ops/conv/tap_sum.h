// The CPU depthwise kernels' sum of taps for one line of 16 outputs:
// w·x products in two independent FMA chains (halving the dependent chain of
// KH·KW FMAs; three or four chains were no faster), then bias and ReLU.
#pragma once
#include <vector>

#include "dsl/dsl.h"

namespace kgen::ops {

class TapSum {
 public:
  void add(const dsl::Value& w, const dsl::Value& x) {
    if (chains_.size() < 2) chains_.push_back(w * x);
    else chains_[n_ % 2] = dsl::fma(w, x, chains_[n_ % 2]);
    ++n_;
  }
  // The sum (zero without taps) + bias (a line, or an empty Value), ReLU'd.
  dsl::Value result(const dsl::Value& bias, bool relu) const {
    dsl::Value v = chains_.empty() ? dsl::splat(0.0f, 16) : chains_.size() > 1 ? chains_[0] + chains_[1] : chains_[0];
    return epilogue(v, bias, relu);
  }
  static dsl::Value epilogue(dsl::Value v, const dsl::Value& bias, bool relu) {
    if (bias.valid()) v = v + bias;
    if (relu) v = dsl::max(v, 0.0f);
    return v;
  }

 private:
  std::vector<dsl::Value> chains_;
  size_t n_ = 0;
};

}  // namespace kgen::ops
