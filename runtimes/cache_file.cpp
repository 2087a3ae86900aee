#include "runtimes/cache_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "ir/hash.h"

namespace kgen::rt {

namespace {

constexpr char kMagic[8] = {'K', 'G', 'E', 'N', 'C', 'E', '0', '1'};
constexpr size_t kHeader = 32;
constexpr uint64_t kSections = 4;
// A fixed seed so the checksum differs from other uses of the same hasher.
constexpr uint64_t kChecksumSeed = 0x6b67656e63616368ull;  // "kgencach"

void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
uint64_t get_u64(const std::string& s, size_t at) {
  uint64_t v;
  std::memcpy(&v, s.data() + at, 8);
  return v;
}

uint64_t checksum(const char* p, size_t n) {
  ir::Hasher h(kChecksumSeed);
  h.add(std::string_view(p, n));
  return h.finish();
}

}  // namespace

std::string encode_cache_entry(const CacheEntry& e) {
  std::string payload;
  for (const std::string* s : {&e.key_text, &e.meta, &e.source, &e.artifact}) {
    put_u64(payload, s->size());
    payload += *s;
  }
  std::string out(kMagic, 8);
  put_u64(out, payload.size());
  put_u64(out, checksum(payload.data(), payload.size()));
  put_u64(out, kSections);
  return out + payload;
}

DecodeResult decode_cache_entry(const std::string& b) {
  DecodeResult r;
  if (b.size() < kHeader) return {std::nullopt, "truncated header (" + std::to_string(b.size()) + " bytes)"};
  if (std::memcmp(b.data(), kMagic, 8) != 0) return {std::nullopt, "bad magic"};
  uint64_t size = get_u64(b, 8), sum = get_u64(b, 16), sections = get_u64(b, 24);
  if (sections != kSections) return {std::nullopt, "unexpected section count " + std::to_string(sections)};
  if (size != b.size() - kHeader)
    return {std::nullopt, "payload is " + std::to_string(b.size() - kHeader) + " bytes, header says " + std::to_string(size)};
  if (checksum(b.data() + kHeader, size) != sum) return {std::nullopt, "checksum mismatch"};
  CacheEntry e;
  size_t at = kHeader;
  for (std::string* s : {&e.key_text, &e.meta, &e.source, &e.artifact}) {
    if (b.size() - at < 8) return {std::nullopt, "truncated section header"};
    uint64_t n = get_u64(b, at);
    at += 8;
    if (n > b.size() - at) return {std::nullopt, "section overruns the file"};
    s->assign(b, at, n);
    at += n;
  }
  if (at != b.size()) return {std::nullopt, "trailing bytes"};
  r.entry = std::move(e);
  return r;
}

std::optional<std::string> read_file_bytes(const std::filesystem::path& p) {
  // One sized read: a character-wise copy costs more than the kernel load it feeds.
  std::ifstream f(p, std::ios::binary | std::ios::ate);
  if (!f) return std::nullopt;
  const std::streamoff size = f.tellg();
  if (size < 0) return std::nullopt;
  std::string s(size_t(size), '\0');
  f.seekg(0);
  if (!f.read(s.data(), size)) return std::nullopt;
  return s;
}

bool write_file_atomically(const std::filesystem::path& dest, const std::string& bytes, std::string* error) {
  auto fail = [&](const std::string& what) {
    if (error) *error = what + ": " + std::strerror(errno);
    return false;
  };
  std::error_code ec;
  std::filesystem::create_directories(dest.parent_path(), ec);
  // pid + a per-process counter: unique among concurrent writers and threads.
  static std::atomic<uint64_t> counter{0};
  std::filesystem::path tmp = dest;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return fail("cannot create " + tmp.string());
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int saved = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      errno = saved;
      return fail("cannot write " + tmp.string());
    }
    done += size_t(n);
  }
  // No fsync: a crash may leave the new name on unwritten blocks, and such an
  // entry fails its checksum and is rebuilt; syncing cost each first compile
  // a disk flush, milliseconds to tens of them on a busy virtual disk.
  if (::close(fd) != 0) {
    int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    return fail("cannot flush " + tmp.string());
  }
  if (::rename(tmp.c_str(), dest.c_str()) != 0) {
    int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    return fail("cannot rename to " + dest.string());
  }
  return true;
}

bool is_cache_temp_file(const std::filesystem::path& p) { return p.filename().string().find(".tmp.") != std::string::npos; }

}  // namespace kgen::rt
