// The few CUDA driver API entry points kgen uses, resolved with dlsym from
// libcuda.so.1 at first use. The types are declared here (ABI-compatible with
// cuda.h) so this builds without the CUDA toolkit.
#pragma once
#include <cstddef>
#include <string>

namespace kgen::rt::cu {

using Result = int;  // CUresult; 0 = CUDA_SUCCESS
using Device = int;
using Context = struct CUctx_st*;
using Module = struct CUmod_st*;
using Function = struct CUfunc_st*;
using Stream = struct CUstream_st*;
using DevicePtr = unsigned long long;

// cuDeviceGetAttribute values used (CUdevice_attribute in cuda.h).
enum Attr : int {
  kMaxThreadsPerBlock = 1,
  kMaxBlockDimX = 2,
  kMaxBlockDimY = 3,
  kMaxBlockDimZ = 4,
  kMaxSharedPerBlock = 8,
  kWarpSize = 10,
  kMultiprocessors = 16,
  kCcMajor = 75,
  kCcMinor = 76,
};

struct Driver {
  Result (*Init)(unsigned);
  Result (*DriverGetVersion)(int*);
  Result (*DeviceGetCount)(int*);
  Result (*DeviceGet)(Device*, int);
  Result (*DeviceGetName)(char*, int, Device);
  Result (*DeviceGetAttribute)(int*, int, Device);
  Result (*DevicePrimaryCtxRetain)(Context*, Device);
  Result (*DevicePrimaryCtxRelease)(Device);
  Result (*CtxSetCurrent)(Context);
  Result (*CtxSynchronize)();
  Result (*ModuleLoadData)(Module*, const void*);
  Result (*ModuleUnload)(Module);
  Result (*ModuleGetFunction)(Function*, Module, const char*);
  Result (*MemAlloc)(DevicePtr*, size_t);
  Result (*MemFree)(DevicePtr);
  Result (*MemcpyHtoD)(DevicePtr, const void*, size_t);
  Result (*MemcpyDtoH)(void*, DevicePtr, size_t);
  Result (*LaunchKernel)(Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, Stream, void**,
                         void**);
  Result (*GetErrorString)(Result, const char**);

  // Throws std::runtime_error("cuda: <what>: <driver message>") unless r == 0.
  void check(Result r, const char* what) const;
};

// The process-wide driver, loaded and cuInit'ed once; nullptr with the
// reason in *why when libcuda is missing or cuInit fails.
const Driver* driver(std::string* why = nullptr);

}  // namespace kgen::rt::cu
