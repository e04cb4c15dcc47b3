//! Runs the index computations of a region on sample sizes: where every access lands, which
//! elements each iteration writes and reads. Data-dependent values stay unknown.

use super::eval::{Env, Val, eval};
use crate::ir::*;
use std::collections::HashMap;

/// Sample sizes at two scales: reach that differs between them grows with the image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Sizes 16..=19 (every residue mod 4).
    Small,
    /// Sizes 64..=67.
    Large,
}

/// One assignment of the size symbols, with the host scalars it determines.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Which scale.
    pub scale: Scale,
    /// Sizes and host scalars.
    pub env: Env,
}

impl Sample {
    /// `M=16, N=17`.
    pub fn label(&self, f: &Function) -> String {
        let parts: Vec<String> = f
            .sizes
            .iter()
            .zip(&self.env.sizes)
            .map(|(s, v)| format!("{}={v}", s.name))
            .collect();
        parts.join(", ")
    }
}

/// The work one point of a region costs: its statements and accesses.
pub fn point_cost(r: &Region) -> usize {
    let mut stmts = 0;
    KStmt::walk(&r.body, &mut |_, _| stmts += 1);
    1 + stmts + r.accesses.len()
}

/// The sample environments of a function.
pub fn samples(f: &Function) -> Vec<Sample> {
    let k = f.sizes.len();
    let mut out = Vec::new();
    let mut push = |scale: Scale, sizes: Vec<i64>| {
        let mut env = Env {
            sizes,
            hosts: vec![None; f.scalars.len()],
            ..Env::default()
        };
        for step in &f.steps {
            if let HostStep::Let(id, e) = step {
                env.hosts[*id] = eval(e, &env);
            }
        }
        out.push(Sample { scale, env });
    };
    // Small scale: equal sizes 16..=19 (every residue mod 4), and mixed ones.
    for (a, b) in [
        (16, 16),
        (17, 17),
        (18, 18),
        (19, 19),
        (16, 19),
        (19, 16),
        (17, 18),
    ] {
        push(
            Scale::Small,
            (0..k).map(|d| if d % 2 == 0 { a } else { b }).collect(),
        );
    }
    push(Scale::Large, vec![64; k]);
    push(
        Scale::Large,
        (0..k).map(|d| 64 + 3 - (d as i64 % 2)).collect(),
    );
    out
}

/// A concrete iteration point (index variable values by slot).
pub type Point = [Option<i64>; 3];

/// An element of a matrix (unused trailing dimensions are 0).
pub type Elem = [i64; 3];

/// A witness of two iterations writing one element, or of a read of an element another
/// iteration writes.
#[derive(Debug, Clone)]
pub struct Clash {
    /// The access of the first iteration (a write).
    pub first: AccessId,
    /// The access of the second iteration.
    pub second: AccessId,
    /// The iterations.
    pub points: (Point, Point),
    /// The element.
    pub element: Vec<i64>,
}

/// What one region does on one sample.
#[derive(Debug, Default)]
pub struct Observed {
    /// Per access, per dimension: the smallest and largest index (`None` if never known).
    pub ranges: Vec<Vec<Option<(i64, i64)>>>,
    /// Per access: some index could not be computed (data-dependent).
    pub unknown: Vec<bool>,
    /// Two iterations writing one element.
    pub write_clash: Option<Clash>,
    /// An iteration reading an element another iteration writes.
    pub read_clash: Option<Clash>,
    /// Two iterations that may write one element, one of them under a branch on data.
    pub maybe_clash: Option<Clash>,
    /// Per access: an update of [`Region::compound`] whose element another iteration writes
    /// too (a reduction, not a clash).
    pub shared: Vec<bool>,
    /// The values of the size symbols (for messages).
    pub dims: Vec<Vec<i64>>,
}

/// At most this many iteration points per sample (the first and last ones of each dimension
/// are kept: that is where accesses leave the image).
pub const MAX_POINTS: usize = 4096;
const MAX_ELEMS: usize = 400_000;

fn slot_values(d: &IterDim, env: &Env, cap: usize) -> Option<Vec<i64>> {
    let lo = eval(&d.lo, env)?.int()?;
    let hi = eval(&d.hi, env)?.int()?;
    // i128: no bound or step can overflow here.
    let (lo, hi, step) = (lo as i128, hi as i128, d.step as i128);
    let count = if hi > lo {
        (hi - lo + step - 1) / step
    } else {
        0
    };
    let half = (cap / 2) as i128;
    let indices: Vec<i128> = if count > cap as i128 {
        (0..half).chain(count - half..count).collect()
    } else {
        (0..count).collect()
    };
    // Positions beyond i64 cannot be indices of any matrix: treat the space as unknown.
    indices
        .into_iter()
        .map(|i| i64::try_from(lo + i * step).ok())
        .collect()
}

struct Walker<'a> {
    f: &'a Function,
    r: &'a Region,
    env: Env,
    obs: Observed,
    point: Point,
    /// Per element written: the first iteration, its access, and whether it surely ran.
    written: HashMap<(MatrixId, Elem), (Point, AccessId, bool)>,
    /// Per access: a write of one of the region's updates.
    update: Vec<bool>,
    reads: Vec<(MatrixId, Elem, Point, AccessId)>,
    writes_of: Vec<bool>,
    elems: usize,
}

/// Runs region `r` on `sample`; `None` if its iteration space is unknown (host data).
pub fn observe(f: &Function, r: &Region, sample: &Sample, max_points: usize) -> Option<Observed> {
    let mut env = sample.env.clone();
    let mut lists = Vec::new();
    let cap = (max_points.min(MAX_POINTS) as f64).powf(1.0 / r.par_dims().max(1) as f64) as usize;
    for d in &r.dims {
        lists.push(match d {
            Some(d) => Some(slot_values(d, &env, cap.max(4))?),
            None => None,
        });
    }
    env.vars = vec![None; r.dims.len()];
    env.locals = vec![None; r.locals.len()];
    let n = r.accesses.len();
    let mut writes_of = vec![false; f.matrices.len()];
    for a in &r.accesses {
        if a.write {
            writes_of[a.matrix] = true;
        }
    }
    let dims = r
        .accesses
        .iter()
        .map(|a| {
            f.matrices[a.matrix]
                .dims
                .iter()
                .map(|d| eval(d, &env).and_then(Val::int).unwrap_or(0))
                .collect()
        })
        .collect();
    let mut w = Walker {
        f,
        r,
        env,
        obs: Observed {
            ranges: r
                .accesses
                .iter()
                .map(|a| vec![None; a.subs.len()])
                .collect(),
            unknown: vec![false; n],
            shared: vec![false; n],
            dims,
            ..Observed::default()
        },
        point: [None; 3],
        written: HashMap::new(),
        update: (0..n)
            .map(|a| r.compound.iter().any(|u| u.write == a))
            .collect(),
        reads: Vec::new(),
        writes_of,
        elems: 0,
    };
    // Enumerate the iteration points (a reduction visits every element of its matrix).
    let mut idx = vec![0usize; lists.len()];
    'points: loop {
        for (s, l) in lists.iter().enumerate() {
            w.point[s] = l.as_ref().map(|l| l.get(idx[s]).copied()).unwrap_or(None);
            if l.as_ref().is_some_and(|l| l.is_empty()) {
                break 'points;
            }
        }
        w.env.vars = w.point[..lists.len()].to_vec();
        if r.kind == RegionKind::Iterator {
            w.stmts(&r.body, true);
        } else {
            w.access(0, true);
        }
        // Next point.
        let mut s = lists.len();
        loop {
            if s == 0 {
                break 'points;
            }
            s -= 1;
            let len = lists[s].as_ref().map_or(1, Vec::len);
            idx[s] += 1;
            if idx[s] < len {
                break;
            }
            idx[s] = 0;
        }
    }
    w.finish();
    Some(w.obs)
}

impl Walker<'_> {
    fn stmts(&mut self, stmts: &[KStmt], definite: bool) {
        for s in stmts {
            match s {
                KStmt::Let(l, e) => {
                    self.expr(e, definite);
                    self.env.locals[*l] = if e.ty.is_block() {
                        None
                    } else {
                        eval(e, &self.env)
                    };
                }
                KStmt::Store(a, e) => {
                    self.expr(e, definite);
                    self.access(*a, definite);
                }
                KStmt::If(c, t, e) => {
                    self.expr(c, definite);
                    match eval(c, &self.env).and_then(Val::int) {
                        Some(0) => self.stmts(e, definite),
                        Some(_) => self.stmts(t, definite),
                        None => {
                            let saved = self.env.locals.clone();
                            self.stmts(t, false);
                            self.env.locals = saved;
                            self.stmts(e, false);
                        }
                    }
                }
            }
        }
    }

    fn expr(&mut self, e: &Expr, definite: bool) {
        let mut ids = Vec::new();
        e.walk(&mut |x| {
            if let ExprKind::Load(a) | ExprKind::Block(a) = x.kind {
                ids.push(a);
            }
        });
        for a in ids {
            self.access(a, definite);
        }
    }

    fn access(&mut self, id: AccessId, definite: bool) {
        let a = &self.r.accesses[id];
        let mut per_dim: Vec<Vec<i64>> = Vec::new();
        let mut known = true;
        for (d, s) in a.subs.iter().enumerate() {
            let positions = match s {
                Sub::Point(e) => eval(e, &self.env).and_then(Val::int).map(|v| vec![v]),
                Sub::Window { start, len, stride } => {
                    let n = match len {
                        Len::Const(n) => Some(i64::from(*n)),
                        Len::Host(i) => eval(&self.f.lens[*i].expr, &self.env)
                            .and_then(Val::int)
                            .filter(|n| (1..=4096).contains(n)),
                    };
                    let st = eval(start, &self.env).and_then(Val::int);
                    st.zip(n).map(|(v, n)| {
                        (0..n)
                            .map(|j| v.saturating_add(j.saturating_mul(*stride)))
                            .collect()
                    })
                }
                Sub::Star => None,
            };
            match positions {
                Some(p) => {
                    let (lo, hi) = (p[0].min(p[p.len() - 1]), p[0].max(p[p.len() - 1]));
                    let r = &mut self.obs.ranges[id][d];
                    *r = Some(r.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
                    per_dim.push(p);
                }
                None => {
                    self.obs.unknown[id] = true;
                    known = false;
                }
            }
        }
        let tracked = a.write || self.writes_of[a.matrix];
        if !known
            || !tracked
            || matches!(self.f.matrices[a.matrix].kind, MatrixKind::Const(_))
            || self.elems > MAX_ELEMS
        {
            return;
        }
        // Every element the access touches.
        let nd = per_dim.len();
        let mut elems: Vec<Elem> = vec![[0; 3]];
        for (d, p) in per_dim.iter().enumerate() {
            elems = elems
                .into_iter()
                .flat_map(|e| {
                    p.iter().map(move |v| {
                        let mut e = e;
                        e[d] = *v;
                        e
                    })
                })
                .collect();
        }
        self.elems += elems.len();
        for el in elems {
            if a.write {
                if let Some((p, first, sure)) = self.written.get(&(a.matrix, el)) {
                    if *p == self.point {
                        continue;
                    }
                    let clash = Clash {
                        first: *first,
                        second: id,
                        points: (*p, self.point),
                        element: el[..nd].to_vec(),
                    };
                    if self.update[id] && self.update[*first] {
                        self.obs.shared[id] = true;
                        self.obs.shared[*first] = true;
                    } else if definite && *sure {
                        self.obs.write_clash.get_or_insert(clash);
                    } else {
                        self.obs.maybe_clash.get_or_insert(clash);
                    }
                } else {
                    self.written
                        .insert((a.matrix, el), (self.point, id, definite));
                }
            } else {
                self.reads.push((a.matrix, el, self.point, id));
            }
        }
    }

    fn finish(&mut self) {
        for (m, el, p, id) in std::mem::take(&mut self.reads) {
            if let Some((wp, wid, _)) = self.written.get(&(m, el)) {
                // A shared update's own read is the reduction's (`check::collide`).
                let own = self.r.compound.iter().any(|u| {
                    u.read == id && self.obs.shared[u.write] && self.r.accesses[*wid].matrix == m
                });
                if *wp != p && !own {
                    let nd = self.f.matrices[m].dims.len();
                    self.obs.read_clash = Some(Clash {
                        first: *wid,
                        second: id,
                        points: (*wp, p),
                        element: el[..nd].to_vec(),
                    });
                    return;
                }
            }
        }
    }
}
