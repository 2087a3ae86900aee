#include "ir/parser.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "ir/builder.h"
#include "ir/printer.h"

namespace kgen::ir {

namespace {

enum class Tok : uint8_t { Ident, Number, Value, String, Punct, End };

struct Token {
  Tok kind = Tok::End;
  std::string text;  // identifier, literal, string contents, punctuation char, or "%N"
  uint32_t line = 0, column = 0;
};

std::string describe(const Token& t) {
  switch (t.kind) {
    case Tok::End: return "end of input";
    case Tok::String: return "string \"" + t.text + "\"";
    default: return "'" + t.text + "'";
  }
}

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Splits the text into tokens up front; the parser then looks ahead freely.
class Lexer {
 public:
  Lexer(std::string_view src, const char* file) : src_(src), file_(file) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skip_space();
      Token t;
      t.line = line_;
      t.column = col_;
      if (pos_ >= src_.size()) {
        out.push_back(t);
        return out;
      }
      char c = src_[pos_];
      if (is_alpha(c)) {
        t.kind = Tok::Ident;
        while (pos_ < src_.size() && (is_alpha(src_[pos_]) || is_digit(src_[pos_]) || src_[pos_] == '.')) t.text += get();
      } else if (is_digit(c) || ((c == '-' || c == '+') && pos_ + 1 < src_.size() &&
                                 (is_digit(src_[pos_ + 1]) || is_alpha(src_[pos_ + 1])))) {
        t.kind = Tok::Number;
        t.text += get();
        while (pos_ < src_.size()) {
          char d = src_[pos_];
          bool exp_sign = (d == '-' || d == '+') && (t.text.back() == 'e' || t.text.back() == 'E') &&
                          !t.text.starts_with("0x") && !t.text.starts_with("-0x");
          if (!(is_alpha(d) || is_digit(d) || d == '.' || exp_sign)) break;
          t.text += get();
        }
      } else if (c == '%') {
        // %N as printed, or %name in hand-written IR.
        get();
        t.kind = Tok::Value;
        t.text = "%";
        while (pos_ < src_.size() && (is_alpha(src_[pos_]) || is_digit(src_[pos_]) || src_[pos_] == '.')) t.text += get();
        if (t.text.size() == 1) fail(t, "expected a value name after '%'");
      } else if (c == '"') {
        get();
        t.kind = Tok::String;
        for (;;) {
          if (pos_ >= src_.size() || src_[pos_] == '\n') fail(t, "unterminated string");
          char d = get();
          if (d == '"') break;
          if (d == '\\' && pos_ < src_.size()) {
            char e = get();
            t.text += e == 'n' ? '\n' : e;
          } else {
            t.text += d;
          }
        }
      } else if (std::string_view("(){}<>,:=").find(c) != std::string_view::npos) {
        t.kind = Tok::Punct;
        t.text = std::string(1, get());
      } else {
        fail(t, std::string("unexpected character '") + c + "'");
      }
      out.push_back(std::move(t));
    }
  }

 private:
  char get() {
    char c = src_[pos_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    return c;
  }
  void skip_space() {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        get();
      } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
        while (pos_ < src_.size() && src_[pos_] != '\n') get();
      } else {
        break;
      }
    }
  }
  [[noreturn]] void fail(const Token& t, const std::string& msg) {
    throw Error(SourceLoc{file_, t.line, t.column}, msg);
  }

  std::string_view src_;
  const char* file_;
  size_t pos_ = 0;
  uint32_t line_ = 1, col_ = 1;
};

std::optional<double> parse_float_literal(std::string_view s) {
  bool neg = s.starts_with("-");
  std::string_view body = (neg || s.starts_with("+")) ? s.substr(1) : s;
  double v;
  if (body == "inf") {
    v = std::numeric_limits<double>::infinity();
  } else if (body == "nan") {
    v = std::numeric_limits<double>::quiet_NaN();
  } else {
    auto r = std::from_chars(body.data(), body.data() + body.size(), v);
    if (r.ec != std::errc() || r.ptr != body.data() + body.size()) return std::nullopt;
  }
  return neg ? -v : v;
}

class Parser {
 public:
  Parser(std::string_view text, std::string_view filename)
      : file_(intern_file(filename)), toks_(Lexer(text, file_).run()) {}

  bool at_end() const { return peek().kind == Tok::End; }

  Kernel kernel() {
    Kernel k;
    expect_keyword("kernel");
    k.name = name("kernel name");
    expect("(");
    if (!is_punct(peek(), ")")) {
      do param(k);
      while (accept(","));
    }
    expect(")");
    expect_keyword("workgroup");
    expect("(");
    if (peek().kind == Tok::Ident && peek().text == "dynamic") {
      next();
    } else {
      for (int i = 0; i < 3; ++i) {
        if (i) expect(",");
        k.workgroup_size[i] = uint32_t(integer("workgroup size", 0, UINT32_MAX));
      }
    }
    expect(")");
    expect("{");
    Builder b(k);
    live_.clear();
    defined_.clear();
    scopes_.assign(1, {});
    block(b);
    expect("}");
    return k;
  }

 private:
  // ---- token helpers ----
  const Token& peek(size_t ahead = 0) const { return toks_[std::min(pos_ + ahead, toks_.size() - 1)]; }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  static bool is_punct(const Token& t, std::string_view p) { return t.kind == Tok::Punct && t.text == p; }
  bool accept(std::string_view p) {
    if (!is_punct(peek(), p)) return false;
    next();
    return true;
  }
  SourceLoc loc(const Token& t) const { return SourceLoc{file_, t.line, t.column}; }
  [[noreturn]] void fail(const Token& t, const std::string& msg) const { throw Error(loc(t), msg); }
  void expect(std::string_view p) {
    if (!accept(p)) fail(peek(), "expected '" + std::string(p) + "', found " + describe(peek()));
  }
  void expect_keyword(std::string_view kw) {
    if (peek().kind != Tok::Ident || peek().text != kw)
      fail(peek(), "expected '" + std::string(kw) + "', found " + describe(peek()));
    next();
  }
  // True when the next token continues the instruction that started on `line`.
  bool on_line(uint32_t line) const { return peek().kind != Tok::End && peek().line == line; }

  std::string name(const char* what) {
    if (peek().kind != Tok::Ident && peek().kind != Tok::String)
      fail(peek(), std::string("expected ") + what + ", found " + describe(peek()));
    return next().text;
  }

  int64_t integer(const char* what, int64_t lo, int64_t hi) {
    const Token& t = peek();
    int64_t v = 0;
    if (t.kind != Tok::Number) fail(t, std::string("expected ") + what + ", found " + describe(t));
    auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size()) fail(t, "bad " + std::string(what) + " '" + t.text + "'");
    if (v < lo || v > hi) fail(t, std::string(what) + " " + t.text + " is out of range");
    next();
    return v;
  }

  Type type() {
    const Token& t = peek();
    if (t.kind != Tok::Ident) fail(t, "expected a type, found " + describe(t));
    std::string s = next().text;
    if (s == "ptr") {
      expect("<");
      std::string space = name("address space");
      expect(",");
      std::string elem = name("element type");
      expect(">");
      s = "ptr<" + space + ", " + elem + ">";
    }
    auto ty = parse_type(s);
    if (!ty) fail(t, "unknown type '" + s + "'");
    return *ty;
  }

  // ---- signature ----
  void param(Kernel& k) {
    const Token& at = peek();
    std::string n = name("parameter name");
    expect(":");
    const Token& tt = peek();
    Type t = type();
    if (t.is_pointer()) {
      if (t.space != AddrSpace::Global) fail(tt, "buffer parameters must be ptr<global, T>, got " + t.str());
      Access acc = Access::ReadWrite;
      if (peek().kind == Tok::Ident) {
        const Token& a = next();
        if (a.text == "read") acc = Access::Read;
        else if (a.text == "write") acc = Access::Write;
        else if (a.text == "read_write") acc = Access::ReadWrite;
        else fail(a, "expected read, write or read_write, found " + describe(a));
      }
      k.buffers.push_back({n, t.element(), acc});
    } else {
      if (t.is_void()) fail(at, "parameter '" + n + "' cannot be void");
      k.scalars.push_back({n, t});
    }
  }

  // ---- values ----
  ValueId use(const Token& t) {
    if (t.kind != Tok::Value) fail(t, "expected a value (%N), found " + describe(t));
    auto it = live_.find(t.text);
    if (it != live_.end()) return it->second;
    if (defined_.count(t.text)) fail(t, "value " + t.text + " is used outside the block that defines it");
    fail(t, "use of undefined value " + t.text);
  }
  ValueId operand() { return use(next()); }

  void define(const Token& t, ValueId v) {
    if (!defined_.insert(t.text).second) fail(t, "value " + t.text + " is defined twice");
    live_[t.text] = v;
    scopes_.back().push_back(t.text);
  }
  void open_scope() { scopes_.emplace_back(); }
  void close_scope() {
    for (const std::string& v : scopes_.back()) live_.erase(v);
    scopes_.pop_back();
  }

  // ---- body ----
  void block(Builder& b) {
    while (!is_punct(peek(), "}")) {
      if (at_end()) fail(peek(), "unexpected end of input, expected '}'");
      instr(b);
    }
  }

  void nested(Builder& b) {
    expect("{");
    open_scope();
    block(b);
    close_scope();
    expect("}");
  }

  void instr(Builder& b) {
    const Token start = peek();
    b.loc = loc(start);
    std::optional<Token> result;
    if (start.kind == Tok::Value) {
      result = next();
      expect("=");
    }
    const Token& mt = peek();
    if (mt.kind != Tok::Ident) fail(mt, "expected an operation, found " + describe(mt));
    auto op = parse_op(mt.text);
    if (!op) fail(mt, "unknown operation '" + mt.text + "'");
    next();
    uint32_t line = mt.line;

    if (*op == Op::If || *op == Op::Loop) {
      if (result) fail(*result, std::string(op_name(*op)) + " has no result");
      if (*op == Op::If) {
        b.begin_if(operand());
        nested(b);
        if (peek().kind == Tok::Ident && peek().text == "else") {
          next();
          b.begin_else();
          nested(b);
        }
        b.end_if();
      } else {
        b.begin_loop();
        nested(b);
        b.end_loop();
      }
      return;
    }

    Instr in;
    in.op = *op;
    AttrSyntax syn = attr_syntax(*op);
    if (syn == AttrSyntax::Leading) in.attr = integer("index", INT64_MIN, INT64_MAX);
    std::optional<Token> literal;
    if (*op == Op::Const) {
      if (!on_line(line)) fail(peek(), "const needs a literal");
      literal = next();
      // nan(0x...) spells a NaN by its bit pattern.
      if (literal->kind == Tok::Ident && literal->text == "nan" && is_punct(peek(), "(")) {
        next();
        if (peek().kind != Tok::Number) fail(peek(), "expected the NaN's bit pattern, found " + describe(peek()));
        literal->text = "nan(" + next().text + ")";
        expect(")");
      }
    }
    if (on_line(line) && peek().kind == Tok::Value) {
      do in.args.push_back(operand());
      while (accept(","));
    }
    if (on_line(line) && peek().kind == Tok::Ident) {
      const Token& kw = peek();
      bool ok = (syn == AttrSyntax::Lane && kw.text == "lane") || (syn == AttrSyntax::Unroll && kw.text == "unroll") ||
                ((syn == AttrSyntax::Generic || syn == AttrSyntax::Hint) && kw.text == "attr");
      if (syn == AttrSyntax::Hint && *op == Op::Store && kw.text == "nontemporal") {
        next();
        in.attr = kStoreNonTemporal;
      } else if (syn == AttrSyntax::Hint && *op == Op::Prefetch && kw.text == "l2") {
        next();
        in.attr = kPrefetchL2;
      } else if (syn == AttrSyntax::Hint && *op == Op::Prefetch && kw.text == "w") {
        next();
        in.attr = kPrefetchWrite;
      } else {
        if (!ok) fail(kw, "unexpected " + describe(kw) + " after the operands of " + std::string(op_name(*op)));
        next();
        in.attr = integer(kw.text.c_str(), INT64_MIN, INT64_MAX);
      }
    } else if (syn == AttrSyntax::Lane) {
      fail(peek(), std::string(op_name(*op)) + " needs 'lane N'");
    }
    std::optional<Type> annotated;
    Token type_tok = peek();
    if (on_line(line) && accept(":")) {
      type_tok = peek();
      annotated = type();
    }
    in.type = annotated.value_or(Type{});
    if (literal) in.imm = immediate(*literal, in.type, annotated.has_value());

    ValueId id;
    if (*op == Op::For) {
      if (in.args.size() != 3) fail(mt, "for needs start, end and step operands");
      id = b.begin_for(in.args[0], in.args[1], in.args[2], int(in.attr));
    } else {
      id = b.emit(std::move(in));
    }
    if (annotated && b.type_of(id) != *annotated && id != kNoValue)
      fail(type_tok, "type annotation " + annotated->str() + " does not match the inferred type " + b.type_of(id).str());
    if (id == kNoValue && result) fail(*result, std::string(op_name(*op)) + " has no result");
    if (id != kNoValue && !result) fail(start, "the result of " + std::string(op_name(*op)) + " needs a name (%N = ...)");
    if (result) define(*result, id);
    if (*op == Op::For) {
      nested(b);
      b.end_for();
    }
    if (on_line(line) && !is_punct(peek(), "}")) fail(peek(), "unexpected " + describe(peek()) + " at the end of the instruction");
  }

  Imm immediate(const Token& t, Type ty, bool typed) {
    if (!typed) fail(t, "const needs a type (const LITERAL : TYPE)");
    Type s = ty.scalar();
    if (s.is_float()) {
      double v;
      if (t.text.starts_with("nan(")) {
        std::string_view hex = std::string_view(t.text).substr(4, t.text.size() - 5);
        uint64_t bits = 0;
        if (!hex.starts_with("0x")) fail(t, "NaN bit pattern must be hex (nan(0x7ff8000000000001))");
        auto r = std::from_chars(hex.data() + 2, hex.data() + hex.size(), bits, 16);
        if (r.ec != std::errc() || r.ptr != hex.data() + hex.size()) fail(t, "bad NaN bit pattern '" + t.text + "'");
        v = std::bit_cast<double>(bits);
      } else {
        auto f = parse_float_literal(t.text);
        if (!f) fail(t, "bad float literal '" + t.text + "'");
        v = *f;
      }
      // Mirror Builder::const_float: the integer field holds the truncated value when it fits.
      int64_t i = (std::isfinite(v) && std::fabs(v) < 9.2e18) ? int64_t(v) : 0;
      return Imm{i, v};
    }
    if (s.is_bool()) {
      if (t.text == "true") return Imm{1, 1.0};
      if (t.text == "false") return Imm{0, 0.0};
      fail(t, "bool literal must be true or false, found " + describe(t));
    }
    if (t.kind != Tok::Number) fail(t, "expected an integer literal, found " + describe(t));
    const char* b = t.text.data();
    const char* e = b + t.text.size();
    int64_t v = 0;
    std::from_chars_result r;
    if (s.kind == ScalarKind::U64 && !t.text.starts_with("-")) {
      uint64_t u = 0;
      r = std::from_chars(b, e, u);
      v = int64_t(u);
    } else {
      r = std::from_chars(b, e, v);
    }
    if (r.ec == std::errc::result_out_of_range) fail(t, "integer literal " + t.text + " does not fit in " + ty.str());
    if (r.ec != std::errc() || r.ptr != e) fail(t, "bad integer literal '" + t.text + "'");
    return Imm{v, double(v)};
  }

  const char* file_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  std::unordered_map<std::string, ValueId> live_;  // text name -> builder id, for values in scope
  std::unordered_set<std::string> defined_;        // every text name defined so far
  std::vector<std::vector<std::string>> scopes_;   // text names defined per open block

 public:
  // Where parsing stands, for errors reported by the callers below.
  SourceLoc here() const { return loc(peek()); }
  std::string here_text() const { return describe(peek()); }
};

}  // namespace

std::vector<Kernel> parse_module(std::string_view text, std::string_view filename) {
  Parser p(text, filename);
  std::vector<Kernel> out;
  while (!p.at_end()) out.push_back(p.kernel());
  return out;
}

Kernel parse_kernel(std::string_view text, std::string_view filename) {
  Parser p(text, filename);
  if (p.at_end()) throw Error(SourceLoc{intern_file(filename), 1, 1}, "expected a kernel, found end of input");
  Kernel k = p.kernel();
  if (!p.at_end())
    throw Error(p.here(), "unexpected " + p.here_text() + " after the kernel (parse_module reads several kernels)");
  return k;
}

}  // namespace kgen::ir
