#!/usr/bin/env python3
"""Regenerate the array-file fixtures of testdata/arrays with NumPy, SciPy and h5py.

Usage (from the repository root; needs numpy, scipy and h5py, e.g. Debian's
python3-numpy, python3-scipy and python3-h5py):

    python3 scripts/make-fixtures.py [OUTPUT_DIR]

OUTPUT_DIR defaults to testdata/arrays. Every cube is 4x5x3 (height x width x
bands) and holds a known formula of the voxel position, so the Go tests check
the decoded values without Python:

    f(h, w, b) = 20*h + 3*w + 7*b + 1      (1 .. 87)

Each file's values are f scaled as its name says (see VALUES below). The files
are written by the tools users write cubes with (np.save, scipy.io.savemat,
h5py, the v7.3 files with the 512-byte MATLAB header that MATLAB writes);
the big-endian MAT-file, which SciPy cannot write, is written by hand
below and checked by reading it back with scipy.io.loadmat.
"""

import os
import struct
import sys
import zlib

import h5py
import numpy as np
import scipy.io

H, W, B = 4, 5, 3
WAVELENGTHS = np.array([[400.0, 410.0, 420.0]])


def formula():
    h, w, b = np.meshgrid(np.arange(H), np.arange(W), np.arange(B), indexing="ij")
    return (20 * h + 3 * w + 7 * b + 1).astype(np.float64)  # shape (H, W, B)


F = formula()

# Values of each kind of fixture, as functions of F. The Go tests mirror them.
VALUES = {
    "refl": F / 100,  # reflectance in [0, 1]: automatic scale 255
    "u8": F,  # uint8: scale 1
    "u16": F * 700,  # full-range 16-bit counts: scale 255/65535
    "i16": F - 40,  # int16 with negative values: scale 1
    "counts12": F * 40,  # 12-bit counts as float64: auto scale 1 (floats over 2 are taken as they are)
    "q": F / 128,  # reflectance that float16 holds exactly: automatic scale 255
}




def scene16():
    """A 16 x 16 x 4 reflectance reference (smooth ramps) and a noisy scene
    of it (seeded noise of standard deviation 0.05), both in [0, 1] on
    16-bit levels k/65535."""
    h, w, b = np.meshgrid(np.arange(16), np.arange(16), np.arange(4), indexing="ij")
    ref = 0.1 + 0.5 * (h + w) / 30 + 0.1 * b
    noisy = ref + 0.05 * np.random.default_rng(22).standard_normal(ref.shape)
    level = lambda v: np.round(np.clip(v, 0, 1) * 65535) / 65535
    return level(noisy), level(ref)


SCENE16, REF16 = scene16()


def save_npy(out, name, values, dtype, order="C", axes="HWB"):
    """np.save a cube with its axes in the order axes, in memory order order."""
    a = values.astype(dtype)
    perm = ["HWB".index(c) for c in axes]
    a = np.transpose(a, perm)
    a = np.asfortranarray(a) if order == "F" else np.ascontiguousarray(a)
    np.save(os.path.join(out, name), a)


def mat_be(path, variables):
    """Write a big-endian level-5 MAT-file (uncompressed).

    variables: list of (name, class_code, dims, storage_type, bytes_big_endian).
    """

    def element(typ, data):
        pad = (-len(data)) % 8
        return struct.pack(">II", typ, len(data)) + data + b"\0" * pad

    with open(path, "wb") as f:
        text = b"MATLAB 5.0 MAT-file, big-endian fixture"
        f.write(text + b" " * (116 - len(text)) + b"\0" * 8 + struct.pack(">H", 0x0100) + b"MI")
        for name, cls, dims, typ, data in variables:
            body = element(6, struct.pack(">II", cls, 0))
            body += element(5, struct.pack(">%di" % len(dims), *dims))
            nb = name.encode()
            if len(nb) <= 4:  # small data element form
                body += struct.pack(">HH", len(nb), 1) + nb + b"\0" * (4 - len(nb))
            else:
                body += element(1, nb)
            body += element(typ, data)
            f.write(struct.pack(">II", 14, len(body)) + body)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "arrays")
    os.makedirs(out, exist_ok=True)

    # .npy: each element type, C and Fortran order, both byte orders.
    save_npy(out, "refl_f4_c.npy", VALUES["refl"], "<f4")
    save_npy(out, "refl_f4_f.npy", VALUES["refl"], "<f4", order="F")
    save_npy(out, "refl_f8_be_c.npy", VALUES["refl"], ">f8")
    save_npy(out, "counts12_f8_f.npy", VALUES["counts12"], "<f8", order="F")
    save_npy(out, "u16_c.npy", VALUES["u16"], "<u2")
    save_npy(out, "u16_be_f.npy", VALUES["u16"], ">u2", order="F")
    save_npy(out, "u8_c.npy", VALUES["u8"], "|u1")
    save_npy(out, "u8_f.npy", VALUES["u8"], "|u1", order="F")
    save_npy(out, "i16_c.npy", VALUES["i16"], "<i2")
    # PyTorch stores images as (bands, height, width).
    save_npy(out, "refl_f4_bhw.npy", VALUES["refl"], "<f4", axes="BHW")
    save_npy(out, "refl_f4_wbh_f.npy", VALUES["refl"], "<f4", order="F", axes="WBH")
    # The other integer types and float16: 16-bit counts in the wide
    # integers (PIL gives 16-bit PNGs as int32, NumPy's integer default is
    # int64), so the automatic scale is 255/65535 whatever the width.
    save_npy(out, "i8_c.npy", VALUES["u8"], "|i1")
    save_npy(out, "i32_c.npy", VALUES["u16"], "<i4")
    save_npy(out, "i64_c.npy", VALUES["u16"], "<i8")
    save_npy(out, "u32_be_c.npy", VALUES["u16"], ">u4")
    save_npy(out, "u64_f.npy", VALUES["u16"], "<u8", order="F")
    save_npy(out, "q_f2_c.npy", VALUES["q"], "<f2")
    save_npy(out, "q_f2_be_f.npy", VALUES["q"], ">f2", order="F")
    # Singleton dimensions, dropped on reading: (1, H, W, B) and (H, W, B, 1).
    np.save(os.path.join(out, "refl_f4_1hwb.npy"), VALUES["refl"].astype("<f4")[None])
    np.save(os.path.join(out, "u16_hwb1_f.npy"), np.asfortranarray(VALUES["u16"].astype("<u2")[..., None]))
    # Not cubes: a 2-D image, a 4-D array, booleans and complex numbers.
    np.save(os.path.join(out, "plane.npy"), VALUES["u8"][:, :, 0].astype("<f4"))
    np.save(os.path.join(out, "four_d.npy"), np.zeros((2, 2, 2, 2), "<f4"))
    np.save(os.path.join(out, "bool.npy"), VALUES["u8"] > 40)
    np.save(os.path.join(out, "complex.npy"), (VALUES["refl"] + 1j).astype("<c8"))

    # Level-5 MAT-files through SciPy, uncompressed (v6) and compressed (v7).
    cube = {"cube": VALUES["refl"], "wavelengths": WAVELENGTHS}
    scipy.io.savemat(os.path.join(out, "refl_v5.mat"), cube, do_compression=False)
    scipy.io.savemat(os.path.join(out, "refl_v7z.mat"), cube, do_compression=True)
    classes = {
        "c_double": VALUES["refl"],
        "c_single": VALUES["refl"].astype(np.float32),
        "c_uint8": VALUES["u8"].astype(np.uint8),
        "c_uint16": VALUES["u16"].astype(np.uint16),
        "c_int16": VALUES["i16"].astype(np.int16),
        "c_int32": VALUES["u8"].astype(np.int32),
        "c_complex": VALUES["refl"] + 1j,
        "c_logical": VALUES["u8"] > 40,
        "plane": VALUES["u8"][:, :, 0],
        "note": "not a cube",
    }
    scipy.io.savemat(os.path.join(out, "classes_v7z.mat"), classes, do_compression=True)
    scipy.io.savemat(
        os.path.join(out, "two_cubes.mat"),
        {"first": VALUES["refl"], "second": VALUES["u16"].astype(np.uint16), "plane": VALUES["u8"][:, :, 0]},
    )
    scipy.io.savemat(os.path.join(out, "plane.mat"), {"plane": VALUES["u8"][:, :, 0]})
    # Every integer class, and a cube with a leading singleton dimension.
    scipy.io.savemat(
        os.path.join(out, "types_v7z.mat"),
        {
            "c_int8": VALUES["u8"].astype(np.int8),
            "c_int32": VALUES["u16"].astype(np.int32),
            "c_int64": VALUES["u16"].astype(np.int64),
            "c_uint32": VALUES["u16"].astype(np.uint32),
            "c_uint64": VALUES["u16"].astype(np.uint64),
            "c_1hwb": VALUES["refl"][None],
        },
        do_compression=True,
    )

    # Big-endian, with a double array stored as uint8 the way MATLAB saves
    # whole-numbered doubles, and a uint16 one stored as it is.
    col = lambda v, dt: np.asarray(v, dtype=dt).flatten(order="F").tobytes()
    mat_be(
        os.path.join(out, "be.mat"),
        [
            ("dbl", 6, [H, W, B], 2, col(VALUES["u8"], ">u1")),
            ("u16", 11, [H, W, B], 4, col(VALUES["u16"], ">u2")),
            ("wavelengths", 6, [1, B], 9, col(WAVELENGTHS, ">f8")),
        ],
    )
    back = scipy.io.loadmat(os.path.join(out, "be.mat"))
    assert np.array_equal(back["dbl"], VALUES["u8"]), "be.mat: dbl does not read back"
    assert np.array_equal(back["u16"], VALUES["u16"]), "be.mat: u16 does not read back"
    assert back["u16"].dtype.kind == "u" and back["u16"].dtype.itemsize == 2

    # MATLAB v7.3: HDF5 with a 512-byte MAT-file header in the user block.
    # h5py sees MATLAB's dimensions reversed: an H x W x B cube is (B, W, H).
    def v73(name, libver="earliest"):
        # Through the low-level API, so that the root group records no
        # times either and the files are the same every run.
        fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
        fcpl.set_userblock(512)
        fcpl.set_obj_track_times(False)
        fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
        low = h5py.h5f.LIBVER_LATEST if libver == "latest" else h5py.h5f.LIBVER_EARLIEST
        fapl.set_libver_bounds(low, h5py.h5f.LIBVER_LATEST)
        return h5py.File(h5py.h5f.create(os.path.join(out, name).encode(), h5py.h5f.ACC_TRUNC, fcpl=fcpl, fapl=fapl))

    def matlab(f, name, values, cls, **kw):
        a = np.asarray(values)
        d = f.create_dataset(name, data=np.ascontiguousarray(a.transpose(tuple(range(a.ndim))[::-1])), track_times=False, **kw)
        d.attrs["MATLAB_class"] = np.bytes_(cls)
        return d

    with v73("refl_v73.mat") as f:  # contiguous, as MATLAB writes small arrays
        matlab(f, "cube", VALUES["refl"], "double")
        matlab(f, "wavelengths", WAVELENGTHS, "double")
    with v73("v73_chunked.mat") as f:  # chunked and compressed, as MATLAB writes large ones
        matlab(f, "u16", VALUES["u16"].astype(np.uint16), "uint16", chunks=(2, 3, 3), compression="gzip", shuffle=True, fletcher32=True)
        matlab(f, "note", np.frombuffer("not a cube".encode("utf-16-le"), "<u2")[None, :], "char")
        matlab(f, "mask", (VALUES["u8"] > 40).astype(np.uint8), "logical")
        g = f.create_group("meta")
        g.attrs["MATLAB_class"] = np.bytes_("struct")
        f.create_group("#refs#")
    with v73("v73_two.mat") as f:
        matlab(f, "first", VALUES["refl"], "double", chunks=(3, 5, 4), compression="gzip")
        matlab(f, "second", VALUES["i16"].astype(np.int16), "int16")
    with v73("v73_latest.mat", libver="latest") as f:  # newer HDF5 structures, big-endian data
        matlab(f, "cube", VALUES["refl"].astype(">f4"), "single")
    with v73("v73_latest_chunked.mat", libver="latest") as f:  # chunk index of HDF5 1.10: refused
        matlab(f, "cube", VALUES["refl"], "double", chunks=(1, 5, 4), compression="gzip")
    with v73("v73_compact.mat") as f:  # compact layout, written through the low-level API
        a = np.ascontiguousarray(VALUES["u8"].astype(np.uint8).transpose(2, 1, 0))
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        dcpl.set_obj_track_times(False)
        sid = h5py.h5s.create_simple(a.shape)
        dsid = h5py.h5d.create(f.id, b"cube", h5py.h5t.STD_U8LE, sid, dcpl=dcpl)
        dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, a)
        f["cube"].attrs["MATLAB_class"] = np.bytes_("uint8")
    with v73("v73_noattr.mat") as f:  # written by h5py without MATLAB's attributes
        f.create_dataset("cube", data=np.ascontiguousarray(VALUES["u16"].astype("<u2").transpose(2, 1, 0)), track_times=False)
    with v73("v73_types.mat") as f:  # the other classes, and a singleton dimension
        matlab(f, "c_int8", VALUES["u8"].astype(np.int8), "int8")
        matlab(f, "c_int32", VALUES["u16"].astype(np.int32), "int32")
        matlab(f, "c_int64", VALUES["u16"].astype(np.int64), "int64")
        matlab(f, "c_uint32", VALUES["u16"].astype(np.uint32), "uint32")
        matlab(f, "c_uint64", VALUES["u16"].astype(np.uint64), "uint64", chunks=(2, 3, 3), compression="gzip")
        matlab(f, "c_1hwb", VALUES["refl"][None], "double")
    # A reflectance scene large enough to be scored (SSIM needs 11 x 11
    # pixels) and its reference, both on 16-bit levels k/65535 so that a
    # PNG band stack holds them exactly: the command-line tests store the
    # scene in every format and check that each scores the same.
    with v73("scene16_v73.mat") as f:
        matlab(f, "cube", SCENE16, "double", chunks=(2, 8, 8), compression="gzip")
        matlab(f, "ref", REF16, "double")
    for name in ["refl_v73.mat", "v73_chunked.mat", "v73_two.mat", "v73_latest.mat", "v73_latest_chunked.mat", "v73_compact.mat", "v73_noattr.mat", "v73_types.mat", "scene16_v73.mat"]:
        with open(os.path.join(out, name), "r+b") as f:
            text = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: fixture HDF5 schema 1.00 ."
            f.write(text + b" " * (116 - len(text)) + b"\0" * 8 + struct.pack("<H", 0x0200) + b"IM")
        with h5py.File(os.path.join(out, name), "r") as f:  # still valid HDF5
            assert "cube" in f or "u16" in f or "first" in f or "c_int8" in f

    # HDF5 files as h5py writes them, without MATLAB's header block or
    # attributes, named .mat: a cube as h5py shows it (B, W, H), and one
    # file of every element type h5py stores without a MATLAB class,
    # booleans and complex numbers included.
    def h5py_plain(name, libver="earliest"):
        fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
        fcpl.set_obj_track_times(False)
        fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
        low = h5py.h5f.LIBVER_LATEST if libver == "latest" else h5py.h5f.LIBVER_EARLIEST
        fapl.set_libver_bounds(low, h5py.h5f.LIBVER_LATEST)
        return h5py.File(h5py.h5f.create(os.path.join(out, name).encode(), h5py.h5f.ACC_TRUNC, fcpl=fcpl, fapl=fapl))

    bwh = lambda v: np.ascontiguousarray(np.asarray(v).transpose(tuple(range(np.ndim(v)))[::-1]))
    with h5py_plain("h5py_plain.mat") as f:
        f.create_dataset("cube", data=bwh(VALUES["refl"].astype("<f4")), track_times=False)
    with h5py_plain("h5py_latest.mat", libver="latest") as f:
        f.create_dataset("cube", data=bwh(VALUES["u16"].astype("<i8")), track_times=False)
    with h5py_plain("h5py_types.mat") as f:
        f.create_dataset("f16", data=bwh(VALUES["q"].astype("<f2")), track_times=False)
        f.create_dataset("f16_be", data=bwh(VALUES["q"].astype(">f2")), track_times=False, chunks=(3, 5, 2), compression="gzip", shuffle=True)
        f.create_dataset("i32", data=bwh(VALUES["u16"].astype("<i4")), track_times=False)
        f.create_dataset("u64", data=bwh(VALUES["u16"].astype(">u8")), track_times=False)
        f.create_dataset("hwb1", data=bwh(VALUES["u8"].astype("<u1")[..., None]), track_times=False)
        f.create_dataset("mask", data=bwh(VALUES["u8"] > 40), track_times=False)
        f.create_dataset("z", data=bwh(VALUES["refl"] + 1j), track_times=False)
    for name in ["h5py_plain.mat", "h5py_latest.mat", "h5py_types.mat"]:
        with h5py.File(os.path.join(out, name), "r") as f:
            assert f.userblock_size == 0, name

    # Plain HDF5 cubes by path (.h5, .he5): a 16 x 12 x 4 uint8 cube
    # (large enough for the SSIM's window) holding
    #     g(h, w, b) = (13*h + 5*w + 29*b + 1) mod 251
    # in nested groups, chunked and deflated, as lines x samples x bands,
    # bands x lines x samples and PRISMA's lines x bands x samples, with
    # the wavelengths beside the second, and a 2-D dataset; a file with
    # one float cube in a group.
    h, w, b = np.meshgrid(np.arange(16), np.arange(12), np.arange(4), indexing="ij")
    u8 = ((13 * h + 5 * w + 29 * b + 1) % 251).astype("<u1")  # (H, W, B)
    with h5py_plain("cubes.h5") as f:
        g = f.create_group("HDFEOS").create_group("SWATHS").create_group("Data Fields")
        f.create_dataset("hwb", data=u8, track_times=False)
        g.create_dataset("Cube", data=u8.transpose(2, 0, 1), chunks=(2, 8, 5), compression="gzip", shuffle=True, track_times=False)
        g.create_dataset("wavelengths", data=np.array([450.0, 550.0, 650.0, 750.0]), track_times=False)
        p = f.create_group("prisma")
        p.create_dataset("VNIR_Cube", data=u8.transpose(0, 2, 1), chunks=(8, 4, 12), compression="gzip", track_times=False)
        p.create_dataset("plane", data=u8[:, :, 0], track_times=False)
    with h5py_plain("one_cube.he5") as f:
        f.create_group("data").create_dataset("reflectance", data=VALUES["refl"].astype("<f4"), track_times=False)
    with h5py.File(os.path.join(out, "cubes.h5"), "r") as f:
        assert np.array_equal(f["HDFEOS/SWATHS/Data Fields/Cube"][()], u8.transpose(2, 0, 1))

    # SciPy puts the date in the header text: fix it, so the files are the
    # same every run.
    for name in ["refl_v5.mat", "refl_v7z.mat", "classes_v7z.mat", "two_cubes.mat", "plane.mat", "types_v7z.mat"]:
        with open(os.path.join(out, name), "r+b") as f:
            text = b"MATLAB 5.0 MAT-file Platform: posix, Created by scipy.io.savemat for the fixtures"
            f.write(text + b" " * (116 - len(text)))

    # Sanity: every SciPy file reads back with the values written.
    assert np.array_equal(scipy.io.loadmat(os.path.join(out, "refl_v7z.mat"))["cube"], VALUES["refl"])
    assert scipy.io.loadmat(os.path.join(out, "types_v7z.mat"))["c_1hwb"].shape == (1, H, W, B)
    print("wrote fixtures to", out)


if __name__ == "__main__":
    main()
