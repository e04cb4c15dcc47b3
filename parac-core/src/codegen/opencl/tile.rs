//! Local-memory tiles (`lds`): which matrices a work-group reads through a tile, their size,
//! the loads that fill them and the reads they serve.

use super::*;

/// A local-memory tile of one matrix (`lds`): the rows and columns the work-group's iterations
/// read, loaded once per group. Reads of it use keyed (affine) subscripts.
pub(super) struct Tile {
    pub(super) m: MatrixId,
    /// Slots of the row and the column subscript.
    slots: [usize; 2],
    /// Their coefficients (> 0).
    coef: [i64; 2],
    /// The smallest offset read, per dimension.
    omin: [i64; 2],
    /// Tile rows and columns.
    size: [i64; 2],
    /// The element type held: the matrix's, or its promoted type when border values (which
    /// may leave the element's range) are stored too.
    ty: Scalar,
    /// Whether border rules of the region extend the matrix.
    bordered: bool,
}

impl Tile {
    /// Bytes of local memory.
    pub(super) fn bytes(&self) -> usize {
        (self.size[0] * self.size[1]) as usize * self.ty.bytes()
    }
}

/// The tiles of plan `v` (none without `lds`): every 2-D matrix the region reads and does not
/// write whose reads are all affine, each subscript in one slot with a positive coefficient,
/// and that neighbouring iterations share.
pub(super) fn tiles(
    f: &Function,
    rid: RegionId,
    v: &Schedule,
    aff: &[Vec<Option<Affine>>],
) -> Vec<Tile> {
    let r = &f.regions[rid];
    let Some((lx, ly)) = v.lds() else {
        return Vec::new();
    };
    let slots = cl_slots(r);
    if slots.len() != 2 {
        return Vec::new();
    }
    let lanes = lanes_of(r, v);
    // Iteration points of a work-group along each slot.
    let mut group = vec![1i64; r.dims.len()];
    group[slots[0]] = lx as i64 * lanes[slots[0]];
    group[slots[1]] = ly as i64 * lanes[slots[1]];
    let mut out = Vec::new();
    let mut mats: Vec<MatrixId> = r
        .accesses
        .iter()
        .filter(|a| !a.write)
        .map(|a| a.matrix)
        .collect();
    mats.sort();
    mats.dedup();
    'mats: for m in mats {
        let mat = &f.matrices[m];
        if mat.dims.len() != 2
            || matches!(mat.kind, MatrixKind::Const(_))
            || r.accesses.iter().any(|a| a.write && a.matrix == m)
        {
            continue;
        }
        let mut slot = [usize::MAX; 2];
        let mut coef = [0i64; 2];
        let mut lo = [i64::MAX; 2];
        let mut hi = [i64::MIN; 2];
        for (i, a) in r.accesses.iter().enumerate() {
            if a.matrix != m {
                continue;
            }
            for d in 0..2 {
                let Some(Some(af)) = aff.get(i).and_then(|x| x.get(d)) else {
                    continue 'mats;
                };
                let nz: Vec<usize> = (0..af.coefs.len()).filter(|s| af.coefs[*s] != 0).collect();
                let [s] = nz.as_slice() else {
                    continue 'mats;
                };
                let c = af.coefs[*s];
                if c <= 0 || (slot[d] != usize::MAX && (slot[d] != *s || coef[d] != c)) {
                    continue 'mats;
                }
                slot[d] = *s;
                coef[d] = c;
                let ext = match &a.subs[d] {
                    Sub::Window { len, stride, .. } => (*len as i64 - 1) * stride,
                    _ => 0,
                };
                lo[d] = lo[d].min(af.offset.min(af.offset + ext));
                hi[d] = hi[d].max(af.offset.max(af.offset + ext));
            }
        }
        if slot[0] == slot[1]
            || slot.contains(&usize::MAX)
            || (hi[0] == lo[0] && hi[1] == lo[1] && coef == [1, 1])
        {
            continue;
        }
        let size: Vec<i64> = (0..2)
            .map(|d| {
                let st = r.dims[slot[d]].as_ref().map_or(1, |x| x.step);
                coef[d] * (group[slot[d]] - 1) * st + (hi[d] - lo[d]) + 1
            })
            .collect();
        let bordered = has_rule(f, r, m);
        let ty = if bordered {
            mat.elem.promote()
        } else {
            mat.elem
        };
        if bordered
            && r.rules.iter().any(|id| {
                f.rules[*id]
                    .entries
                    .iter()
                    .any(|e| e.matrix == m && e.value.ty.elem().bytes() > ty.bytes())
            })
        {
            continue;
        }
        out.push(Tile {
            m,
            slots: [slot[0], slot[1]],
            coef,
            omin: [lo[0], lo[1]],
            size: [size[0], size[1]],
            ty,
            bordered,
        });
    }
    out
}

/// Local memory of plan `v` of region `rid`, in bytes (0: no tile).
pub fn local_bytes(f: &Function, rid: RegionId, v: &Schedule) -> usize {
    if v.lds().is_none() {
        return 0;
    }
    let r = &f.regions[rid];
    let aff = affs(f, r);
    tiles(f, rid, v, &aff).iter().map(Tile::bytes).sum()
}

impl K<'_> {
    /// A read served by a local-memory tile.
    pub(super) fn tile_load(&self, a: AccessId, block_ix: Option<(&str, &str)>) -> Option<String> {
        let acc = &self.r.accesses[a];
        let t = self.tiles.iter().find(|t| t.m == acc.matrix)?;
        if acc.write {
            return None;
        }
        let key = self.key(a, block_ix)?;
        let m = t.m;
        Some(format!(
            "tile{m}[({} - tr{m}) * {} + ({} - tc{m})]",
            self.render_sub(&key[0]),
            t.size[1],
            self.render_sub(&key[1])
        ))
    }

    /// Declares and fills the tiles: every work-item of the group loads a share, consecutive
    /// work-items consecutive columns (coalesced); then a barrier.
    pub(super) fn tile_fill(&self, out: &mut String, kernel: &str, group: &[String]) {
        for t in self.tiles {
            let m = t.m;
            let (th, tw) = (t.size[0], t.size[1]);
            let ty = cty(t.ty);
            let rows = self.dim(m, 0);
            let cols = self.dim(m, 1);
            let outside = if t.bordered {
                let mut args = vec![format!("m{m}"), format!("p{m}")];
                args.extend((0..self.f.sizes.len()).map(|i| format!("z{i}")));
                args.extend(hosts_used(self.f, self.r).iter().map(|h| format!("s{h}")));
                args.push("gr".into());
                args.push("gc".into());
                // A tile also holds positions no iteration reads (past the rule's widths at the
                // image's far side): their raises go to the flag's scratch half, which the host
                // ignores.
                args.push("err + 4".into());
                format!("ld_{kernel}_m{m}_{ty}({})", args.join(", "))
            } else {
                format!("({ty})0")
            };
            let _ = writeln!(
                out,
                "    __local {ty} tile{m}[{}];\n    const int tr{m} = {} * {} + {};\n    const int tc{m} = {} * {} + {};\n    for (int i = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0)); i < {}; i += (int)(get_local_size(0) * get_local_size(1))) {{\n        const int gr = tr{m} + i / {tw}, gc = tc{m} + i % {tw};\n        tile{m}[i] = (gr >= 0 && gr < {rows} && gc >= 0 && gc < {cols}) ? ({ty})m{m}[gr * p{m} + gc] : {outside};\n    }}",
                th * tw,
                t.coef[0],
                group[t.slots[0]],
                t.omin[0],
                t.coef[1],
                group[t.slots[1]],
                t.omin[1],
                th * tw,
            );
        }
        out.push_str("    barrier(CLK_LOCAL_MEM_FENCE);\n");
    }
}
