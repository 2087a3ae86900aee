// The on-disk format of one kernel-cache entry, and writing it atomically.
//
// One file holds everything an entry needs (key text, metadata, generated
// source, artifact), so a reader can never pair the source of one build with
// the artifact of another. Layout: a fixed 32-byte header
//   "KGENCE01" | u64 payload size | u64 payload checksum | u64 section count
// then the payload: per section a u64 length and the bytes. The checksum
// (ir::Hasher over the payload) catches truncation and flipped bits; the key
// text inside catches two keys whose file names (64-bit key hashes) collide.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

namespace kgen::rt {

struct CacheEntry {
  std::string key_text;  // the full key the file name hashes
  std::string meta;      // backend metadata ("entry=kgen_k0123...\n...")
  std::string source;    // generated target source (for humans and debugging)
  std::string artifact;  // what the backend loads (CPU: an ELF object for ORC)
};

std::string encode_cache_entry(const CacheEntry& e);

// Why a file was rejected; empty when it decoded.
struct DecodeResult {
  std::optional<CacheEntry> entry;
  std::string error;  // "truncated", "bad magic", "checksum mismatch", ...
};
DecodeResult decode_cache_entry(const std::string& bytes);

// Reads a whole file; nullopt when it does not exist or cannot be read.
std::optional<std::string> read_file_bytes(const std::filesystem::path& p);

// Writes `bytes` to `dest` so that no reader ever sees a partial file: a
// uniquely named temporary in the same directory, renamed over `dest`
// (not synced: after a crash an entry may be torn, which its checksum
// catches). Concurrent writers of the same entry each rename a complete file;
// the last one wins. Returns false (and leaves no temporary)
// on failure: a cache that cannot write is slower, never wrong.
bool write_file_atomically(const std::filesystem::path& dest, const std::string& bytes, std::string* error = nullptr);

// True for the temporaries write_file_atomically leaves behind when a
// process dies mid-write (cleared by `kgen cache clear`, ignored otherwise).
bool is_cache_temp_file(const std::filesystem::path& p);

}  // namespace kgen::rt
