"""Writes small safetensors files for the CLI tests: the format's header and data, nothing else."""
import json
import struct

import numpy as np

STORED = {"F32": "<f4", "F64": "<f8"}


def write(path, tensors, dtypes=None, dtype="F32"):
    """tensors: (name, array) pairs, stored as `dtype` (F32 or F64). dtypes: names whose header says
    another dtype while the bytes stay `dtype`'s (files that lie about a tensor, for the error tests)."""
    header, blobs, offset = {}, [], 0
    for name, a in tensors:
        a = np.ascontiguousarray(a, dtype=STORED[dtype])
        header[name] = {"dtype": (dtypes or {}).get(name, dtype), "shape": list(a.shape),
                        "data_offsets": [offset, offset + a.nbytes]}
        blobs.append(a.tobytes())
        offset += a.nbytes
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
