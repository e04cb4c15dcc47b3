//! The feature analysis (Algorithm 2) on the four pipelines of `examples/pipelines/`: each
//! region's class, and per matrix point or chunk, affine or gather, offsets and reuse.

use parac_core::compile_str;
use parac_core::ir::{AxisUse, Features, Function, MatrixUse, RegionClass};

/// The content of the `parac! { ... }` block of a pipeline file (the macro is its last item).
fn block(rust: &str) -> &str {
    let start = rust.find("parac! {").expect("a parac! block");
    let open = start + rust[start..].find('{').unwrap();
    let close = rust.rfind('}').unwrap();
    &rust[open + 1..close]
}

fn pipeline(rust: &str) -> Function {
    let out = compile_str(block(rust));
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
    out.module.functions.into_iter().next().unwrap()
}

fn blur() -> Function {
    pipeline(include_str!("../../examples/pipelines/blur.rs"))
}
fn laplacian() -> Function {
    pipeline(include_str!("../../examples/pipelines/laplacian.rs"))
}
fn sharpen() -> Function {
    pipeline(include_str!("../../examples/pipelines/sharpen.rs"))
}
fn unsharp() -> Function {
    pipeline(include_str!("../../examples/pipelines/unsharp.rs"))
}

fn region<'a>(f: &'a Function, name: &str) -> &'a Features {
    &f.regions
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no region {name}"))
        .features
}

/// The reads (`def == false`) or writes of a matrix in a region.
fn usage<'a>(f: &'a Function, region_name: &str, matrix: &str, def: bool) -> &'a MatrixUse {
    let m = f.matrices.iter().position(|m| m.name == matrix).unwrap();
    region(f, region_name)
        .use_of(m, def)
        .unwrap_or_else(|| panic!("{matrix} not used in {region_name}"))
}

fn axis(var: Option<usize>, coef: i64, min: i64, max: i64) -> Option<AxisUse> {
    Some(AxisUse {
        var,
        coef,
        min,
        max,
    })
}

#[test]
fn blur_reuses_horizontally_then_vertically() {
    let f = blur();
    let it = region(&f, "it");
    assert_eq!(it.class, RegionClass::LocalBlock);
    assert_eq!((it.par_dim, it.h_slot, it.v_slot), (2, Some(1), Some(0)));
    let src = usage(&f, "it", "src", false);
    assert!(src.chunk && src.affine);
    assert_eq!(src.elems, 3);
    assert_eq!(
        src.axes,
        vec![axis(Some(0), 1, 0, 0), axis(Some(1), 1, 0, 2)]
    );
    assert_eq!((src.h_reuse_len, src.v_reuse_len), (2, 0));
    let bx = usage(&f, "it", "bx", true);
    assert!(!bx.chunk && bx.def && bx.elems == 1);

    let bx = usage(&f, "it1", "bx", false);
    assert_eq!(region(&f, "it1").class, RegionClass::LocalBlock);
    assert_eq!(bx.row(), axis(Some(0), 1, 0, 2).as_ref());
    assert!(bx.v_reuse() && !bx.h_reuse());
    assert_eq!(bx.v_reuse_len, 2);
}

#[test]
fn laplacian_filters_and_the_upsample_gather() {
    let f = laplacian();
    assert_eq!(region(&f, "it").class, RegionClass::LocalBlock);
    let src = usage(&f, "it", "src", false);
    assert_eq!(src.col(), axis(Some(1), 1, -2, 2).as_ref());
    assert_eq!((src.elems, src.h_reuse_len, src.v_reuse_len), (5, 4, 0));
    // The filter taps are a constant table: listed, but no reuse and no say in the class.
    let taps = usage(&f, "it", "F_H", false);
    assert!(taps.constant && taps.chunk && !taps.h_reuse() && !taps.v_reuse());

    // Downsample + vertical filter: rows 2*it1x-2 ..= 2*it1x+2, columns 2*it1y.
    let h = usage(&f, "it1", "h", false);
    assert_eq!(h.row(), axis(Some(0), 2, -2, 2).as_ref());
    assert_eq!(h.col(), axis(Some(1), 2, 0, 0).as_ref());
    assert!(h.chunk && h.v_reuse() && !h.h_reuse());
    assert_eq!(
        h.v_reuse_len, 3,
        "5 rows, the next work-item starts 2 rows down"
    );
    assert_eq!(usage(&f, "it1", "down", true).elems, 1);

    // Upsample: `down[y0][x0]` with `y0 = it2x / 2` and clamped `y1`: not affine, a gather
    // of up to 4 elements; `src` and `lap` are points.
    assert_eq!(region(&f, "it2").class, RegionClass::LocalBlock);
    let down = usage(&f, "it2", "down", false);
    assert!(!down.affine && down.chunk);
    assert_eq!(down.axes, vec![None, None]);
    assert_eq!((down.elems, down.accesses), (4, 4));
    assert!(!down.h_reuse() && !down.v_reuse());
    let src = usage(&f, "it2", "src", false);
    assert!(src.affine && !src.chunk && !src.h_reuse());
}

#[test]
fn sharpen_stencils_gathers_and_the_global_mean() {
    let f = sharpen();
    // 4x downsample: a 4x4 block per work-item, blocks side by side (no reuse).
    let src = usage(&f, "it", "src", false);
    assert_eq!(
        src.axes,
        vec![axis(Some(0), 4, 0, 3), axis(Some(1), 4, 0, 3)]
    );
    assert!(src.chunk && !src.h_reuse() && !src.v_reuse());
    assert_eq!(src.elems, 16);
    assert_eq!(region(&f, "it").class, RegionClass::LocalBlock);
    // Upsample through clamps and shifts: a gather.
    assert!(!usage(&f, "it1", "down", false).affine);
    // Sobel: 8 neighbours (not the centre); 4 shared with each neighbouring work-item.
    let src = usage(&f, "sobel", "src", false);
    assert_eq!(
        src.axes,
        vec![axis(Some(0), 1, -1, 1), axis(Some(1), 1, -1, 1)]
    );
    assert_eq!((src.elems, src.h_reuse_len, src.v_reuse_len), (8, 4, 4));
    assert_eq!(region(&f, "sobel").class, RegionClass::LocalBlock);
    // The mean of the edge image.
    let sum = region(&f, "sum_edge");
    assert_eq!(sum.class, RegionClass::Global);
    assert!(!usage(&f, "sum_edge", "edge", false).chunk);
    // The final step: a 3x3 window of src, points of up and edge.
    let src = usage(&f, "it2", "src", false);
    assert_eq!((src.elems, src.h_reuse_len, src.v_reuse_len), (9, 6, 6));
    assert!(!usage(&f, "it2", "up", false).chunk);
}

#[test]
fn unsharp_gray_is_elementwise_over_planes() {
    let f = unsharp();
    let g = region(&f, "g");
    assert_eq!(g.class, RegionClass::Point);
    // Three planes selected by constant subscripts: still a point per plane.
    let img = usage(&f, "g", "img", false);
    assert!(!img.chunk && img.affine);
    assert_eq!(img.elems, 3);
    assert_eq!(
        img.axes,
        vec![
            axis(None, 0, 0, 2),
            axis(Some(0), 1, 0, 0),
            axis(Some(1), 1, 0, 0)
        ]
    );
    assert!(!img.h_reuse() && !img.v_reuse());
    // The vertical then horizontal 7-tap filters.
    let gray = usage(&f, "v", "gray", false);
    assert_eq!((gray.h_reuse_len, gray.v_reuse_len), (0, 6));
    let by = usage(&f, "h", "by", false);
    assert_eq!((by.h_reuse_len, by.v_reuse_len), (6, 0));
    assert_eq!(region(&f, "h").class, RegionClass::LocalBlock);
    let out = usage(&f, "h", "out", true);
    assert!(!out.chunk && out.elems == 3);
}
