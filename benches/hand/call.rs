//! The hand pipelines as a caller uses them: input uploaded, kernels run, outputs downloaded
//! into caller-owned matrices (shared by the `apps` and `peers` benches).

use super::{Blur, Cl, Hand, Laplacian, Sharpen, Unsharp};
use parac::Matrix;

/// A hand pipeline with host matrices for its outputs, so that a call (upload, run, download)
/// allocates nothing, as a parac call into caller-owned outputs.
pub trait HandApp {
    type In;
    fn hand(&self) -> &Hand;
    /// Uploads `input`, runs the pipeline and downloads its outputs.
    fn call(&mut self, cl: &Cl, input: &Self::In);
}

pub struct LaplacianHand(pub Laplacian, pub Matrix<i16>, pub Matrix<u8>);
pub struct SharpenHand(pub Sharpen, pub Matrix<u8>);
pub struct BlurHand(pub Blur, pub Matrix<u16>);
pub struct UnsharpHand(pub Unsharp, pub Matrix<f32>);

impl HandApp for LaplacianHand {
    type In = Matrix<u8>;
    fn hand(&self) -> &Hand {
        &self.0.hand
    }
    fn call(&mut self, cl: &Cl, input: &Matrix<u8>) {
        self.0.src.write(cl, input).expect("write");
        self.0.hand.run(cl).expect("run");
        self.0.lap.read_into(cl, &mut self.1).expect("read");
        self.0.down.read_into(cl, &mut self.2).expect("read");
    }
}

impl HandApp for SharpenHand {
    type In = Matrix<u8>;
    fn hand(&self) -> &Hand {
        &self.0.hand
    }
    fn call(&mut self, cl: &Cl, input: &Matrix<u8>) {
        self.0.src.write(cl, input).expect("write");
        self.0.hand.run(cl).expect("run");
        self.0.out.read_into(cl, &mut self.1).expect("read");
    }
}

impl HandApp for BlurHand {
    type In = Matrix<u16>;
    fn hand(&self) -> &Hand {
        &self.0.hand
    }
    fn call(&mut self, cl: &Cl, input: &Matrix<u16>) {
        self.0.src.write(cl, input).expect("write");
        self.0.hand.run(cl).expect("run");
        self.0.out.read_into(cl, &mut self.1).expect("read");
    }
}

impl HandApp for UnsharpHand {
    type In = Matrix<f32>;
    fn hand(&self) -> &Hand {
        &self.0.hand
    }
    fn call(&mut self, cl: &Cl, input: &Matrix<f32>) {
        self.0.img.write(cl, input).expect("write");
        self.0.hand.run(cl).expect("run");
        self.0.out.read_into(cl, &mut self.1).expect("read");
    }
}
