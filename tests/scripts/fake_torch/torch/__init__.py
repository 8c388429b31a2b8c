"""A stand-in for the few torch calls scripts/fa_check_torch.py makes, backed by numpy, for its test on a
machine without torch (tests/scripts/fa_check_torch_run_test.py): the whole run path (inputs, the callable,
the files, fa-check, one line per case, the exit code) runs, with tensors that are numpy arrays rounded to
the dtype they are moved to. No autograd: --backward needs the real torch (GPU_REQUEST in the lead's hands).
"""
import numpy as np

bfloat16 = "bf16"
float16 = "fp16"


def _round(a, dtype):
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == float16:
        return a.astype(np.float16).astype(np.float32)
    bits = a.view(np.uint32).astype(np.uint64)  # bf16: round to nearest even on the top 16 bits
    return (((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)


class Tensor:
    def __init__(self, array, dtype=None):
        self.array = np.asarray(array, dtype=np.float32)
        self.dtype = dtype

    @property
    def shape(self):
        return self.array.shape

    def to(self, device, dtype):
        assert device == "cuda", device
        return Tensor(_round(self.array, dtype), dtype)

    def transpose(self, a, b):
        return Tensor(np.swapaxes(self.array, a, b), self.dtype)

    def contiguous(self):
        return Tensor(np.ascontiguousarray(self.array), self.dtype)

    def detach(self):
        return self

    def float(self):
        return Tensor(self.array)

    def cpu(self):
        return self

    def numpy(self):
        return self.array

    def requires_grad_(self, flag=True):
        raise NotImplementedError("the numpy stand-in has no autograd: --backward needs the real torch")


def from_numpy(array):
    return Tensor(array)


class cuda:
    @staticmethod
    def is_available():
        return True
