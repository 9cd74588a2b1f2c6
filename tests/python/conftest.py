# pytest configuration of the Python package's tests (tests/python): the `gpu` marker, and its skip on a machine
# without a CUDA device (CI runs the CPU tests with numpy; the device runs both); the loader of the repository's
# Python tools (bench/, scripts/) that some tests exercise.
import importlib.util
import os

import pytest

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


@pytest.fixture(scope="session")
def repo_module():
    """repo_module("scripts/ncu_mix.py") imports that file of the repository as a module (not a package)."""

    def load(relpath):
        name = "f4gemm_tool_" + os.path.splitext(os.path.basename(relpath))[0]
        spec = importlib.util.spec_from_file_location(name, os.path.join(REPO, relpath))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    return load


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
