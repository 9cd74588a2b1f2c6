# pytest configuration of the Python package's tests (tests/python): the `gpu` marker, and its skip on a machine
# without a CUDA device (CI runs the CPU tests with numpy; the device runs both).
import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device and the sm_90a kernels (skipped without them)")


def _cuda_devices() -> int:
    try:
        from f4gemm import _f4gemm
    except ImportError:
        return 0
    return _f4gemm.cuda_device_count() if _f4gemm.cuda_compiled() else 0


def pytest_collection_modifyitems(config, items):
    if _cuda_devices() > 0:
        return
    skip = pytest.mark.skip(reason="no CUDA device (or f4gemm built without the CUDA backend)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
