//! Loads shared by the lanes of a work-item (`cse`) and stores held back (`vmem`), keyed by
//! the affine forms of their subscripts; adjacent keys read and written as vectors.

use super::*;

/// Loads shared by the lanes of one work-item.
#[derive(Default)]
pub(super) struct Cache {
    entries: Vec<Entry>,
}

/// One element read: the matrix and, per subscript, the coefficients of the work-item's base
/// variables and the constant offset.
struct Entry {
    m: MatrixId,
    subs: Key,
    name: String,
}

type Key = Vec<(Vec<i64>, i64)>;

/// A store held back to be written with the other lanes' as a vector store.
pub(super) struct Pending {
    m: MatrixId,
    subs: Key,
    name: String,
}

/// `n` consecutive elements are read or written with one `vloadN`/`vstoreN`: the widest width
/// that fits what is left of the run.
fn chunks(len: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut left = len;
    while left > 0 {
        let w = [16, 8, 4, 2, 1]
            .into_iter()
            .find(|w| *w <= left)
            .unwrap_or(1);
        out.push(w);
        left -= w;
    }
    out
}

fn component(i: usize) -> String {
    format!("s{}", "0123456789abcdef".as_bytes()[i] as char)
}

/// Groups keys that differ only in the last subscript's offset into runs of consecutive
/// offsets: `(first index of each run in `keys`, run)`.
fn runs(keys: &[(MatrixId, &Key)]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| {
        let (ma, ka) = keys[a];
        let (mb, kb) = keys[b];
        let (na, nb) = (ka.len(), kb.len());
        (ma, &ka[..na - 1], &ka[na - 1].0, ka[na - 1].1).cmp(&(
            mb,
            &kb[..nb - 1],
            &kb[nb - 1].0,
            kb[nb - 1].1,
        ))
    });
    let mut out: Vec<Vec<usize>> = Vec::new();
    for i in order {
        let (m, k) = keys[i];
        let n = k.len();
        if let Some(run) = out.last_mut() {
            let (pm, pk) = keys[*run.last().expect("non-empty run")];
            if pm == m
                && pk.len() == n
                && pk[..n - 1] == k[..n - 1]
                && pk[n - 1].0 == k[n - 1].0
                && pk[n - 1].1 + 1 == k[n - 1].1
            {
                run.push(i);
                continue;
            }
        }
        out.push(vec![i]);
    }
    out
}

impl K<'_> {
    /// Whether the region writes matrix `m`.
    fn writes(&self, m: MatrixId) -> bool {
        self.r.accesses.iter().any(|a| a.write && a.matrix == m)
    }

    /// The key of access `a` (for a window, of its element at the constant block offsets), the
    /// lane's offsets folded in; `None` if a subscript is not affine.
    pub(super) fn key(&self, a: AccessId, block_ix: Option<(&str, &str)>) -> Option<Key> {
        let acc = &self.r.accesses[a];
        let subs_aff = self.aff.get(a)?;
        let n = acc.subs.len();
        let mut key = Vec::with_capacity(n);
        for (k, s) in acc.subs.iter().enumerate() {
            let af = subs_aff.get(k)?.as_ref()?;
            let extra = match s {
                Sub::Point(_) => 0,
                Sub::Window { stride, .. } => {
                    let (bi, bj) = block_ix?;
                    let off: i64 = if k + 1 == n { bj } else { bi }.parse().ok()?;
                    off * stride
                }
                Sub::Star => return None,
            };
            let lane: i64 = af.coefs.iter().zip(&self.loff).map(|(c, o)| c * o).sum();
            key.push((af.coefs.clone(), af.offset + extra + lane));
        }
        Some(key)
    }

    /// The C index of one keyed subscript, in the work-item's base variables.
    pub(super) fn render_sub(&self, (coefs, off): &(Vec<i64>, i64)) -> String {
        let mut s = String::new();
        for (slot, c) in coefs.iter().enumerate() {
            if *c != 0 {
                let _ = write!(s, "{c} * {} + ", self.bases[slot]);
            }
        }
        format!("({s}{off})")
    }

    fn render_linear(&self, m: MatrixId, key: &Key) -> String {
        let idx: Vec<String> = key.iter().map(|k| self.render_sub(k)).collect();
        self.linear(m, &idx)
    }

    /// A read served by the work-item's shared loads (`cse`), if it qualifies: a matrix the
    /// region does not write, affine subscripts, not under an `if` unless both branches read it.
    pub(super) fn cached_load(
        &self,
        a: AccessId,
        block_ix: Option<(&str, &str)>,
    ) -> Option<String> {
        let cache = self.cache?;
        let acc = &self.r.accesses[a];
        if acc.write
            || self.writes(acc.matrix)
            || matches!(self.f.matrices[acc.matrix].kind, MatrixKind::Const(_))
        {
            return None;
        }
        if self.branch.get() > 0 && !self.hoistable.borrow().contains(&a) {
            return None;
        }
        let key = self.key(a, block_ix)?;
        let mut c = cache.borrow_mut();
        if let Some(e) = c
            .entries
            .iter()
            .find(|e| e.m == acc.matrix && e.subs == key)
        {
            return Some(e.name.clone());
        }
        let name = self.names.borrow_mut().call("c");
        c.entries.push(Entry {
            m: acc.matrix,
            subs: key,
            name: name.clone(),
        });
        Some(name)
    }

    /// The declarations of the shared loads: adjacent elements of a row through `vloadN` when
    /// `vmem` is on.
    pub(super) fn cache_decls(&self, cache: &Cache, pad: &str) -> String {
        let mut out = String::new();
        let keys: Vec<(MatrixId, &Key)> = cache.entries.iter().map(|e| (e.m, &e.subs)).collect();
        let groups = if self.v.vmem() {
            runs(&keys)
        } else {
            (0..keys.len()).map(|i| vec![i]).collect()
        };
        for run in groups {
            let mut at = 0;
            for w in chunks(run.len()) {
                let first = &cache.entries[run[at]];
                let m = first.m;
                let t = cty(self.f.matrices[m].elem);
                if w == 1 {
                    let _ = writeln!(
                        out,
                        "{pad}const {t} {} = m{m}[{}];",
                        first.name,
                        self.render_linear(m, &first.subs)
                    );
                } else {
                    let cv = self.names.borrow_mut().call("cv");
                    let _ = writeln!(
                        out,
                        "{pad}const {t}{w} {cv} = vload{w}(0, m{m} + {});",
                        self.render_linear(m, &first.subs)
                    );
                    for i in 0..w {
                        let e = &cache.entries[run[at + i]];
                        let _ = writeln!(out, "{pad}const {t} {} = {cv}.{};", e.name, component(i));
                    }
                }
                at += w;
            }
        }
        out
    }

    /// A store held back for a vector store (`vmem`): returns the statement that computes the
    /// value, or `None` to store in place.
    pub(super) fn defer_store(&self, a: AccessId, value: &str) -> Option<String> {
        let stores = self.stores?;
        if self.branch.get() > 0 {
            return None;
        }
        let key = self.key(a, None)?;
        let m = self.r.accesses[a].matrix;
        let name = self.fresh();
        let t = cty(self.f.matrices[m].elem);
        let mut st = stores.borrow_mut();
        st.retain(|p| !(p.m == m && p.subs == key));
        st.push(Pending {
            m,
            subs: key,
            name: name.clone(),
        });
        Some(format!("const {t} {name} = ({t})({value});"))
    }

    /// The held-back stores: `vstoreN` for adjacent elements of a row.
    pub(super) fn flush_stores(&self, stores: &[Pending], pad: &str) -> String {
        let mut out = String::new();
        let keys: Vec<(MatrixId, &Key)> = stores.iter().map(|p| (p.m, &p.subs)).collect();
        for run in runs(&keys) {
            let mut at = 0;
            for w in chunks(run.len()) {
                let first = &stores[run[at]];
                let m = first.m;
                let t = cty(self.f.matrices[m].elem);
                let target = self.render_linear(m, &first.subs);
                if w == 1 {
                    let _ = writeln!(out, "{pad}m{m}[{target}] = {};", first.name);
                } else {
                    let vals: Vec<&str> =
                        (0..w).map(|i| stores[run[at + i]].name.as_str()).collect();
                    let _ = writeln!(
                        out,
                        "{pad}vstore{w}(({t}{w})({}), 0, m{m} + {target});",
                        vals.join(", ")
                    );
                }
                at += w;
            }
        }
        out
    }

    /// Before generating an `if`: the accesses both branches read at the same element
    /// (unconditionally within the branch) may be hoisted above it.
    pub(super) fn mark_hoistable(&self, then: &[KStmt], els: &[KStmt]) {
        if self.cache.is_none() {
            return;
        }
        let reads = |body: &[KStmt]| {
            let mut v: Vec<(AccessId, Key)> = Vec::new();
            for s in body {
                let e = match s {
                    KStmt::Let(_, e) | KStmt::Store(_, e) | KStmt::If(e, ..) => e,
                };
                e.walk(&mut |x| {
                    if let ExprKind::Load(a) = x.kind {
                        if let Some(k) = self.key(a, None) {
                            v.push((a, k));
                        }
                    }
                });
            }
            v
        };
        let (a, b) = (reads(then), reads(els));
        let mut h = self.hoistable.borrow_mut();
        for (x, kx) in &a {
            for (y, ky) in &b {
                if self.r.accesses[*x].matrix == self.r.accesses[*y].matrix && kx == ky {
                    h.push(*x);
                    h.push(*y);
                }
            }
        }
    }
}
