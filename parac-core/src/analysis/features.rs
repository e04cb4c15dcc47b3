//! Feature analysis (the paper's Algorithm 2): per parallel region, its class, its parallel
//! dimensions, and per matrix (reads and writes apart) the elements one iteration touches,
//! relative to the index variables, and how many of them other work-items along the horizontal
//! and the vertical slot touch too.
//!
//! The footprint of an iteration is computed exactly: each access contributes the product of
//! its subscripts' positions (a point is one offset, a window `start:len:stride` its `len`
//! offsets); the union over the accesses is the footprint. The reuse along a slot is the size
//! of its intersection with itself shifted by `k * coef * step` on the dimensions that follow
//! that slot's variable, the largest over the shifts `k` that still overlap. Subscripts that
//! are not affine (see [`MatrixUse::affine`]) count as distinct positions per distinct
//! expression, and no reuse is claimed for them.

use super::forms::subscript_forms;
use crate::check::relative::Affine;
use crate::ir::*;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

/// Footprints larger than this many elements (summed over the accesses) are approximated by
/// their bounding box.
const MAX_ELEMS: u64 = 1 << 16;
/// Lookups the reuse of one footprint may take (elements times shifts tried).
const REUSE_WORK: u64 = 1 << 22;

/// One position of one dimension of a footprint.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    /// An offset relative to `coef * var` (the dimension is uniformly affine).
    Off(i64),
    /// The `j`-th position of a subscript that is not: its expression (by shape) and `j`.
    Opaque(usize, i64),
}

/// The features of region `r` of `f`. Pure: it only evaluates index expressions.
pub fn features(f: &Function, r: &Region) -> Features {
    let forms = subscript_forms(f, r);
    let slots: Vec<usize> = (0..r.dims.len()).filter(|s| r.dims[*s].is_some()).collect();
    let h_slot = slots.last().copied();
    let v_slot = slots.len().checked_sub(2).map(|i| slots[i]);
    let mut groups: BTreeMap<(MatrixId, bool), Vec<AccessId>> = BTreeMap::new();
    for (i, a) in r.accesses.iter().enumerate() {
        groups.entry((a.matrix, a.write)).or_default().push(i);
    }
    let mut shapes = Shapes::default();
    let matrices: Vec<MatrixUse> = groups
        .into_iter()
        .map(|((m, def), ids)| {
            let constant = matches!(f.matrices[m].kind, MatrixKind::Const(_));
            // Constant tables live in constant memory, the same for every work-item: no reuse
            // to exploit.
            let dirs = if constant {
                (None, None)
            } else {
                (h_slot, v_slot)
            };
            let mut u = Footprint::build(r, &forms, &ids, &mut shapes).into_use(r, dirs);
            u.matrix = m;
            u.def = def;
            u.constant = constant;
            u
        })
        .collect();
    let class = match r.kind {
        RegionKind::Reduction { .. } => RegionClass::Global,
        RegionKind::Iterator => {
            let elementwise = matrices
                .iter()
                .filter(|u| !u.constant)
                .all(|u| u.affine && !u.chunk && u.h_reuse_len == 0 && u.v_reuse_len == 0);
            if elementwise {
                RegionClass::Point
            } else {
                RegionClass::LocalBlock
            }
        }
    };
    Features {
        class,
        par_dim: slots.len(),
        h_slot,
        v_slot,
        matrices,
    }
}

/// `coef * var + offset` in at most one variable: `(slot, coef, offset)`.
fn single_var(a: &Affine) -> Option<(Option<usize>, i64, i64)> {
    let mut vars = a.coefs.iter().enumerate().filter(|(_, c)| **c != 0);
    match (vars.next(), vars.next()) {
        (None, _) => Some((None, 0, a.offset)),
        (Some((slot, c)), None) => Some((Some(slot), *c, a.offset)),
        _ => None,
    }
}

/// Numbers the distinct shapes of subscript expressions that are not affine.
#[derive(Default)]
struct Shapes(HashMap<String, usize>);

impl Shapes {
    fn id(&mut self, sub: &Sub) -> usize {
        let mut s = String::new();
        match sub {
            Sub::Point(e) | Sub::Window { start: e, .. } => shape(e, &mut s),
            Sub::Star => s.push('*'),
        }
        let n = self.0.len();
        *self.0.entry(s).or_insert(n)
    }
}

/// The structure of an expression, spans left out (locals by id, so shadowed names differ).
fn shape(e: &Expr, out: &mut String) {
    let _ = match &e.kind {
        ExprKind::Int(v) => write!(out, "{v}"),
        ExprKind::Float(v) => write!(out, "{v:?}"),
        ExprKind::Size(i) => write!(out, "S{i}"),
        ExprKind::Host(i) => write!(out, "H{i}"),
        ExprKind::Var(i) => write!(out, "V{i}"),
        ExprKind::Local(i) => write!(out, "L{i}"),
        ExprKind::Load(i) | ExprKind::Block(i) => write!(out, "A{i}"),
        ExprKind::Unary(op, a) => {
            let _ = write!(out, "({op:?} ");
            shape(a, out);
            write!(out, ")")
        }
        ExprKind::Binary(op, a, b) => {
            let _ = write!(out, "({op:?} ");
            shape(a, out);
            out.push(' ');
            shape(b, out);
            write!(out, ")")
        }
        ExprKind::MatMul(a, b) | ExprKind::Conv(a, b) => {
            out.push_str("(block ");
            shape(a, out);
            out.push(' ');
            shape(b, out);
            write!(out, ")")
        }
        ExprKind::Transpose(a) => {
            out.push_str("(transe ");
            shape(a, out);
            write!(out, ")")
        }
        ExprKind::Cast(a, t) => {
            let _ = write!(out, "(as {t} ");
            shape(a, out);
            write!(out, ")")
        }
        ExprKind::Reduce(op, a) => {
            let _ = write!(out, "({} ", op.name());
            shape(a, out);
            write!(out, ")")
        }
        ExprKind::Prefix {
            id,
            op,
            value,
            slots,
        } => {
            let _ = write!(out, "(prefix{id} {} {slots:?} ", op.name());
            shape(value, out);
            write!(out, ")")
        }
        ExprKind::Call(b, args) => {
            let _ = write!(out, "({}", b.name());
            for a in args {
                out.push(' ');
                shape(a, out);
            }
            write!(out, ")")
        }
    };
}

/// The positions, per dimension, of the accesses of one matrix in one direction.
struct Footprint {
    /// Per access, per dimension: its positions.
    keys: Vec<Vec<Vec<Key>>>,
    /// Per dimension: the uniform affine form, if any.
    axes: Vec<Option<AxisUse>>,
}

/// What a footprint says: distinct elements, chunk, overlap along the two directions.
struct Summary {
    elems: u64,
    chunk: bool,
    h: u64,
    v: u64,
}

impl Footprint {
    fn build(
        r: &Region,
        forms: &[Vec<Option<Affine>>],
        ids: &[AccessId],
        shapes: &mut Shapes,
    ) -> Footprint {
        let nd = ids
            .iter()
            .map(|a| r.accesses[*a].subs.len())
            .max()
            .unwrap_or(0);
        let form = |a: AccessId, d: usize| forms[a].get(d).and_then(Option::as_ref);
        // A dimension is uniform when every access follows the same variable with the same
        // coefficient.
        let axes: Vec<Option<AxisUse>> = (0..nd)
            .map(|d| {
                let mut per = ids.iter().map(|a| {
                    let (var, coef, c) = single_var(form(*a, d)?)?;
                    let last = match r.accesses[*a].subs[d] {
                        Sub::Window { len, stride, .. } => {
                            // A host length has no constant footprint.
                            let len = len.known()?;
                            c.saturating_add((len as i64 - 1).saturating_mul(stride))
                        }
                        _ => c,
                    };
                    Some(AxisUse {
                        var,
                        coef,
                        min: c.min(last),
                        max: c.max(last),
                    })
                });
                let first = per.next()??;
                per.try_fold(first, |acc, x| {
                    let x = x?;
                    (x.var == acc.var && x.coef == acc.coef).then(|| AxisUse {
                        min: acc.min.min(x.min),
                        max: acc.max.max(x.max),
                        ..acc
                    })
                })
            })
            .collect();
        let keys = ids
            .iter()
            .map(|a| {
                let acc = &r.accesses[*a];
                (0..nd)
                    .map(|d| {
                        let Some(sub) = acc.subs.get(d) else {
                            return vec![Key::Off(0)];
                        };
                        let (len, stride) = match sub {
                            Sub::Window { len, stride, .. } => {
                                (len.known().map_or(i64::MAX, i64::from), *stride)
                            }
                            _ => (1, 1),
                        };
                        // Longer windows take the bounding-box path anyway.
                        let len = len.min(MAX_ELEMS as i64 + 1);
                        match (&axes[d], form(*a, d)) {
                            (Some(_), Some(f)) => (0..len)
                                .map(|j| {
                                    Key::Off(f.offset.saturating_add(j.saturating_mul(stride)))
                                })
                                .collect(),
                            _ => {
                                let id = shapes.id(sub);
                                (0..len).map(|j| Key::Opaque(id, j)).collect()
                            }
                        }
                    })
                    .collect()
            })
            .collect();
        Footprint { keys, axes }
    }

    /// The use (its matrix, direction and constness left to the caller), with the reuse along
    /// the horizontal and vertical slots `dirs`.
    fn into_use(self, r: &Region, dirs: (Option<usize>, Option<usize>)) -> MatrixUse {
        let (h_slot, v_slot) = dirs;
        let affine = self.axes.iter().all(Option::is_some);
        // The shift of each dimension between a work-item and its neighbour along `slot`; no
        // reuse is claimed where a subscript is not affine.
        let shift = |slot: Option<usize>| -> Option<Vec<i64>> {
            let slot = slot.filter(|_| affine)?;
            let step = r.dims[slot].as_ref()?.step;
            Some(
                self.axes
                    .iter()
                    .map(|a| match a {
                        Some(a) if a.var == Some(slot) => a.coef.saturating_mul(step),
                        _ => 0,
                    })
                    .collect(),
            )
        };
        let (h, v) = (shift(h_slot), shift(v_slot));
        let total: u64 = self
            .keys
            .iter()
            .map(|k| k.iter().map(|p| p.len() as u64).product::<u64>())
            .fold(0, u64::saturating_add);
        let s = if total <= MAX_ELEMS {
            self.exact(h.as_deref(), v.as_deref())
        } else {
            self.bounding_box(total, h.as_deref(), v.as_deref())
        };
        let clamp = |x: u64| x.min(u32::MAX as u64) as u32;
        MatrixUse {
            matrix: 0,
            def: false,
            constant: false,
            accesses: clamp(self.keys.len() as u64),
            elems: clamp(s.elems),
            chunk: s.chunk,
            affine,
            axes: self.axes,
            h_reuse_len: clamp(s.h),
            v_reuse_len: clamp(s.v),
        }
    }

    /// The dimensions that are rows and columns (the leading ones of a 3-D matrix are planes).
    fn plane_dims(&self) -> usize {
        self.axes.len().saturating_sub(2)
    }

    /// Every element, enumerated.
    fn exact(&self, h: Option<&[i64]>, v: Option<&[i64]>) -> Summary {
        let mut set: HashSet<Vec<Key>> = HashSet::new();
        for k in &self.keys {
            product(k, &mut set);
        }
        let planes = self.plane_dims();
        let proj: HashSet<&[Key]> = set.iter().map(|e| &e[planes..]).collect();
        // The most elements two work-items `k` apart along the direction both touch: the
        // footprint against itself shifted by `k * delta`, for every `k` that still overlaps
        // (adjacent work-items share nothing in `src[x][y-2:3:2]`, the next but one share 2).
        let overlap = |delta: Option<&[i64]>| -> u64 {
            let Some(delta) = delta else { return 0 };
            let moving = self.axes.iter().zip(delta).filter(|(_, d)| **d != 0);
            let Some(kmax) = moving
                .map(|(a, d)| a.map_or(0, |a| (a.span() - 1) / d.unsigned_abs()))
                .min()
            else {
                // Every work-item along the direction touches the same elements.
                return set.len() as u64;
            };
            let kmax = kmax.min(REUSE_WORK / set.len().max(1) as u64) as i64;
            (1..=kmax)
                .map(|k| {
                    set.iter()
                        .filter(|e| {
                            let theirs: Vec<Key> = e
                                .iter()
                                .zip(delta)
                                .map(|(key, d)| match key {
                                    Key::Off(o) => Key::Off(o.saturating_add(d.saturating_mul(k))),
                                    key => key.clone(),
                                })
                                .collect();
                            set.contains(&theirs)
                        })
                        .count() as u64
                })
                .max()
                .unwrap_or(0)
        };
        Summary {
            elems: set.len() as u64,
            chunk: proj.len() > 1,
            h: overlap(h),
            v: overlap(v),
        }
    }

    /// Large footprints: each dimension's positions, as a box.
    fn bounding_box(&self, total: u64, h: Option<&[i64]>, v: Option<&[i64]>) -> Summary {
        let counts: Vec<u64> = (0..self.axes.len())
            .map(|d| {
                let s: HashSet<&Key> = self.keys.iter().flat_map(|k| &k[d]).collect();
                s.len() as u64
            })
            .collect();
        let spans: Vec<u64> = self
            .axes
            .iter()
            .zip(&counts)
            .map(|(a, c)| a.map_or(*c, |a| a.span()))
            .collect();
        let overlap = |delta: Option<&[i64]>| -> u64 {
            let Some(delta) = delta else { return 0 };
            spans
                .iter()
                .zip(delta)
                .map(|(s, d)| s.saturating_sub(d.unsigned_abs()))
                .fold(1, u64::saturating_mul)
        };
        Summary {
            elems: total.min(counts.iter().fold(1, |a, c| a.saturating_mul(*c))),
            chunk: counts[self.plane_dims()..].iter().product::<u64>() > 1,
            h: overlap(h),
            v: overlap(v),
        }
    }
}

/// Adds every element of the product of `dims` to `out`.
fn product(dims: &[Vec<Key>], out: &mut HashSet<Vec<Key>>) {
    let mut cur: Vec<Vec<Key>> = vec![Vec::with_capacity(dims.len())];
    for d in dims {
        cur = cur
            .into_iter()
            .flat_map(|e| {
                d.iter().map(move |k| {
                    let mut e = e.clone();
                    e.push(k.clone());
                    e
                })
            })
            .collect();
    }
    out.extend(cur);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The features of the first region of the first function of `src`.
    fn of(src: &str) -> (Function, Features) {
        let out = crate::compile_str(src);
        assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
        let f = out.module.functions.into_iter().next().unwrap();
        let feats = f.regions[0].features.clone();
        (f, feats)
    }

    fn read<'a>(f: &Function, feats: &'a Features, name: &str) -> &'a MatrixUse {
        let m = f.matrices.iter().position(|m| m.name == name).unwrap();
        feats.use_of(m, false).unwrap()
    }

    fn write<'a>(f: &Function, feats: &'a Features, name: &str) -> &'a MatrixUse {
        let m = f.matrices.iter().position(|m| m.name == name).unwrap();
        feats.use_of(m, true).unwrap()
    }

    const HEAD: &str = "fn f(a: &u8[M][N], w: &u8[N], o: &mut i32[M][N])";

    #[test]
    fn a_copy_is_point() {
        let (f, ft) = of(&format!(
            "{HEAD} {{ parac_iterator it(0:M:1; 0:N:1) {{ o[itx][ity] = a[itx][ity]; }} }}"
        ));
        assert_eq!(ft.class, RegionClass::Point);
        assert_eq!(ft.matrices.len(), 2);
        let a = read(&f, &ft, "a");
        assert!(!a.chunk && a.affine && !a.def && a.elems == 1 && a.accesses == 1);
        assert!(write(&f, &ft, "o").def);
    }

    #[test]
    fn reuse_of_a_dilated_window_is_with_the_next_but_one_work_item() {
        let (f, ft) = of(&format!(
            "{HEAD} {{ parac_border_rule z = constant(a[2][2], 0);
                parac_iterator it(0:M:1; 0:N:1) parac_border_rule(z) {{
                    o[itx][ity] = parac_matrix_sum(a[itx][ity-2:3:2]);
                }} }}"
        ));
        let a = read(&f, &ft, "a");
        assert_eq!(a.elems, 3);
        assert_eq!(a.col().map(|c| (c.min, c.max)), Some((-2, 2)));
        assert_eq!((a.h_reuse_len, a.v_reuse_len), (2, 0));
    }

    #[test]
    fn a_vector_read_by_every_row_is_vertical_reuse() {
        let (f, ft) = of(&format!(
            "{HEAD} {{ parac_iterator it(0:M:1; 0:N:1) {{ o[itx][ity] = a[itx][ity] * w[ity]; }} }}"
        ));
        let w = read(&f, &ft, "w");
        assert_eq!((w.row(), w.axes.len()), (None, 1));
        assert!(!w.chunk && w.affine);
        assert_eq!((w.h_reuse_len, w.v_reuse_len), (0, 1));
        assert_eq!(ft.class, RegionClass::LocalBlock);
    }

    #[test]
    fn a_transposed_read_is_point_with_swapped_slots() {
        let (f, ft) = of("fn f(a: &u8[N][M], o: &mut u8[M][N]) {
            parac_iterator it(0:M:1; 0:N:1) { o[itx][ity] = a[ity][itx]; } }");
        let a = read(&f, &ft, "a");
        assert_eq!(
            (a.row().unwrap().var, a.col().unwrap().var),
            (Some(1), Some(0))
        );
        assert_eq!((a.h_reuse_len, a.v_reuse_len), (0, 0));
        assert_eq!(ft.class, RegionClass::Point);
    }

    #[test]
    fn data_dependent_and_mixed_subscripts_are_gathers() {
        let (f, ft) = of("fn f(a: &u8[M][N], lut: &u8[256], o: &mut u8[M][N]) {
            parac_iterator it(0:M:1; 0:N:1) { o[itx][ity] = lut[a[itx][ity]]; } }");
        let lut = read(&f, &ft, "lut");
        assert!(!lut.affine && !lut.chunk && lut.elems == 1);
        assert_eq!(lut.axes, vec![None]);
        assert_eq!(ft.class, RegionClass::LocalBlock);
        // Two variables in one subscript; a constant row next to a variable one.
        let (f, ft) = of(&format!(
            "{HEAD} {{ parac_iterator it(0:M/2:1; 0:N/2:1) {{
                o[itx][ity] = a[itx + ity][ity] + a[itx][ity] + a[0][ity];
            }} }}"
        ));
        let a = read(&f, &ft, "a");
        assert!(!a.affine && a.chunk);
        assert_eq!(a.row(), None);
        assert!(a.col().is_some());
        assert_eq!(a.elems, 3);
        assert_eq!((a.h_reuse_len, a.v_reuse_len), (0, 0));
    }

    #[test]
    fn shadowed_lets_are_distinct_gather_positions() {
        let (f, ft) = of(&format!(
            "{HEAD} {{ parac_iterator it(0:M:1; 0:N:1) {{
                let t = itx / 2; let u = a[t][ity]; let t = itx / 3;
                o[itx][ity] = u + a[t][ity] + a[itx / 2][ity];
            }} }}"
        ));
        let a = read(&f, &ft, "a");
        assert!(!a.affine);
        assert_eq!((a.accesses, a.elems), (3, 3));
    }

    #[test]
    fn global_operators_are_global() {
        let (f, ft) = of("fn f(a: &u8[M][N]) -> i64 { let s = parac_matrix_sum(a); return s; }");
        assert_eq!(ft.class, RegionClass::Global);
        assert_eq!(ft.par_dim, 2);
        assert!(!read(&f, &ft, "a").chunk);
    }

    #[test]
    fn block_writes_and_steps() {
        // Each work-item writes a 2x1 block; the shift between work-items is coef * step.
        let (f, ft) = of(&format!(
            "{HEAD} {{ parac_border_rule z = constant(a[1][1], 0);
                parac_iterator it(0:M/2:1; 0:N:2) parac_border_rule(z) {{
                o[2*itx][ity] = parac_matrix_sum(a[2*itx][ity-1:3:1]);
                o[2*itx+1][ity] = a[2*itx+1][ity];
            }} }}"
        ));
        assert_eq!(ft.class, RegionClass::LocalBlock);
        let o = write(&f, &ft, "o");
        assert!(o.chunk && o.def && o.elems == 2);
        assert_eq!(o.row().map(|r| (r.coef, r.min, r.max)), Some((2, 0, 1)));
        let a = read(&f, &ft, "a");
        // Columns ity-1..ity+1 and the next work-item at ity+2 share one.
        assert_eq!((a.elems, a.h_reuse_len, a.v_reuse_len), (4, 1, 0));
    }

    #[test]
    fn planes_and_three_dimensional_iterators() {
        let (f, ft) = of("fn f(img: &u8[3][M][N], out: &mut u16[3][M][N]) {
            parac_iterator it(c in 0:3:1; x in 0:M:1; y in 0:N-2:1) {
                out[c][x][y] = img[c][x][y] + img[c][x][y+1] + img[c][x][y+2];
            } }");
        assert_eq!((ft.par_dim, ft.h_slot, ft.v_slot), (3, Some(2), Some(1)));
        let img = read(&f, &ft, "img");
        assert_eq!(img.axes[0].map(|a| a.var), Some(Some(0)));
        assert!(img.chunk);
        assert_eq!((img.elems, img.h_reuse_len, img.v_reuse_len), (3, 2, 0));
    }

    #[test]
    fn constant_tables_do_not_make_a_region_a_block() {
        let (f, ft) = of(&format!(
            "{HEAD} {{ const K: i32[3][3] = [[1, 2, 1], [2, 4, 2], [1, 2, 1]];
                parac_iterator it(0:M:1; 0:N:1) {{
                    o[itx][ity] = a[itx][ity] * parac_matrix_sum(K);
                }} }}"
        ));
        let k = read(&f, &ft, "K");
        assert!(k.constant && k.chunk && k.elems == 9);
        assert_eq!((k.h_reuse_len, k.v_reuse_len), (0, 0));
        assert_eq!(ft.class, RegionClass::Point);
    }

    #[test]
    fn the_bounding_box_agrees_with_enumeration_on_a_window() {
        let (f, _) = of(&format!(
            "{HEAD} {{ parac_border_rule z = constant(a[2][2], 0);
                parac_iterator it(0:M:1; 0:N:1) parac_border_rule(z) {{
                    o[itx][ity] = parac_matrix_sum(a[itx-1:3:1][ity-2:5:1]);
                }} }}"
        ));
        let r = &f.regions[0];
        let forms = subscript_forms(&f, r);
        let ids: Vec<AccessId> = (0..r.accesses.len())
            .filter(|a| !r.accesses[*a].write)
            .collect();
        let fp = Footprint::build(r, &forms, &ids, &mut Shapes::default());
        let (h, v) = (vec![0, 1], vec![1, 0]);
        let exact = fp.exact(Some(&h), Some(&v));
        let bbox = fp.bounding_box(15, Some(&h), Some(&v));
        assert_eq!(
            (exact.elems, exact.chunk, exact.h, exact.v),
            (bbox.elems, bbox.chunk, bbox.h, bbox.v)
        );
        assert_eq!((exact.elems, exact.h, exact.v), (15, 12, 10));
    }
}
