#include "runtimes/cpu_device.h"

#include "ir/debug.h"
#include "ir/passes.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <mutex>
#include <optional>
#include <unordered_map>

#include <sys/mman.h>

#include "codegen/cpp.h"
#include "ir/verifier.h"
#include "jit/jit.h"
#include "ir/hash.h"
#include "runtimes/kernel_cache.h"
#include "runtimes/thread_pool.h"

namespace kgen::rt {

namespace {

class CpuBuffer final : public Buffer {
 public:
  explicit CpuBuffer(size_t bytes) : Buffer(bytes) {
    // 64-byte aligned, size rounded up (aligned_alloc needs a multiple).
    // Buffers of 2 MiB and more are 2 MiB aligned and asked to be backed by
    // transparent huge pages: kernels walking packed GEMM panels, strided
    // rows or several big tensors at once otherwise miss the 4 KiB-page TLB.
    constexpr size_t kHuge = size_t(2) << 20;
    const size_t align = bytes >= kHuge ? kHuge : 64;
    size_t n = (std::max<size_t>(bytes, 1) + align - 1) / align * align;
    data_ = std::aligned_alloc(align, n);
    if (!data_) throw std::bad_alloc();
    if (align == kHuge) ::madvise(data_, n, MADV_HUGEPAGE);  // a hint: failure only costs speed
    owned_ = true;
  }
  // Memory owned elsewhere: a view's range of its parent, or caller memory (Device::wrap).
  CpuBuffer(void* data, size_t bytes) : Buffer(bytes), data_(data) {}
  ~CpuBuffer() override {
    if (owned_) std::free(data_);
  }
  void upload(const void* src, size_t bytes, size_t offset) override {
    check(bytes, offset, "upload");
    std::memcpy(static_cast<char*>(data_) + offset, src, bytes);
  }
  void download(void* dst, size_t bytes, size_t offset) const override {
    check(bytes, offset, "download");
    std::memcpy(dst, static_cast<const char*>(data_) + offset, bytes);
  }
  void* host_ptr() override { return data_; }

 private:
  void check(size_t bytes, size_t offset, const char* what) const {
    if (offset > bytes_ || bytes > bytes_ - offset)
      throw std::out_of_range(std::string("cpu buffer ") + what + " of " + std::to_string(bytes) + " bytes at offset " +
                              std::to_string(offset) + " exceeds its " + std::to_string(bytes_) + " bytes");
  }
  void* data_ = nullptr;
  bool owned_ = false;
};

// The generated C++ dereferences a buffer as its element type, and clang
// assumes a line (ext_vector) is aligned to its size; allocations are 64-byte
// aligned, caller memory (Device::wrap) may not be.
void check_alignment(const ir::Kernel& k, const LaunchArgs& a, void* const* ptrs) {
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    const size_t need = std::min<size_t>(64, std::bit_ceil(size_t(std::max(k.buffers[i].elem.bytes(), 1))));
    if (reinterpret_cast<uintptr_t>(ptrs[i]) % need != 0)
      throw std::invalid_argument("launch of kernel '" + k.name + "': buffer '" + k.buffers[i].name + "' (" +
                                  k.buffers[i].elem.str() + ") is at an address that is not " + std::to_string(need) +
                                  "-byte aligned, as its elements need (wrapped caller memory?)");
  }
}

// KGEN_NO_STREAM_ENTRY=1 keeps every launch on its kernel's plain entry.
bool stream_entries_on() {
  static const bool on = [] {
    const char* e = std::getenv("KGEN_NO_STREAM_ENTRY");
    return !(e && *e && *e != '0');
  }();
  return on;
}

// What the memory layer of the compile cache shares between every compile of
// one key: the linked module and, to guard against 64-bit hash collisions,
// the canonical (optimised) kernel it was built from.
struct CpuCode {
  CacheKey key;
  std::shared_ptr<jit::Module> module;
  codegen::KgenEntry entry = nullptr;
  ir::Kernel canonical;
  bool canonical_unknown = false;  // loaded through an alias: `canonical` is empty
  std::string source, symbol;
  std::string ir, assembly;  // only when the compiler produced them (keep_ir / KGEN_DEBUG)
  // codegen::item_stream_store_bytes of the kernel: nonzero when it has a
  // streaming entry, compiled on the first launch that writes past the cache.
  uint32_t stream_bytes = 0;
  mutable std::mutex stream_mu;
  mutable bool stream_tried = false;
  mutable std::shared_ptr<const CpuCode> stream;  // null until compiled, or when it failed
};

// The meta lines of a cache entry, and a value read back from them.
std::string code_meta(const CpuCode& c, const std::string& kernel_name) {
  return "entry=" + c.symbol + "\nkernel=" + kernel_name + "\nstream_bytes=" + std::to_string(c.stream_bytes) + "\n";
}
std::string meta_value(const std::string& meta, const std::string& name) {
  const size_t at = meta.find(name + "=");
  if (at == std::string::npos) return "";
  const size_t begin = at + name.size() + 1;
  return meta.substr(begin, meta.find('\n', begin) - begin);
}

class CpuKernel final : public CompiledKernel {
 public:
  CpuKernel(const ir::Kernel& k, std::shared_ptr<const CpuCode> code, const CompileOptions& opt, bool hit, double ms)
      : code_(std::move(code)), options_(opt) {
    kernel_ = k;
    source_ = code_->source;
    entry_ = code_->symbol;
    cache_hit_ = hit;
    compile_ms_ = ms;
  }
  const CpuCode& code() const { return *code_; }
  const CompileOptions& options() const { return options_; }
  std::string debug_ir() const override { return code_->ir; }
  std::string debug_asm() const override { return code_->assembly; }

 private:
  std::shared_ptr<const CpuCode> code_;
  CompileOptions options_;
};

// The entry symbol comes from the structural hash, not the kernel's name, so
// kernels that differ only in names share one artifact (`kgen emit` keeps the
// readable kgen_<name>).
std::string entry_symbol_for(uint64_t ir_hash) {
  char b[24];
  std::snprintf(b, sizeof b, "kgen_k%016llx", (unsigned long long)ir_hash);
  return b;
}

const std::string& toolchain_id() {
  static const std::string id = jit::jit_toolchain_id();
  return id;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct RunCtx {
  codegen::KgenEntry fn;
  const codegen::KgenArgs* args;
};

void run_range(void* ctx, uint64_t b, uint64_t e) {
  auto* r = static_cast<RunCtx*>(ctx);
  r->fn(r->args, b, e);
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      size_t c = line.find(':');
      return c == std::string::npos ? line : line.substr(c + 2);
    }
  return "unknown CPU";
}

// "clang 19.1.7 x86_64-pc-linux-gnu sapphirerapids" (the full id also lists
// every CPU feature; that belongs in cache keys, not in a description).
std::string toolchain_summary() {
  const std::string& id = toolchain_id();
  size_t cut = 0;
  for (int words = 0; words < 4 && cut != std::string::npos; ++words) cut = id.find(' ', cut + 1);
  return cut == std::string::npos ? id : id.substr(0, cut);
}

class CpuDevice final : public Device {
 public:
  explicit CpuDevice(const DeviceOptions& opt)
      : caps_(codegen::cpu_caps()), pool_(opt.threads), cache_(opt.cache ? *opt.cache : KernelCache::global()) {
    caps_.threads = pool_.threads();
  }

  std::string name() const override { return "cpu"; }
  std::string description() const override {
    // Computed once: plan-cache keys (graph/plan_cache.h) include it.
    static const std::string model = cpu_model(), toolchain = toolchain_summary();
    return "cpu: " + model + ", " + std::to_string(pool_.threads()) + " threads, " + toolchain;
  }
  const TargetCaps& caps() const override { return caps_; }
  std::unique_ptr<Buffer> alloc(size_t bytes) override { return std::make_unique<CpuBuffer>(bytes); }
  size_t view_alignment() const override { return 64; }  // as aligned as an allocation
  std::unique_ptr<Buffer> wrap(void* host, size_t bytes) override {
    if (!host && bytes) throw std::invalid_argument("cpu: wrap of " + std::to_string(bytes) + " bytes at a null pointer");
    return std::make_unique<CpuBuffer>(host, bytes);
  }
  bool wraps_without_copy() const override { return true; }

  bool concurrent_compile() const override { return true; }

  std::shared_ptr<CompiledKernel> compile(const ir::Kernel& k, const CompileOptions& opt) override {
    auto t0 = std::chrono::steady_clock::now();
    // keep_ir asks for the compiler's IR/assembly text, which only a fresh compile has.
    bool use_cache = !opt.keep_ir;
    // A kernel this device has prepared before (the same op in every layer,
    // a plan's step repeated per chunk): its cache key without the IR
    // pipeline, which costs ~7 ms per kernel where hashing the raw IR costs
    // microseconds.
    const uint64_t raw_hash = ir::structural_hash(k);
    const std::string memo_key = std::to_string(raw_hash) + "|" + opt.key();
    if (use_cache) {
      std::lock_guard<std::mutex> lock(memo_mu_);
      auto it = prepared_.find(memo_key);
      if (it != prepared_.end() && ir::structurally_equal(it->second.first, k))
        if (auto code = cache_.find_loaded<CpuCode>(it->second.second)) {
          double ms = ms_since(t0);
          ir::debug_log(1, "cache", "hit (memory, prepared) " + it->second.second.hex() + " for '" + k.name + "' in " + std::to_string(ms) + " ms");
          return std::make_shared<CpuKernel>(k, std::move(code), opt, true, ms);
        }
    }
    const CacheKey raw_key = raw_cache_key(raw_hash, opt);
    std::optional<CacheKey> alias_tried;  // the entry the alias named, already read from disk
    if (use_cache)
      if (auto hit = load_through_alias(raw_key, k, memo_key, alias_tried)) {
        double ms = ms_since(t0);
        ir::debug_log(1, "cache", "hit (disk, prepared) for '" + k.name + "' in " + std::to_string(ms) + " ms");
        return std::make_shared<CpuKernel>(k, std::move(hit), opt, true, ms);
      }
    // The cache key hashes the kernel after the IR pipeline, so kernels that
    // optimise to the same IR share an entry.
    ir::Kernel optimized = prepare_kernel(k, caps_, opt);
    const uint64_t ir_hash = ir::structural_hash(optimized);
    const CacheKey key = make_cache_key({ir_hash, "cpu-c++-orc", caps_key(caps_), opt.key(), toolchain_id()});
    if (use_cache) {
      std::lock_guard<std::mutex> lock(memo_mu_);
      prepared_.insert_or_assign(memo_key, std::pair<ir::Kernel, CacheKey>(k, key));
    }

    if (use_cache) {
      auto code = cache_.find_loaded<CpuCode>(key);
      const bool ours = !code || code->canonical_unknown || ir::structurally_equal(code->canonical, optimized);
      if (ours) cache_.store_alias(raw_key, key);
      if (code && ours) {
        double ms = ms_since(t0);
        ir::debug_log(1, "cache", "hit (memory) " + key.hex() + " for '" + k.name + "' in " + std::to_string(ms) + " ms");
        return std::make_shared<CpuKernel>(k, std::move(code), opt, true, ms);
      }
      if (code) {
        // Another kernel owns this key: compile this one privately, cache nothing.
        ir::debug_log(1, "cache", "structural hash collision on " + key.hex() + " for '" + k.name + "': compiling uncached");
        use_cache = false;
      } else if (!alias_tried || alias_tried->text != key.text) {
        if (auto hit = load_from_disk(key, &optimized)) {
          double ms = ms_since(t0);
          ir::debug_log(1, "cache", "hit (disk) " + key.hex() + " for '" + k.name + "' in " + std::to_string(ms) + " ms");
          return std::make_shared<CpuKernel>(k, cache_.keep_loaded(key, std::move(hit)), opt, true, ms);
        }
      }
    }

    auto code = build_code(optimized, k.name, key, entry_symbol_for(ir_hash), opt, false, use_cache, t0);
    const double ms = ms_since(t0);
    std::shared_ptr<const CpuCode> kept = code;
    if (use_cache) kept = cache_.keep_loaded(key, kept);
    return std::make_shared<CpuKernel>(k, std::move(kept), opt, false, ms);
  }

  std::shared_ptr<CompiledKernel> load_cached(const ir::Kernel& signature, uint64_t raw_hash, const CompileOptions& opt) override {
    if (opt.keep_ir) return nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    std::optional<CacheKey> key, tried;
    std::shared_ptr<const CpuCode> code = code_through_alias(raw_cache_key(raw_hash, opt), key, tried);
    if (!code) return nullptr;
    const double ms = ms_since(t0);
    ir::debug_log(1, "cache", "hit (disk, by hash) " + key->hex() + " for '" + signature.name + "' in " + std::to_string(ms) + " ms");
    return std::make_shared<CpuKernel>(signature, std::move(code), opt, true, ms);
  }

  KernelCache* kernel_cache() override { return &cache_; }

  void launch(const CompiledKernel& ck, const LaunchArgs& a) override {
    const auto* k = dynamic_cast<const CpuKernel*>(&ck);
    if (!k) throw std::invalid_argument("cpu launch: kernel '" + ck.kernel().name + "' was compiled for another device");
    validate_launch(ck.kernel(), a);
    // Argument block on the stack: no allocation for up to 16 buffers.
    void* small[16];
    std::vector<void*> big;
    void** ptrs = small;
    if (a.buffers.size() > 16) {
      big.resize(a.buffers.size());
      ptrs = big.data();
    }
    for (size_t i = 0; i < a.buffers.size(); ++i) {
      ptrs[i] = a.buffers[i]->host_ptr();
      if (!ptrs[i]) throw std::invalid_argument("cpu launch: buffer " + std::to_string(i) + " is not host memory");
    }
    check_alignment(ck.kernel(), a, ptrs);
    codegen::KgenArgs args{ptrs, reinterpret_cast<const unsigned long long*>(a.scalars.data()),
                           {a.dims.grid[0], a.dims.grid[1], a.dims.grid[2]},
                           {a.dims.workgroup[0], a.dims.workgroup[1], a.dims.workgroup[2]}};
    RunCtx ctx{entry_for(*k, a, ptrs), &args};
    pool_.run(a.dims.total_groups(), run_range, &ctx);
  }

  void synchronize() override {}  // launches are synchronous

 protected:
  std::unique_ptr<Buffer> make_view(Buffer& parent, size_t offset, size_t bytes) override {
    auto* p = dynamic_cast<CpuBuffer*>(&parent);
    if (!p) throw std::invalid_argument("cpu: view of a buffer that another device allocated");
    return std::make_unique<CpuBuffer>(static_cast<char*>(p->host_ptr()) + offset, bytes);
  }

 private:
  // Emits `optimized` as C++ with entry `symbol`, compiles and links it, and
  // stores the object under `key` when use_cache. stream: the streaming entry
  // (codegen::CppOptions::stream_item_stores). t0: when the compile began,
  // for the KGEN_DEBUG report.
  std::shared_ptr<CpuCode> build_code(const ir::Kernel& optimized, const std::string& name, const CacheKey& key,
                                      const std::string& symbol, const CompileOptions& opt, bool stream, bool use_cache,
                                      std::chrono::steady_clock::time_point t0) {
    const bool lean = codegen::lean_passes_suffice(optimized);
    codegen::CppOptions copt;
    copt.assume_independent_items = opt.assume_independent_items;
    copt.fold_item_tail = lean && caps_.vector_bits >= 512 && !stream;
    copt.stream_item_stores = stream;
    copt.entry = symbol;
    auto code = std::make_shared<CpuCode>();
    code->key = key;
    code->canonical = optimized;
    code->symbol = symbol;
    code->stream_bytes = stream ? 0 : codegen::item_stream_store_bytes(optimized);
    code->source = codegen::emit_cpp(optimized, copt);
    if (ir::debug_level() >= 2) ir::debug_log(2, "source", "generated C++ for '" + name + "':\n" + code->source);
    jit::JitOptions jo;
    jo.opt_level = opt.opt_level;
    jo.keep_ir = jo.keep_asm = opt.keep_ir;
    jo.prefer_vector_bits = int(codegen::auto_vector_bits(optimized, caps_));
    jo.lean_passes = lean;
    jo.stream_aligned_stores = stream;
    jit::ObjectCode obj = jit::compile_to_object(code->source, jo);
    if (use_cache) cache_.store(key, {"", code_meta(*code, name), code->source, obj.bytes});
    code->ir = std::move(obj.ir);
    code->assembly = std::move(obj.assembly);
    if (ir::debug_level() >= 4 && !code->assembly.empty())
      ir::debug_log(4, "asm", "x86 assembly of '" + name + "':\n" + code->assembly);
    code->module = jit::load_object(std::move(obj.bytes), obj.stats);
    code->entry = code->module->lookup_fn<codegen::KgenEntry>(code->symbol);
    if (ir::debug_level() >= 1) {
      const auto& st = code->module->stats();
      ir::debug_log(1, "compile", "'" + name + "'" + (stream ? " (streaming entry)" : "") + " compiled in " +
                                      std::to_string(ms_since(t0)) + " ms (clang+opt " + std::to_string(st.frontend_ms) +
                                      ", codegen " + std::to_string(st.codegen_ms) + ", link " + std::to_string(st.link_ms) +
                                      (lean ? ", lean passes" : "") + "); cache miss " + key.hex());
    }
    return code;
  }

  // The entry a launch runs: the kernel's own, or its streaming entry when
  // it has one, the launch writes at least codegen::stream_min_output_bytes
  // (the output would leave the cache before anyone read it, so skipping
  // the read for ownership saves a third of its DRAM traffic or more), the
  // workgroup is whole 64-item steps and the written buffers 64-byte aligned.
  codegen::KgenEntry entry_for(const CpuKernel& k, const LaunchArgs& a, void* const* ptrs) {
    const CpuCode& code = k.code();
    if (!code.stream_bytes || a.dims.workgroup[0] % codegen::kStreamItemGroup != 0 || !stream_entries_on()) return code.entry;
    const double bytes = double(a.dims.grid[0]) * a.dims.workgroup[0] * code.stream_bytes;
    if (bytes < codegen::stream_min_output_bytes(caps_)) return code.entry;
    const ir::Kernel& sig = k.kernel();
    for (size_t i = 0; i < a.buffers.size(); ++i)
      if (sig.buffers[i].access != ir::Access::Read && reinterpret_cast<uintptr_t>(ptrs[i]) % 64 != 0) return code.entry;
    std::lock_guard<std::mutex> lock(code.stream_mu);
    if (!code.stream_tried) {
      code.stream_tried = true;
      try {
        code.stream = streaming_code(k, code);
      } catch (const std::exception& e) {  // the plain entry is as correct, only slower
        ir::debug_log(1, "compile", "streaming entry of '" + sig.name + "' failed, plain stores kept: " + e.what());
      }
    }
    return code.stream ? code.stream->entry : code.entry;
  }

  // The streaming entry of `plain`, from the cache or compiled.
  std::shared_ptr<const CpuCode> streaming_code(const CpuKernel& k, const CpuCode& plain) {
    const auto t0 = std::chrono::steady_clock::now();
    const CacheKey key = cache_key_from_text(plain.key.text + "streaming entry\n");
    const bool use_cache = !k.options().keep_ir;
    if (use_cache) {
      if (auto code = cache_.find_loaded<CpuCode>(key)) return code;
      if (auto code = load_from_disk(key, nullptr)) return cache_.keep_loaded(key, std::move(code));
    }
    const ir::Kernel optimized = plain.canonical_unknown ? prepare_kernel(k.kernel(), caps_, k.options()) : plain.canonical;
    auto code = build_code(optimized, k.kernel().name, key, plain.symbol + "_stream", k.options(), true, use_cache, t0);
    return use_cache ? cache_.keep_loaded(key, std::shared_ptr<const CpuCode>(code)) : code;
  }

  // A disk entry linked into the process, or null (miss, or an entry that
  // decoded but would not link: discarded and rebuilt by the caller).
  // `optimized` is null when the kernel after the pipeline is not at hand
  // (found through an alias): the 64-bit key then stands for it.
  std::shared_ptr<const CpuCode> load_from_disk(const CacheKey& key, const ir::Kernel* optimized) {
    std::optional<CacheEntry> e = cache_.load(key);
    if (!e) return nullptr;
    auto code = std::make_shared<CpuCode>();
    if (optimized) code->canonical = *optimized;
    code->canonical_unknown = !optimized;
    code->key = key;
    code->source = std::move(e->source);
    code->symbol = meta_value(e->meta, "entry");
    code->stream_bytes = uint32_t(std::strtoul(meta_value(e->meta, "stream_bytes").c_str(), nullptr, 10));
    try {
      code->module = jit::load_object(std::move(e->artifact));
      code->entry = code->module->lookup_fn<codegen::KgenEntry>(code->symbol);
    } catch (const std::exception& ex) {
      cache_.discard(key, ex.what());
      return nullptr;
    }
    return code;
  }

  // The code a previous process compiled for this raw kernel, through the
  // alias entry it left under `raw_key`: no IR pipeline on a warm start.
  std::shared_ptr<const CpuCode> load_through_alias(const CacheKey& raw_key, const ir::Kernel& k, const std::string& memo_key,
                                                    std::optional<CacheKey>& tried) {
    std::optional<CacheKey> key;
    std::shared_ptr<const CpuCode> code = code_through_alias(raw_key, key, tried);
    if (!code) return nullptr;
    std::lock_guard<std::mutex> lock(memo_mu_);
    prepared_.insert_or_assign(memo_key, std::pair<ir::Kernel, CacheKey>(k, *key));
    return code;
  }

  // The code the alias under `raw_key` names (memory layer first, then disk);
  // `key` receives that entry's key, `tried` it too when the disk was read.
  std::shared_ptr<const CpuCode> code_through_alias(const CacheKey& raw_key, std::optional<CacheKey>& key,
                                                    std::optional<CacheKey>& tried) {
    key = cache_.load_alias(raw_key);
    if (!key) return nullptr;
    std::shared_ptr<const CpuCode> code = cache_.find_loaded<CpuCode>(*key);
    if (code) return code;
    tried = key;
    code = load_from_disk(*key, nullptr);
    return code ? cache_.keep_loaded(*key, std::move(code)) : nullptr;
  }

  // The key of the alias entry that names a raw kernel's compiled code.
  CacheKey raw_cache_key(uint64_t raw_hash, const CompileOptions& opt) const {
    return make_cache_key({raw_hash, "cpu-c++-orc before-pipeline", caps_key(caps_), opt.key(), toolchain_id()});
  }

  TargetCaps caps_;
  ThreadPool pool_;
  KernelCache& cache_;
  // Raw kernel (hash | options) -> the kernel and its cache key (see compile).
  std::mutex memo_mu_;
  std::unordered_map<std::string, std::pair<ir::Kernel, CacheKey>> prepared_;
};

}  // namespace

std::unique_ptr<Device> create_cpu_device(const DeviceOptions& opt) { return std::make_unique<CpuDevice>(opt); }

}  // namespace kgen::rt
