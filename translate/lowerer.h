// Lowers the clang AST of one kernel function to an ir::Kernel. Internal to
// the translate library: the only part of kgen that sees clang's AST.
//
// C++ values map onto the IR as follows. A local that is never modified is
// the SSA value of its initializer; a modified one is an IR variable. A
// pointer (a buffer parameter, a shared array, or one of those plus an
// offset) is an Address: the IR has no pointer arithmetic, so offsets fold
// into the index of each access. Helper functions are inlined at each call.
// A vector line is an IR vector value; a struct local is one IR variable
// per field (lower_struct.cpp); a switch is an if chain.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "ir/builder.h"
#include "ir/ir.h"

namespace kgen::translate {

// A place in memory an access can name: element `index` of `ptr` onwards
// (index kNoValue means 0). `dims` are the extents of the array dimensions
// not yet indexed, after the first (a row of tile[16][17] has dims {17}).
// A local array has no pointer: its elements are the IR variables `local`.
struct Address {
  ir::ValueId ptr = ir::kNoValue;
  ir::ValueId index = ir::kNoValue;
  std::vector<int64_t> dims;
  std::vector<ir::ValueId> local;
};

// Something that can be assigned or read: an IR variable, an element of a
// buffer or shared array, an unmodified local's SSA value (read only), or
// one lane of a line that is itself one of those.
struct LValue {
  enum class Kind { Var, Elem, Value, Lane } kind = Kind::Value;
  ir::ValueId id = ir::kNoValue;  // Var: the variable; Value: the value
  Address addr;                   // Elem
  std::vector<LValue> line;       // Lane: the line (one element)
  int lane = 0;                   // Lane
};

// A struct local: one IR variable per field (structs hold scalars only).
// A reference to a struct shares its variables.
using StructVars = std::map<const clang::FieldDecl*, ir::ValueId>;

// What a declaration stands for while its function is being lowered.
struct Binding {
  enum class Kind { Value, Var, Address, Ref, Struct } kind = Kind::Value;
  ir::ValueId id = ir::kNoValue;  // Value, Var
  Address addr;                   // Address
  LValue ref;                     // Ref: a reference parameter of a helper
  StructVars fields;              // Struct
};

class Lowerer {
 public:
  explicit Lowerer(clang::ASTContext& ctx) : ctx_(ctx) {}
  // Lowers one kernel function (annotated, with a body); throws ir::Error.
  ir::Kernel lower_kernel(const clang::FunctionDecl* fn);

  // Errors and locations.
  ir::SourceLoc loc_of(clang::SourceLocation l) const;
  [[noreturn]] void fail(clang::SourceLocation l, const std::string& what) const;
  // The IR type of a C++ arithmetic type; fails naming `what` otherwise.
  ir::Type scalar_type(clang::QualType t, clang::SourceLocation l, const std::string& what) const;

 private:
  // An inlined helper call being lowered. A helper whose only return is its
  // last statement needs nothing; one with other returns runs inside a
  // one-trip IR loop that a return leaves after setting result_var.
  struct Frame {
    const clang::FunctionDecl* fn = nullptr;
    bool wrapped = false;
    ir::Type ret;
    ir::ValueId result_var = ir::kNoValue;  // wrapped, non-void
    ir::ValueId tail_value = ir::kNoValue;  // not wrapped: the returned value
  };

  // Kernel signature (lower_stmt.cpp).
  std::string variant_name(const clang::FunctionDecl* fn) const;
  void bind_params(const clang::FunctionDecl* fn);
  void set_workgroup(const clang::FunctionDecl* fn);
  void refine_access();

  // Statements (lower_stmt.cpp).
  void stmt(const clang::Stmt* s);
  void var_decl(const clang::VarDecl* vd);
  void switch_stmt(const clang::SwitchStmt* s);

  // Structs of scalars (lower_struct.cpp).
  const clang::RecordDecl* struct_type(clang::QualType t, clang::SourceLocation l, const std::string& what);
  void struct_decl(const clang::VarDecl* vd, const clang::RecordDecl* rd);
  std::vector<ir::ValueId> struct_values(const clang::Expr* e, const clang::RecordDecl* rd);
  StructVars& struct_vars(const clang::Expr* e);
  LValue member(const clang::MemberExpr* e);
  void struct_assign(const clang::Expr* lhs, const clang::Expr* rhs);
  std::vector<int64_t> array_extents(clang::QualType& t) const;
  void shared_decl(const clang::VarDecl* vd);
  void local_array_decl(const clang::VarDecl* vd);
  void if_stmt(const clang::IfStmt* s);
  void for_stmt(const clang::ForStmt* s);
  bool canonical_for(const clang::ForStmt* s);
  void while_stmt(const clang::WhileStmt* s);
  void do_stmt(const clang::DoStmt* s);
  void return_stmt(const clang::ReturnStmt* s);
  void break_unless(ir::ValueId cond);

  // Expressions (lower_expr.cpp).
  ir::ValueId rvalue(const clang::Expr* e);  // kNoValue for void calls
  ir::ValueId rvalue_as(const clang::Expr* e, ir::Type t);
  LValue lvalue(const clang::Expr* e);
  Address address(const clang::Expr* e);
  ir::ValueId load(const LValue& lv, clang::SourceLocation l);
  void store(const LValue& lv, ir::ValueId v, clang::SourceLocation l);
  ir::ValueId cast_expr(const clang::CastExpr* e);
  ir::ValueId binary(const clang::BinaryOperator* e);
  ir::ValueId line_compare(ir::Op op, ir::ValueId l, ir::ValueId r, const clang::BinaryOperator* e);
  ir::ValueId compound_assign(const clang::CompoundAssignOperator* e);
  ir::ValueId logical(const clang::BinaryOperator* e);
  ir::ValueId unary(const clang::UnaryOperator* e);
  ir::ValueId conditional(const clang::ConditionalOperator* e);
  ir::ValueId call(const clang::CallExpr* e);
  ir::ValueId init_list(const clang::InitListExpr* e);
  LValue lane_of(const clang::ArraySubscriptExpr* e);
  ir::ValueId splat(ir::ValueId scalar, ir::Type line);
  ir::ValueId builtin_call(const clang::CallExpr* e, const clang::FunctionDecl* fn);
  ir::ValueId select_call(const clang::CallExpr* e);
  ir::ValueId memory_builtin(const clang::CallExpr* e, const std::string& name);
  ir::ValueId inline_call(const clang::CallExpr* e, const clang::FunctionDecl* fn);
  void bind_arg(const clang::ParmVarDecl* p, const clang::Expr* arg);
  bool needs_wrap(const clang::FunctionDecl* fn);
  ir::ValueId arith(ir::Op op, ir::ValueId a, ir::ValueId b);
  ir::ValueId convert(ir::ValueId v, ir::Type to);
  ir::ValueId zero(ir::Type t);
  ir::ValueId index_add(ir::ValueId a, ir::ValueId b);
  bool try_constant(const clang::Expr* e, ir::ValueId& out);
  int64_t constant_int(const clang::Expr* e, const std::string& what);
  Address subscript(const Address& base, const clang::Expr* index);
  ir::ValueId const_index(int64_t v, ir::Type t);
  ir::ValueId load_local(const Address& a);
  void store_local(const Address& a, ir::ValueId v);

  // Analysis (lower_stmt.cpp).
  void collect_mutations(const clang::Stmt* s);
  bool is_invariant(const clang::Expr* e) const;
  bool is_simple(const clang::Expr* e) const;

  clang::ASTContext& ctx_;
  const clang::FunctionDecl* kernel_fn_ = nullptr;
  ir::Kernel k_;
  ir::Builder* b_ = nullptr;
  std::map<const clang::ValueDecl*, Binding> env_;
  std::set<const clang::VarDecl*> mutated_;           // locals and params assigned anywhere
  std::set<const clang::FunctionDecl*> analyzed_;     // bodies collect_mutations has seen
  std::vector<Frame*> frames_;                        // innermost inlined call last
  std::map<ir::ValueId, int64_t> constants_;          // integer constants made by try_constant / const_index
  std::map<ir::ValueId, ir::ValueId> mask_of_;        // mask line of a line comparison -> its bool line
};

// Helpers shared by the lowering files.
bool is_kgen_builtin(const clang::FunctionDecl* fn);
bool has_annotation(const clang::Decl* d, llvm::StringRef name);
const clang::Expr* strip(const clang::Expr* e);  // parens and no-op casts

}  // namespace kgen::translate
