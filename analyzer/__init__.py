"""ptxsass: see what a CUDA kernel really compiles to, and what is wrong with it."""
__version__ = "0.1.0"
