// A whole file mapped read-only into memory, for weights used in place
// (GGUF, llama2.c): the shared owner unmaps it when the last user goes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace kgen::graph {

struct MappedFile {
  const uint8_t* data = nullptr;  // null for an empty file
  size_t size = 0;
  std::shared_ptr<const void> owner;
};

// Why a file could not be mapped ("cannot open: No such file or directory",
// "not a regular file", "cannot map: ..."); callers add the file's name in
// their own error type.
struct MapError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

MappedFile map_file(const std::string& path);

}  // namespace kgen::graph
