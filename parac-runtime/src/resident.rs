//! Matrices that stay on a runtime's device ([`DeviceMatrix`]), as Halide's buffers with their
//! device copy: made by an upload ([`Runtime::upload`]) or on the device
//! ([`Runtime::device_zeros`], [`Runtime::device_uninit`]), passed to pipeline functions
//! wherever a matrix goes (inputs and outputs, mixed with host matrices), read back with
//! [`DeviceMatrix::to_host`] or [`DeviceMatrix::download_into`]. A call whose matrices are all
//! on the device moves no data between host and device and returns without waiting for its
//! kernels; its errors are reported at the next point where the host waits (see
//! `opencl/pending.rs`). On the CPU path a `DeviceMatrix` is a host matrix: the same code runs,
//! with no copies.
//!
//! Safety rests on Rust's borrows: a call borrows its inputs shared and its outputs mutably, so
//! no device matrix is both an input and an output of a call, and a matrix outlives the calls
//! that use it in the host's eyes; the device's in-order queue runs a later command (a
//! download, another call, the next user of a dropped buffer's memory) after the kernels
//! enqueued before it. A device matrix of another runtime (another OpenCL context), or one
//! given to the CPU path, is `Error::Layout` naming the parameter ([`LayoutError::OnDevice`]).

use std::fmt;
use std::sync::Arc;

use crate::Runtime;
use crate::layout::layout_error;
use crate::opencl::{Buffer, Device};
use crate::{Element, Elements, ElementsMut, Error, LayoutError, Matrix, MatrixMut, MatrixRef};

/// A matrix on a runtime's device (an OpenCL buffer with padded rows), or on the CPU path a
/// host [`Matrix`]. It implements [`MatrixRef`] and [`MatrixMut`], so pipeline functions take
/// it wherever they take a matrix; the CPU path and other devices refuse one on a device with
/// `Error::Layout`.
///
/// ```
/// use parac_runtime::{Matrix, Runtime};
///
/// let rt = Runtime::cpu();
/// let m = Matrix::<u8>::from_fn([2, 3], |i| (i[0] * 3 + i[1]) as u8);
/// let d = rt.upload(&m)?;
/// assert_eq!(d.shape(), &[2, 3]);
/// assert!(!d.is_on_device());
/// assert_eq!(d.to_host()?, m);
/// # Ok::<(), parac_runtime::Error>(())
/// ```
pub struct DeviceMatrix<T: Element> {
    store: Store<T>,
}

enum Store<T: Element> {
    Host(Matrix<T>),
    Device(Buffer<T>, Arc<Device>),
}

impl<T: Element> fmt::Debug for DeviceMatrix<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("DeviceMatrix");
        d.field("type", &T::NAME).field("shape", &self.shape());
        match &self.store {
            Store::Host(_) => d.field("on", &"host"),
            Store::Device(_, dev) => d.field("on", &dev.info().name),
        };
        d.finish()
    }
}

/// A region of interest of a device matrix: its shape and the offset of its first element in
/// the buffer's layout (`plane * rows * pitch + row * pitch + col`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Region {
    pub(crate) shape: Vec<usize>,
    pub(crate) offset: usize,
}

/// The elements of a [`DeviceMatrix`] (or of a region of one, [`DeviceView`]) on a device, as
/// a call reads them ([`Elements::Device`]).
pub struct OnDevice<'a, T> {
    pub(crate) buf: &'a Buffer<T>,
    pub(crate) dev: &'a Arc<Device>,
    /// A region of interest; `None`: the whole matrix.
    pub(crate) region: Option<Region>,
}

/// The elements of a [`DeviceMatrix`] (or of a region of one, [`DeviceViewMut`]) on a device,
/// as a call writes them ([`ElementsMut::Device`]).
pub struct OnDeviceMut<'a, T> {
    pub(crate) buf: &'a mut Buffer<T>,
    pub(crate) dev: &'a Arc<Device>,
    /// A region of interest; `None`: the whole matrix.
    pub(crate) region: Option<Region>,
}

impl<T> Clone for OnDevice<'_, T> {
    fn clone(&self) -> Self {
        OnDevice {
            buf: self.buf,
            dev: self.dev,
            region: self.region.clone(),
        }
    }
}

/// The error of a device matrix used where its device is not.
fn elsewhere(dev: &Device) -> LayoutError {
    LayoutError::OnDevice {
        device: dev.info().name.clone(),
        context: dev.context_id(),
    }
}

impl<'a, T> OnDevice<'a, T> {
    /// The device.
    pub fn device(&self) -> &'a Device {
        self.dev
    }
    /// [`LayoutError::OnDevice`] of this matrix.
    pub(crate) fn elsewhere(&self) -> LayoutError {
        elsewhere(self.dev)
    }
}

impl<T> OnDeviceMut<'_, T> {
    /// The device.
    pub fn device(&self) -> &Device {
        self.dev
    }
    /// A shorter borrow.
    pub fn reborrow(&mut self) -> OnDeviceMut<'_, T> {
        OnDeviceMut {
            buf: self.buf,
            dev: self.dev,
            region: self.region.clone(),
        }
    }
    /// [`LayoutError::OnDevice`] of this matrix.
    pub(crate) fn elsewhere(&self) -> LayoutError {
        elsewhere(self.dev)
    }
}

impl<T> fmt::Debug for OnDevice<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "OnDevice({:?} on {})",
            self.buf.shape(),
            self.dev.info().name
        )
    }
}

impl<T> fmt::Debug for OnDeviceMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "OnDeviceMut({:?} on {})",
            self.buf.shape(),
            self.dev.info().name
        )
    }
}

/// The name device matrices have in messages.
const NAME: &str = "device matrix";

impl Runtime {
    /// A copy of `m` on this runtime's device (on the CPU path, a host copy): one transfer,
    /// blocking (`m` may change as soon as this returns). Any [`MatrixRef`] (a view, a region
    /// of interest, an image) is taken; `Error::Layout` if its layout does not fit its
    /// elements.
    pub fn upload<T: Element, M: MatrixRef<T> + ?Sized>(
        &self,
        m: &M,
    ) -> Result<DeviceMatrix<T>, Error> {
        Ok(DeviceMatrix {
            store: match self.device_handle() {
                None => Store::Host(Matrix::copy_of(m).map_err(layout_error("m"))?),
                Some(dev) => Store::Device(dev.upload(NAME, m)?, dev.clone()),
            },
        })
    }

    /// A matrix of zeros of `shape` (1 to 3 dimensions) on this runtime's device (on the CPU
    /// path, a host matrix). Filled on the device: nothing crosses from the host.
    pub fn device_zeros<T: Element>(&self, shape: &[usize]) -> Result<DeviceMatrix<T>, Error> {
        self.device_matrix(shape, true)
    }

    /// A matrix of `shape` on this runtime's device whose elements are unspecified until
    /// written (whatever the memory held: values of `T`, never undefined behaviour; for outputs
    /// that a call writes whole, where a zero fill would be a wasted pass). On the CPU path, a
    /// host matrix of zeros.
    pub fn device_uninit<T: Element>(&self, shape: &[usize]) -> Result<DeviceMatrix<T>, Error> {
        self.device_matrix(shape, false)
    }

    fn device_matrix<T: Element>(
        &self,
        shape: &[usize],
        zero: bool,
    ) -> Result<DeviceMatrix<T>, Error> {
        if !(1..=3).contains(&shape.len()) {
            return Err(layout_error("shape")(LayoutError::Rank(shape.len())));
        }
        Ok(DeviceMatrix {
            store: match self.device_handle() {
                None => Store::Host(Matrix::zeros(shape)),
                Some(dev) if zero => Store::Device(dev.alloc(NAME, shape)?, dev.clone()),
                Some(dev) => Store::Device(dev.alloc_uninit(NAME, shape)?, dev.clone()),
            },
        })
    }

    /// Waits for every call enqueued on this runtime's device and reports the first error of a
    /// call that did not wait (see [`DeviceMatrix`]); on the CPU path, `Ok(())` at once.
    pub fn finish(&self) -> Result<(), Error> {
        match self.device() {
            None => Ok(()),
            Some(dev) => {
                dev.finish()?;
                dev.check_pending()
            }
        }
    }
}

impl<T: Element> DeviceMatrix<T> {
    /// The shape, outermost dimension first.
    pub fn shape(&self) -> &[usize] {
        match &self.store {
            Store::Host(m) => m.shape(),
            Store::Device(b, _) => b.shape(),
        }
    }

    /// Whether the elements are on an OpenCL device (else in host memory: the CPU path's).
    pub fn is_on_device(&self) -> bool {
        matches!(self.store, Store::Device(..))
    }

    /// The device buffer, where the matrix is on a device.
    pub fn buffer(&self) -> Option<&Buffer<T>> {
        match &self.store {
            Store::Host(_) => None,
            Store::Device(b, _) => Some(b),
        }
    }

    /// A host copy. On a device this waits for the calls before it that write the matrix, and
    /// reports the first error of the device's calls that did not wait.
    pub fn to_host(&self) -> Result<Matrix<T>, Error> {
        let mut m = Matrix::zeros(self.shape());
        self.download_into(&mut m)?;
        Ok(m)
    }

    /// Copies the elements into `into` (of the same shape: `Error::Shape` otherwise; any
    /// [`MatrixMut`], a region of interest included, only its elements written). On a device
    /// this waits, as [`to_host`](Self::to_host).
    pub fn download_into<M: MatrixMut<T> + ?Sized>(&self, into: &mut M) -> Result<(), Error> {
        match &self.store {
            Store::Host(m) => copy_rows(m, into),
            Store::Device(b, dev) => {
                let read = dev.download(b, into);
                // The wait is the download's; the calls' errors come first (they happened
                // before, and may be why the elements are wrong).
                dev.check_pending()?;
                read
            }
        }
    }

    /// Overwrites the elements with `m`'s (of the same shape: `Error::Shape` otherwise), in
    /// place: a frame loop uploads each frame into the same device memory. Blocking: `m` may
    /// change as soon as this returns.
    pub fn upload_from<M: MatrixRef<T> + ?Sized>(&mut self, m: &M) -> Result<(), Error> {
        match &mut self.store {
            Store::Host(h) => copy_rows(m, h),
            Store::Device(b, dev) => dev.write(b, m),
        }
    }
}

/// Copies `from`'s elements into `into`, row by row (both of one shape, checked).
fn copy_rows<T: Element, A, B>(from: &A, into: &mut B) -> Result<(), Error>
where
    A: MatrixRef<T> + ?Sized,
    B: MatrixMut<T> + ?Sized,
{
    if from.shape() != into.shape() {
        return Err(shape_error(into.shape(), from.shape()));
    }
    let src = crate::layout::checked(from).map_err(layout_error("from"))?;
    let mut dst = crate::layout::checked_mut(into).map_err(layout_error("into"))?;
    let mut rows = src.rows();
    dst.for_each_row(|row| row.copy_from_slice(rows.next().expect("rows of one shape")));
    Ok(())
}

fn shape_error(expected: &[usize], got: &[usize]) -> Error {
    Error::Shape {
        function: "DeviceMatrix",
        matrix: "the other matrix",
        declared: "the device matrix's shape",
        expected: expected.to_vec(),
        got: got.to_vec(),
    }
}

impl<T: Element> MatrixRef<T> for DeviceMatrix<T> {
    fn shape(&self) -> &[usize] {
        DeviceMatrix::shape(self)
    }
    /// The host elements on the CPU path; empty on a device (see
    /// [`elements`](MatrixRef::elements)).
    fn as_slice(&self) -> &[T] {
        match &self.store {
            Store::Host(m) => m.as_slice(),
            Store::Device(..) => &[],
        }
    }
    fn elements(&self) -> Elements<'_, T> {
        match &self.store {
            Store::Host(m) => Elements::Slice(m.as_slice()),
            Store::Device(buf, dev) => Elements::Device(OnDevice {
                buf,
                dev,
                region: None,
            }),
        }
    }
}

impl<T: Element> MatrixMut<T> for DeviceMatrix<T> {
    fn as_mut_slice(&mut self) -> &mut [T] {
        match &mut self.store {
            Store::Host(m) => m.as_mut_slice(),
            Store::Device(..) => &mut [],
        }
    }
    fn elements_mut(&mut self) -> ElementsMut<'_, T> {
        match &mut self.store {
            Store::Host(m) => ElementsMut::Slice(m.as_mut_slice()),
            Store::Device(buf, dev) => ElementsMut::Device(OnDeviceMut {
                buf,
                dev,
                region: None,
            }),
        }
    }
}

/// A region of interest of a [`DeviceMatrix`] (`rows x cols` at (`row`, `col`) of every plane),
/// read-only, as [`Matrix::roi`] is of a host matrix: a pipeline function takes it wherever it
/// takes a matrix. On a device a call copies the region into a matrix of its own on the device
/// (nothing crosses to the host); on the CPU path it is a [`MatrixView`](crate::MatrixView).
pub struct DeviceView<'a, T: Element> {
    of: ViewOf<'a, T>,
}

enum ViewOf<'a, T: Element> {
    Host(crate::MatrixView<'a, T>),
    Device(&'a Buffer<T>, &'a Arc<Device>, Region),
}

/// A writable region of interest of a [`DeviceMatrix`]: a pipeline writes its output into
/// that part of the matrix (on a device through a matrix of the region's shape, copied into
/// the region on the device after the call's kernels).
pub struct DeviceViewMut<'a, T: Element> {
    of: ViewOfMut<'a, T>,
}

enum ViewOfMut<'a, T: Element> {
    Host(crate::MatrixViewMut<'a, T>),
    Device(&'a mut Buffer<T>, &'a Arc<Device>, Region),
}

/// The region `rows x cols` at (`row`, `col`) of every plane of a buffer.
fn region_of<T>(
    b: &Buffer<T>,
    row: usize,
    col: usize,
    rows: usize,
    cols: usize,
) -> Result<Region, Error> {
    let (shape, offset) = b
        .layout()
        .sub(b.shape(), row, col, rows, cols)
        .map_err(layout_error("roi"))?;
    Ok(Region { shape, offset })
}

impl<T: Element> DeviceMatrix<T> {
    /// The region of interest `rows x cols` at (`row`, `col`) of every plane, read-only (see
    /// [`DeviceView`]); `Error::Layout` where it reaches outside the matrix.
    pub fn roi(
        &self,
        row: usize,
        col: usize,
        rows: usize,
        cols: usize,
    ) -> Result<DeviceView<'_, T>, Error> {
        Ok(DeviceView {
            of: match &self.store {
                Store::Host(m) => {
                    ViewOf::Host(m.roi(row, col, rows, cols).map_err(layout_error("roi"))?)
                }
                Store::Device(b, dev) => {
                    ViewOf::Device(b, dev, region_of(b, row, col, rows, cols)?)
                }
            },
        })
    }

    /// The region of interest as a writable view (see [`DeviceViewMut`]).
    pub fn roi_mut(
        &mut self,
        row: usize,
        col: usize,
        rows: usize,
        cols: usize,
    ) -> Result<DeviceViewMut<'_, T>, Error> {
        Ok(DeviceViewMut {
            of: match &mut self.store {
                Store::Host(m) => ViewOfMut::Host(
                    m.roi_mut(row, col, rows, cols)
                        .map_err(layout_error("roi"))?,
                ),
                Store::Device(b, dev) => {
                    let r = region_of(b, row, col, rows, cols)?;
                    ViewOfMut::Device(b, dev, r)
                }
            },
        })
    }
}

/// A host copy of a region of a device buffer: the region copied into a buffer of its own on
/// the device, then downloaded (waits; reports the device's calls' errors first).
fn region_to_host<T: Element>(b: &Buffer<T>, dev: &Device, r: &Region) -> Result<Matrix<T>, Error> {
    let mut tmp = dev.alloc_uninit::<T>(NAME, &r.shape)?;
    dev.copy_region(b, r.offset, &mut tmp, 0, &r.shape)?;
    let mut m = Matrix::zeros(r.shape.as_slice());
    let read = dev.download(&tmp, &mut m);
    dev.check_pending()?;
    read.map(|()| m)
}

impl<T: Element> DeviceView<'_, T> {
    /// A host copy of the region (on a device: waits, as [`DeviceMatrix::to_host`]).
    pub fn to_host(&self) -> Result<Matrix<T>, Error> {
        match &self.of {
            ViewOf::Host(v) => Ok(v.to_matrix()),
            ViewOf::Device(b, dev, r) => region_to_host(b, dev, r),
        }
    }
}

impl<T: Element> DeviceViewMut<'_, T> {
    /// A host copy of the region (on a device: waits, as [`DeviceMatrix::to_host`]).
    pub fn to_host(&self) -> Result<Matrix<T>, Error> {
        match &self.of {
            ViewOfMut::Host(v) => Matrix::copy_of(v).map_err(layout_error("roi")),
            ViewOfMut::Device(b, dev, r) => region_to_host(b, dev, r),
        }
    }
}

/// `MatrixRef` of a view type over its host view or its device region.
macro_rules! view_ref {
    ($($view:ident($of:ident)),*) => {$(
        impl<T: Element> MatrixRef<T> for $view<'_, T> {
            fn shape(&self) -> &[usize] {
                match &self.of {
                    $of::Host(v) => v.shape(),
                    $of::Device(_, _, r) => &r.shape,
                }
            }
            fn as_slice(&self) -> &[T] {
                match &self.of {
                    $of::Host(v) => v.as_slice(),
                    $of::Device(..) => &[],
                }
            }
            fn row_pitch(&self) -> usize {
                match &self.of {
                    $of::Host(v) => v.row_pitch(),
                    $of::Device(_, _, r) => r.shape.last().copied().unwrap_or(1),
                }
            }
            fn plane_pitch(&self) -> usize {
                match &self.of {
                    $of::Host(v) => v.plane_pitch(),
                    $of::Device(..) => crate::Pitch::contiguous(MatrixRef::shape(self)).plane,
                }
            }
            fn elements(&self) -> Elements<'_, T> {
                match &self.of {
                    $of::Host(v) => v.elements(),
                    $of::Device(buf, dev, r) => Elements::Device(OnDevice {
                        buf,
                        dev,
                        region: Some(r.clone()),
                    }),
                }
            }
        }
    )*};
}
view_ref!(DeviceView(ViewOf), DeviceViewMut(ViewOfMut));

impl<T: Element> MatrixMut<T> for DeviceViewMut<'_, T> {
    fn as_mut_slice(&mut self) -> &mut [T] {
        match &mut self.of {
            ViewOfMut::Host(v) => v.as_mut_slice(),
            ViewOfMut::Device(..) => &mut [],
        }
    }
    fn elements_mut(&mut self) -> ElementsMut<'_, T> {
        match &mut self.of {
            ViewOfMut::Host(v) => v.elements_mut(),
            ViewOfMut::Device(buf, dev, r) => ElementsMut::Device(OnDeviceMut {
                buf,
                dev,
                region: Some(r.clone()),
            }),
        }
    }
}
