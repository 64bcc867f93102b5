"""Small helpers shared by the tokdyn post-processing scripts for reading HDF5 attributes."""

import numpy as np


def to_str(value):
    """Return an HDF5 string attribute as str (h5py may give bytes or str)."""
    if isinstance(value, np.ndarray):
        value = value.item() if value.size == 1 else value.tolist()
    if isinstance(value, (bytes, np.bytes_)):
        return value.decode("utf-8", errors="replace")
    return str(value)


def to_scalar(value):
    """Return a numeric HDF5 attribute as a Python scalar."""
    if isinstance(value, np.ndarray):
        value = value.reshape(-1)[0]
    return value.item() if hasattr(value, "item") else value
