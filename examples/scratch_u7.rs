#[path = "pipelines/blur.rs"]
mod blur;
#[path = "../benches/own/mod.rs"]
#[allow(dead_code)]
mod own;
#[path = "pipelines/unsharp.rs"]
mod unsharp;
use parac::{Matrix, Runtime};
fn best(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut b = f64::MAX;
    for _ in 0..reps {
        let t = std::time::Instant::now();
        f();
        b = b.min(t.elapsed().as_secs_f64() * 1e3);
    }
    b
}
fn main() {
    let mut s = 0x9e37_79b9_u32;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    };
    let rt = Runtime::cpu();
    let (m, n) = (2160usize, 3840usize);
    let src = Matrix::from_vec([m, n], (0..m * n).map(|_| next() as u8).collect()).unwrap();
    let mut out = Matrix::<u8>::zeros([m, n]);
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let g = best(reps, || own::gauss5(&rt, &src, &mut out).unwrap());
    let u = best(reps, || own::unsharp7(&rt, &src, &mut out).unwrap());
    let (bm, bn) = (4802usize, 6408usize);
    let bsrc = Matrix::from_vec([bm, bn], (0..bm * bn).map(|_| next() as u16).collect()).unwrap();
    let mut bout = Matrix::<u16>::zeros([bm - 2, bn - 2]);
    let b = best(reps, || blur::blur(&rt, &bsrc, &mut bout).unwrap());
    let img = Matrix::from_vec(
        [3, m, n],
        (0..3 * m * n)
            .map(|_| (next() % 1000) as f32 / 1000.0)
            .collect(),
    )
    .unwrap();
    let mut uout = Matrix::<f32>::zeros([3, m, n]);
    let a = best(reps, || unsharp::unsharp(&rt, &img, &mut uout).unwrap());
    let h = |v: &[u8]| {
        v.iter()
            .fold(0u64, |a, x| a.wrapping_mul(31).wrapping_add(*x as u64))
    };
    let hb: Vec<u8> = bout
        .as_slice()
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let hu: Vec<u8> = uout
        .as_slice()
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    own::unsharp7(&rt, &src, &mut out).unwrap();
    let h7 = h(out.as_slice());
    own::gauss5(&rt, &src, &mut out).unwrap();
    println!(
        "gauss5 {g:.3} unsharp7 {u:.3} blur {b:.3} unsharp {a:.3} sums {} {} {} {}",
        h(out.as_slice()),
        h7,
        h(&hb),
        h(&hu)
    );
}
