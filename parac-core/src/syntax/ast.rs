//! The surface syntax tree: what the user wrote, with spans, before any name is resolved.

use crate::diag::Sp;
use proc_macro2::Ident;

/// The content of one `parac! { ... }` invocation or one `.parac` file.
#[derive(Debug)]
pub struct Program {
    /// The pipeline functions, in source order.
    pub functions: Vec<Function>,
}

/// `pub fn name(params) -> T { body }`.
#[derive(Debug)]
pub struct Function {
    /// Outer attributes, doc comments included; re-emitted on the generated function.
    pub attrs: Vec<syn::Attribute>,
    /// `pub`, `pub(crate)`, or nothing.
    pub vis: syn::Visibility,
    /// The function's name.
    pub name: Ident,
    /// The parameters, in order.
    pub params: Vec<Param>,
    /// The scalar return type after `->`, if any.
    pub ret: Option<TypeName>,
    /// The statements of the body.
    pub body: Vec<FnStmt>,
    /// The whole signature.
    pub span: Sp,
    /// The function's tokens, attributes to closing brace: what the generated code embeds for
    /// the runtime to compile again (its OpenCL path).
    pub tokens: proc_macro2::TokenStream,
}

/// One parameter.
#[derive(Debug)]
pub struct Param {
    /// Its name.
    pub name: Ident,
    /// Matrix or scalar.
    pub kind: ParamKind,
}

/// What a parameter is.
#[derive(Debug)]
pub enum ParamKind {
    /// `&T[d]..` (input) or `&mut T[d]..` (output).
    Matrix {
        /// `&mut`: an output.
        mutable: bool,
        /// The element type.
        elem: TypeName,
        /// The dimensions, outermost first.
        dims: Vec<Expr>,
    },
    /// A scalar passed by value.
    Scalar(TypeName),
}

/// A type name as written (`u8`, `f32`, ...), checked during lowering.
#[derive(Clone, Debug)]
pub struct TypeName {
    /// The identifier.
    pub name: String,
    /// Where it was written.
    pub span: Sp,
}

/// A statement at function level.
#[derive(Debug)]
pub enum FnStmt {
    /// `const NAME: T[d].. = [[..]];`
    Const {
        /// The name.
        name: Ident,
        /// The element type.
        elem: TypeName,
        /// The dimensions.
        dims: Vec<Expr>,
        /// The initializer.
        init: ArrayLit,
        /// The whole statement.
        span: Sp,
    },
    /// `let name: T[d]..;` an intermediate matrix.
    Local {
        /// The name.
        name: Ident,
        /// The element type.
        elem: TypeName,
        /// The dimensions.
        dims: Vec<Expr>,
        /// The whole statement.
        span: Sp,
    },
    /// `let x = expr;` a host scalar statement.
    Let(LetStmt),
    /// `parac_border_rule name { ... }`.
    BorderBlock {
        /// The rule's name.
        name: Ident,
        /// Its statements.
        stmts: Vec<BorderStmt>,
        /// The whole rule.
        span: Sp,
    },
    /// `parac_border_rule name = mode(matrix[w][w], value);`.
    BorderShorthand(Shorthand),
    /// `parac_iterator ...`.
    Iterator(IterStmt),
    /// `return expr;`.
    Return(Expr, Sp),
    /// `parac_repeat(count) { ... }`: the statements run `count` times.
    Repeat {
        /// The number of times (a host integer expression).
        count: Expr,
        /// The statements of one time step.
        body: Vec<FnStmt>,
        /// `parac_schedule(name = value, ..)`: each name with its value and where it was written.
        schedule: Vec<(Ident, Expr)>,
        /// The keyword.
        keyword: Sp,
        /// The whole statement.
        span: Sp,
    },
    /// `parac_swap(a, b);`: the two matrices exchange their contents (their storage).
    Swap {
        /// The two matrices.
        names: [Ident; 2],
        /// The whole statement.
        span: Sp,
    },
    /// A kernel statement written at function level (an error reported during lowering).
    Misplaced(Stmt),
}

/// `parac_border_rule name = mode(matrix[w][w], value);`.
#[derive(Debug)]
pub struct Shorthand {
    /// The rule's name.
    pub name: Ident,
    /// `replicate`, `reflect101`, ...
    pub mode: Ident,
    /// The matrix the rule is for.
    pub matrix: Ident,
    /// Width per dimension, `None` for `*` (no border in that dimension).
    pub widths: Vec<(Option<u32>, Sp)>,
    /// The value of `constant(..., value)`.
    pub value: Option<Expr>,
    /// The whole statement.
    pub span: Sp,
}

/// `target = target = expr;` inside a border rule.
#[derive(Debug)]
pub struct BorderStmt {
    /// The out-of-image positions defined.
    pub targets: Vec<Target>,
    /// Their value.
    pub value: Expr,
    /// The whole statement.
    pub span: Sp,
}

/// `src[*][-2]`: an out-of-image position.
#[derive(Debug)]
pub struct Target {
    /// The matrix.
    pub matrix: Ident,
    /// One selector per dimension.
    pub sels: Vec<(Sel, Sp)>,
    /// The whole target.
    pub span: Sp,
}

/// A selector of a border target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sel {
    /// `*`: any index of that dimension (the same as the access).
    Star,
    /// `-k`: the k-th row or column before the first.
    Before(u32),
    /// `+k`: the k-th row or column after the last.
    After(u32),
}

/// `parac_iterator name(dims) parac_border_rule(rules) { body }`.
#[derive(Debug)]
pub struct IterStmt {
    /// The iterator's name (index variables derive from it).
    pub name: Ident,
    /// One entry per dimension slot; `None` for an empty slot.
    pub dims: Vec<Option<IterDim>>,
    /// The span of the parenthesized dimension list.
    pub dims_span: Sp,
    /// The border rules applied to the body's accesses.
    pub rules: Vec<Ident>,
    /// `parac_schedule(name = value, ..)`: each name with its value.
    pub schedule: Vec<(Ident, Expr)>,
    /// The body.
    pub body: Vec<Stmt>,
    /// The whole iterator header.
    pub span: Sp,
}

/// `[var in] lo:hi[:step]`.
#[derive(Debug)]
pub struct IterDim {
    /// An explicit index variable name.
    pub var: Option<Ident>,
    /// Lower bound (inclusive).
    pub lo: Expr,
    /// Upper bound (exclusive).
    pub hi: Expr,
    /// Step; 1 if omitted.
    pub step: Option<Expr>,
    /// The whole dimension.
    pub span: Sp,
}

/// `let pat: T = expr;`.
#[derive(Debug)]
pub struct LetStmt {
    /// The names bound (one, or a tuple).
    pub names: Vec<Ident>,
    /// Whether the pattern was a tuple.
    pub tuple: bool,
    /// The annotated type.
    pub ty: Option<TypeName>,
    /// The value.
    pub value: Expr,
    /// The whole statement.
    pub span: Sp,
}

/// A statement inside an iterator.
#[derive(Debug)]
pub enum Stmt {
    /// `let`.
    Let(LetStmt),
    /// `a[..] = b[..] = expr;` or `a[..] += expr;`.
    Assign {
        /// The targets, left to right.
        targets: Vec<Expr>,
        /// `=`, or the operator of a compound assignment.
        op: Option<BinOp>,
        /// The value.
        value: Expr,
        /// The whole statement.
        span: Sp,
    },
    /// `if c { .. } else { .. }`.
    If {
        /// The condition.
        cond: Expr,
        /// The then branch.
        then: Vec<Stmt>,
        /// The else branch (an `else if` is a nested `If`).
        els: Option<Vec<Stmt>>,
        /// The `if` keyword to the end of the condition.
        span: Sp,
    },
    /// A nested iterator (reported as an error).
    Iterator(Box<IterStmt>),
    /// A border rule inside an iterator (reported as an error).
    Border(Sp),
}

/// An array literal initializer.
#[derive(Debug)]
pub enum ArrayLit {
    /// A value.
    Elem(Expr),
    /// `[a, b, c]`.
    List(Vec<ArrayLit>, Sp),
}

/// An expression.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// From its first to its last token.
    pub span: Sp,
    /// The height of the tree below it (1 for a leaf); the parser refuses trees higher than
    /// [`MAX_EXPR_DEPTH`], so every recursive pass over expressions has a bounded depth.
    pub depth: u32,
}

/// The deepest expression tree accepted (a chain `a + b + ...` of n terms is n deep).
pub const MAX_EXPR_DEPTH: u32 = 256;

impl Expr {
    /// Builds a node, computing its depth from its children.
    pub fn new(kind: ExprKind, span: Sp) -> Expr {
        let sub = |s: &Subscript| match &s.kind {
            SubKind::Point(e) => e.depth,
            SubKind::Window { start, len, stride } => start
                .depth
                .max(len.depth)
                .max(stride.as_ref().map_or(0, |e| e.depth)),
            SubKind::Star => 0,
        };
        let below = match &kind {
            ExprKind::Int(..) | ExprKind::Float(..) | ExprKind::Bool(_) | ExprKind::Name(_) => 0,
            ExprKind::Index(_, subs) => subs.iter().map(sub).max().unwrap_or(0),
            ExprKind::Call(_, args) | ExprKind::Tuple(args) => {
                args.iter().map(|a| a.depth).max().unwrap_or(0)
            }
            ExprKind::Unary(_, a) | ExprKind::Cast(a, _) => a.depth,
            ExprKind::Binary(_, a, b) => a.depth.max(b.depth),
        };
        Expr {
            kind,
            span,
            depth: below + 1,
        }
    }
}

/// The kinds of expression.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// An integer literal with its suffix (`""`, `"u8"`, ...).
    Int(u128, String),
    /// A float literal with its suffix.
    Float(f64, String),
    /// `true` or `false`.
    Bool(bool),
    /// A name.
    Name(Ident),
    /// `m[..][..]`.
    Index(Ident, Vec<Subscript>),
    /// `f(args)`.
    Call(Ident, Vec<Expr>),
    /// A unary operator.
    Unary(UnOp, Box<Expr>),
    /// A binary operator.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `e as T`.
    Cast(Box<Expr>, TypeName),
    /// `(a, b)`.
    Tuple(Vec<Expr>),
}

/// One subscript of an index expression.
#[derive(Clone, Debug)]
pub struct Subscript {
    /// What it is.
    pub kind: SubKind,
    /// Inside the brackets.
    pub span: Sp,
}

/// The kinds of subscript.
#[derive(Clone, Debug)]
pub enum SubKind {
    /// `[e]`.
    Point(Expr),
    /// `[start:len:stride]`; stride 1 if omitted.
    Window {
        /// First index.
        start: Expr,
        /// Number of elements.
        len: Expr,
        /// Distance between elements.
        stride: Option<Expr>,
    },
    /// `[*]` (border rules only).
    Star,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-`.
    Neg,
    /// `+`.
    Plus,
    /// `!`: logical not on `bool`, bitwise not on integers.
    Not,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`: product of scalars, scalar times matrix, or matrix product.
    Mul,
    /// `/`.
    Div,
    /// `%`.
    Rem,
    /// `.*`: elementwise product.
    ElemMul,
    /// `<<`.
    Shl,
    /// `>>`.
    Shr,
    /// `&`.
    BitAnd,
    /// `|`.
    BitOr,
    /// `^`.
    BitXor,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `&&`.
    And,
    /// `||`.
    Or,
}

impl BinOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
            ElemMul => ".*",
            Shl => "<<",
            Shr => ">>",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            And => "&&",
            Or => "||",
        }
    }

    /// True for the comparisons and the logical operators (their result is `bool`).
    pub fn is_boolean(self) -> bool {
        use BinOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge | And | Or)
    }
}
