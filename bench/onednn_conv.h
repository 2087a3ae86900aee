// oneDNN's convolution primitive (2.x C API) as a conv2d baseline, on NCHW
// f32 tensors the caller owns, the way a framework with NCHW tensors runs it:
//  - plain: the primitive on the NCHW layouts as they are;
//  - blocked: the primitive on the layouts it prefers (format `any`, e.g.
//    nChw16c), with the input reordered in and the output reordered back on
//    every run (the weights once, at construction, as a framework caches
//    them).
// run(blocked) runs one (run(true, true): the blocked primitive alone, no
// reorders); ok(blocked) is false when that form could not be
// created (then the benchmark reports only the other). impl() names
// oneDNN's kernel (e.g. "jit:avx512_core", "brgconv:avx512_core").
#pragma once
#include <dnnl.h>

#include <string>
#include <vector>

#include "ops/conv/conv.h"

namespace kgen::bench {

class OnednnConv {
 public:
  OnednnConv(const ops::ConvShape& s, const float* x, const float* w, float* y) {
    ok_ = dnnl_engine_create(&eng_, dnnl_cpu, 0) == dnnl_success &&
          dnnl_stream_create(&stream_, eng_, dnnl_stream_default_flags) == dnnl_success;
    if (!ok_) return;
    const int64_t g = s.groups;
    dnnl_dims_t xd = {s.n, s.c, s.h, s.w}, yd = {s.n, s.oc, s.oh(), s.ow()};
    // Grouped weights are 5-D (goihw); one group is the plain 4-D oihw.
    dnnl_dims_t wd = {g, s.ocg(), s.cg(), s.kh, s.kw}, wd1 = {s.oc, s.c, s.kh, s.kw};
    ok_ = dnnl_memory_desc_init_by_tag(&user_x_, 4, xd, dnnl_f32, dnnl_nchw) == dnnl_success &&
          dnnl_memory_desc_init_by_tag(&user_y_, 4, yd, dnnl_f32, dnnl_nchw) == dnnl_success &&
          (g > 1 ? dnnl_memory_desc_init_by_tag(&user_w_, 5, wd, dnnl_f32, dnnl_goihw)
                 : dnnl_memory_desc_init_by_tag(&user_w_, 4, wd1, dnnl_f32, dnnl_oihw)) == dnnl_success &&
          dnnl_memory_create(&ux_, &user_x_, eng_, const_cast<float*>(x)) == dnnl_success &&
          dnnl_memory_create(&uy_, &user_y_, eng_, y) == dnnl_success &&
          dnnl_memory_create(&uw_, &user_w_, eng_, const_cast<float*>(w)) == dnnl_success;
    if (!ok_) return;
    forms_[0].ok = make(s, false, forms_[0]);
    forms_[1].ok = make(s, true, forms_[1]);
  }
  ~OnednnConv() {
    for (Form& f : forms_) {
      for (dnnl_primitive_t p : {f.conv, f.rx, f.ry, f.rw})
        if (p) dnnl_primitive_destroy(p);
      for (dnnl_memory_t m : {f.x, f.y, f.w})
        if (m) dnnl_memory_destroy(m);
    }
    for (dnnl_memory_t m : {ux_, uy_, uw_})
      if (m) dnnl_memory_destroy(m);
    if (stream_) dnnl_stream_destroy(stream_);
    if (eng_) dnnl_engine_destroy(eng_);
  }
  OnednnConv(const OnednnConv&) = delete;
  OnednnConv& operator=(const OnednnConv&) = delete;

  bool ok(bool blocked) const { return ok_ && forms_[blocked].ok; }
  const std::string& impl(bool blocked) const { return forms_[blocked].impl; }
  // conv_only: the primitive alone, on the input a previous run reordered
  // (and its output left in the primitive's layout): a stricter bar.
  void run(bool blocked, bool conv_only = false) {
    Form& f = forms_[blocked];
    if (f.rx && !conv_only) exec2(f.rx, ux_, f.x);
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, f.x ? f.x : ux_}, {DNNL_ARG_WEIGHTS, f.w ? f.w : uw_},
                               {DNNL_ARG_DST, f.y ? f.y : uy_}};
    dnnl_primitive_execute(f.conv, stream_, 3, args);
    if (f.ry && !conv_only) exec2(f.ry, f.y, uy_);
    dnnl_stream_wait(stream_);
  }

 private:
  struct Form {
    bool ok = false;
    std::string impl;
    dnnl_primitive_t conv = nullptr, rx = nullptr, ry = nullptr, rw = nullptr;
    dnnl_memory_t x = nullptr, y = nullptr, w = nullptr;  // the primitive's own layouts (null: the user's)
  };

  void exec2(dnnl_primitive_t p, dnnl_memory_t from, dnnl_memory_t to) {
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    dnnl_primitive_execute(p, stream_, 2, args);
  }
  // A reorder from `from` (described by from_md) to a new buffer of `md`
  // when the two differ; its output memory goes to *mem.
  bool reorder(const dnnl_memory_desc_t* from_md, const dnnl_memory_desc_t* md, bool into_md, dnnl_primitive_t* prim,
               dnnl_memory_t* mem) {
    if (dnnl_memory_desc_equal(from_md, md)) return true;
    if (dnnl_memory_create(mem, md, eng_, DNNL_MEMORY_ALLOCATE) != dnnl_success) return false;
    dnnl_primitive_desc_t rpd = nullptr;
    const bool ok = (into_md ? dnnl_reorder_primitive_desc_create(&rpd, from_md, eng_, md, eng_, nullptr)
                             : dnnl_reorder_primitive_desc_create(&rpd, md, eng_, from_md, eng_, nullptr)) == dnnl_success &&
                    dnnl_primitive_create(prim, rpd) == dnnl_success;
    if (rpd) dnnl_primitive_desc_destroy(rpd);
    return ok;
  }
  bool make(const ops::ConvShape& s, bool blocked, Form& f) {
    dnnl_memory_desc_t xmd = user_x_, ymd = user_y_, wmd = user_w_;
    if (blocked) {
      dnnl_dims_t xd = {s.n, s.c, s.h, s.w}, yd = {s.n, s.oc, s.oh(), s.ow()};
      dnnl_dims_t wd = {s.groups, s.ocg(), s.cg(), s.kh, s.kw}, wd1 = {s.oc, s.c, s.kh, s.kw};
      if (dnnl_memory_desc_init_by_tag(&xmd, 4, xd, dnnl_f32, dnnl_format_tag_any) != dnnl_success ||
          dnnl_memory_desc_init_by_tag(&ymd, 4, yd, dnnl_f32, dnnl_format_tag_any) != dnnl_success ||
          dnnl_memory_desc_init_by_tag(&wmd, s.groups > 1 ? 5 : 4, s.groups > 1 ? wd : wd1, dnnl_f32,
                                       dnnl_format_tag_any) != dnnl_success)
        return false;
    }
    dnnl_dims_t strides = {s.sh, s.sw}, dil = {s.dh - 1, s.dw - 1}, pl = {s.pt, s.pl}, pr = {s.pb, s.pr};
    dnnl_convolution_desc_t cd;
    dnnl_primitive_desc_t pd = nullptr;
    if (dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &xmd, &wmd, nullptr,
                                                   &ymd, strides, dil, pl, pr) != dnnl_success ||
        dnnl_primitive_desc_create(&pd, &cd, nullptr, eng_, nullptr) != dnnl_success)
      return false;
    const char* impl = nullptr;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl) f.impl = impl;
    const dnnl_memory_desc_t* px = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t* py = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    const dnnl_memory_desc_t* pw = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    bool ok = dnnl_primitive_create(&f.conv, pd) == dnnl_success && reorder(&user_x_, px, true, &f.rx, &f.x) &&
              reorder(&user_y_, py, false, &f.ry, &f.y) && reorder(&user_w_, pw, true, &f.rw, &f.w);
    dnnl_primitive_desc_destroy(pd);
    if (ok && f.rw) {  // the weights once
      exec2(f.rw, uw_, f.w);
      dnnl_stream_wait(stream_);
    }
    return ok;
  }

  bool ok_ = false;
  dnnl_engine_t eng_ = nullptr;
  dnnl_stream_t stream_ = nullptr;
  dnnl_memory_desc_t user_x_{}, user_y_{}, user_w_{};
  dnnl_memory_t ux_ = nullptr, uy_ = nullptr, uw_ = nullptr;
  Form forms_[2];
};

}  // namespace kgen::bench
