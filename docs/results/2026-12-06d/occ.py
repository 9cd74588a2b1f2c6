"""Session 38: how many clusters of a cluster kernel the GPU holds at once (cuOccupancyMaxActiveClusters), for
pp_128x128_p_c2's compile-time 1 x 2 clusters at its dynamic shared memory (PERF.md entry 82). Driver API through
ctypes; prints one line."""
import ctypes as C
import sys

cubin, name, smem, threads = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3]), int(sys.argv[4])
cu = C.CDLL("libcuda.so.1")


def ck(r, what):
    if r != 0:
        s = C.c_char_p()
        cu.cuGetErrorString(r, C.byref(s))
        sys.exit(f"{what}: {r} {s.value}")


class Cfg(C.Structure):
    _fields_ = [("gx", C.c_uint), ("gy", C.c_uint), ("gz", C.c_uint), ("bx", C.c_uint), ("by", C.c_uint),
                ("bz", C.c_uint), ("smem", C.c_uint), ("stream", C.c_void_p), ("attrs", C.c_void_p),
                ("nattrs", C.c_uint)]


ck(cu.cuInit(0), "cuInit")
dev, ctx, mod, fn = C.c_int(), C.c_void_p(), C.c_void_p(), C.c_void_p()
ck(cu.cuDeviceGet(C.byref(dev), 0), "cuDeviceGet")
ck(cu.cuDevicePrimaryCtxRetain(C.byref(ctx), dev), "ctx")
ck(cu.cuCtxSetCurrent(ctx), "ctx current")
ck(cu.cuModuleLoad(C.byref(mod), cubin.encode()), "cuModuleLoad")
ck(cu.cuModuleGetFunction(C.byref(fn), mod, name), "cuModuleGetFunction")
ck(cu.cuFuncSetAttribute(fn, 8, smem), "max dynamic smem")  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
n = C.c_int()
cfg = Cfg(128, 8, 1, threads, 1, 1, smem, None, None, 0)
ck(cu.cuOccupancyMaxActiveClusters(C.byref(n), fn, C.byref(cfg)), "cuOccupancyMaxActiveClusters")
sms = C.c_int()
ck(cu.cuDeviceGetAttribute(C.byref(sms), 16, dev), "SM count")  # CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
print(f"{name.decode()}: {n.value} clusters at once on {sms.value} SMs (grid 128 x 8 of {threads} threads, {smem} bytes)")
