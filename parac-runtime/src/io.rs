//! Matrices from and to files: PNG (through `image`) and NumPy `.npy` with exact element types.
