#!/usr/bin/env python3
"""Writes tests/fuzz/corpus: hand-made seeds (valid inputs the fuzzers mutate from) and the inputs of the
crashes found so far (regression-*). Run from tests/fuzz: /usr/bin/python3 make_seeds.py."""
import json
import os
import struct


def put(target, name, data):
    os.makedirs(f"corpus/{target}", exist_ok=True)
    with open(f"corpus/{target}/{name}", "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


# deck: INI text, then NUL and override lines.
put("deck", "seed-all-keys", "# command: markov\n[run]\nseed = 3\noutput = r.h5\nprogress = false\n[model]\nN = 10\n"
    "beta = 2.5\ndt = 0.5\n[flow]\nmethod = gd\n[markov]\ntext_file = t.txt\npi = 0.25, 0.75\n[power]\nlayers = 1,3\n")
put("deck", "seed-overrides", "[model]\nN = 4\n\0--model.beta=1e-3\n--flow.method=rk\n--power.layers=0, 2")

# safetensors: little-endian header length, JSON header, data.
def safetensors(tensors, metadata=None):
    header, data = {}, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + data


put("safetensors", "seed-four-dtypes", safetensors([
    ("a", "F64", [2, 3], struct.pack("<6d", 1, -2, 3.5, 0, 1e300, -1e-300)),
    ("b", "F32", [3], struct.pack("<3f", 1, 2, 3)),
    ("c", "F16", [2, 2], struct.pack("<4H", 0x3C00, 0xC000, 0x7BFF, 0x0001)),
    ("d", "BF16", [1, 2], struct.pack("<2H", 0x3F80, 0xFF80)),
    ("e", "I32", [2], struct.pack("<2i", 1, -1))], {"format": "pt"}))

# text: the first byte's low bit chooses bytes (1) or characters (0).
put("text", "seed-chars", "\0" + "the cat sat on the mat; naïve café, 東京 and 🙂 twice 🙂\n")
put("text", "seed-bytes", b"\1" + bytes(range(256)) + "é".encode())


# HDF5 programs (hdf5_builder.hpp): kind (even dataset, odd attribute), name index, type (0 f64, 1 f32,
# 2 i64, 3 i32, 4 u8, 5 fixed string, 6 variable string), rank, dims, values (4, 2v: the small number v).
def attr_text(name, text):
    return bytes([1, name, 6, 0, text])


def attr_int(name, v):
    return bytes([1, name, 2, 0, 4, (2 * v) & 0xFF])


def dataset(name, dims, values):
    out = bytes([0, name, 0, len(dims)] + list(dims))
    for v in values:
        out += bytes([4, (2 * v) & 0xFF])
    return out


# checkpoint: rows 2, width 3, expected 6; attributes by index in fuzz_checkpoint.cpp's list.
ckpt = bytes([2, 3, 6])
ckpt += attr_text(0, 0) + attr_int(1, 1)
for name in range(2, 10):
    ckpt += attr_text(name, 2 if name == 2 else 3 if name == 8 else 5)
ckpt += attr_int(10, 1) + attr_int(11, 3) + attr_int(12, 1)
ckpt += dataset(0, [2, 3], range(6)) + dataset(1, [6], range(6)) + dataset(2, [6], range(6))
ckpt += dataset(3, [4], [1, 2, 3, 4]) + attr_int(14, 2) + attr_text(15, 5) + attr_int(16, 7)
put("checkpoint", "seed-valid", ckpt)

# hdf5_inputs: n 2, d 3, heads 0 (the file's), layers 0; tokens [2, 3]; a weights file of d 3, 1 head of
# width 2, 1 layer, shared 0, score_scale 1.
inputs = bytes([1, 2, 0, 0]) + dataset(0, [2, 3], [1, 0, 0, 0, 2, 0])
inputs += attr_int(0, 3) + attr_int(1, 1) + attr_int(2, 2) + attr_int(3, 1) + attr_int(4, 0)
inputs += bytes([1, 5, 0, 0, 4, 2])  # score_scale 1.0 (float64)
for name in (1, 2, 3):
    inputs += dataset(name, [1, 2, 3], [1, 2, 3, 4, 5, 6])
inputs += dataset(4, [1, 3, 2], [1, 0, 0, 1, 1, 1]) + dataset(5, [2, 3], [1, 2, 3, 4, 5, 6])
put("hdf5_inputs", "seed-valid", inputs)

# Crashes found by the fuzzers, kept as regression inputs (replayed on every run).
put("checkpoint", "regression-ascii-string", bytes.fromhex("2fffffffffb5"))  # an ASCII variable-length string
put("hdf5_inputs", "regression-weights-dataset", bytes.fromhex("08000000003e00"))  # /weights a dataset
put("checkpoint", "regression-scalar-run-file", bytes.fromhex(  # /run_file a scalar: read as [dims[0]]
    "02030601000600000101020004020102060002010306000501040600050105060005010606000501070600050108060003010906"
    "0005010a02000402010b02000406010c0200040200000002020304000402040404060408040a006c696e6b040004020404040604"
    "08040a0002000106040004020404040604080404000a0003010402040404060408010e02000404010f06000501100200040e"))
put("deck", "regression-hash-in-value",  # '#' in an override's value: the stored deck read back another value
    b"[model]\n\0--model.beta=1e-6\n--flow.method=rk\n--power.layers=power.l# cayers=0")
put("safetensors", "regression-number-overflow",  # a header number beyond double: json out_of_range, exit 3
    struct.pack("<Q", 358) + b'{"a": {"dty?e": "F64", "sh~pe": [2, 3], "edata_offsets": [0, 48]}, "b": {"dtype": "F16", ";hape": [3], "data_offsets":777777777777e7777777777777777777777777777777777777777777777777777777777777777777777777777777777777777777777777777777777777777 [48, 60]}, "c": {"dtype": "F16", "shape": [2, 2], "data_offsesets": [72, 80]}, "__metadata__": {"forma\'": "pt"}}\x00\x00\x00\x00\x00\x00\xf0?\x00\x00\x00\x00\x00\x00\x00\xc0\x00\x00\x00\x00\x00\x00\x0c@\x00\x00\x00\x00\x00\x00\x00\x00\x9cu\x00\x88<\xe47~Y\xf3\xf8\xc2\x1fn\xa5\x81\x00\x00\x80?\x00\x00\x00@\x00\x00@@\x00<\x00\xc0\xff{\x01\x00\x80?\x80\xff\x01\x00at\xff\xff\xff\xff')
