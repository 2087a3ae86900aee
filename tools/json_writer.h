// Minimal JSON object writer for the CLI's --json output (flat objects).
#pragma once
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

namespace kgen::tools {

inline std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if ((unsigned char)c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += c;
        }
    }
  }
  return o;
}

class JsonObject {
 public:
  JsonObject& add(const std::string& k, const std::string& v) { return raw(k, "\"" + json_escape(v) + "\""); }
  JsonObject& add(const std::string& k, const char* v) { return add(k, std::string(v)); }
  JsonObject& add(const std::string& k, bool v) { return raw(k, v ? "true" : "false"); }
  JsonObject& add(const std::string& k, double v) {
    if (!std::isfinite(v)) return raw(k, "null");
    std::ostringstream os;
    os.precision(10);
    os << v;
    return raw(k, os.str());
  }
  JsonObject& add(const std::string& k, int64_t v) { return raw(k, std::to_string(v)); }
  JsonObject& raw(const std::string& k, const std::string& v) {
    body_ += (body_.empty() ? "" : ", ") + std::string("\"") + json_escape(k) + "\": " + v;
    return *this;
  }
  std::string str() const { return "{" + body_ + "}"; }

 private:
  std::string body_;
};

}  // namespace kgen::tools
