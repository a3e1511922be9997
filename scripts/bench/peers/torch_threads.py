"""Holding PyTorch to a thread count. torch.set_num_threads bounds torch's own OpenMP team, not the
OpenBLAS that Debian's torch calls for Linear and for the convolutions it turns into products (1x1
layers): left alone, that OpenBLAS uses every core. So both are set, OpenBLAS through its own
openblas_set_num_threads on the copy this process has loaded."""
import ctypes
import os


def openblas_in_process():
    """The OpenBLAS library this process has loaded (torch's BLAS), or None."""
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if "openblas" in os.path.basename(p) and ".so" in p:
                return p
    return None


class Threads:
    """set(n) bounds torch and its OpenBLAS to n threads; describe() says what was found."""

    def __init__(self, torch):
        self.torch = torch
        self.path = openblas_in_process()
        self.blas = None
        if self.path:
            self.blas = ctypes.CDLL(self.path)
            self.blas.openblas_get_corename.restype = ctypes.c_char_p

    def set(self, n):
        self.torch.set_num_threads(n)
        if self.blas:
            self.blas.openblas_set_num_threads(n)

    def describe(self):
        if not self.blas:
            return "no OpenBLAS loaded in the process; threads: torch.set_num_threads"
        core = self.blas.openblas_get_corename().decode()
        return f"BLAS {self.path}, core {core}; threads: torch.set_num_threads + openblas_set_num_threads"
