"""pip install . --no-build-isolation: builds the Python package (python/,
docs/PYTHON.md) with CMake, offline, and installs it. The extension is the
CMake target smelt_python, linked with the static library."""
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    """Configures and builds the smelt_python target, then puts the module
    where setuptools expects the extension."""

    def build_extension(self, ext):
        # its own CMake tree beside build/ and build-asan/ (ignored by git)
        build = os.path.join(ROOT, "build-pip")
        subprocess.check_call([
            "cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
            "-DSMELT_BUILD_TESTS=OFF", "-DPython3_EXECUTABLE=" + sys.executable])
        subprocess.check_call(["cmake", "--build", build, "--target",
                               "smelt_python", "-j", str(os.cpu_count() or 2)])
        made = os.path.join(build, "python", "smelt")
        name = [f for f in os.listdir(made)
                if f.startswith("_smelt") and f.endswith(".so")][0]
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(os.path.join(made, name), dest)


setup(
    name="smelt",
    version="0.1.0",
    description="Smelt, a graph compiler and runtime for neural networks",
    packages=["smelt"],
    package_dir={"smelt": "python/smelt"},
    ext_modules=[Extension("smelt._smelt", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.8",
    install_requires=["numpy"],
)
