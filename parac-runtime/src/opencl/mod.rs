//! The OpenCL back end: devices, programs (built once, cached), buffers with padded rows,
//! launches and transfers.
