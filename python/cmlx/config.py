"""Build flags for C programs that use the libcmlx inside this package.

A pip-installed cmlx carries the C library (lib/libcmlx.so), the mlx-c
headers (include/mlx/c/*.h), a pkg-config file and a CMake package, so a C
program builds against it without the source tree::

    cc prog.c $(python -m cmlx.config --cflags --libs) -o prog
    PKG_CONFIG_PATH=$(python -m cmlx.config --pkgconfig-dir) pkg-config --libs cmlx
    cmake -Dcmlx_DIR=$(python -m cmlx.config --cmake-dir) ...   # find_package(cmlx)

The flags put the package's lib folder on the program's run path, so the
program finds libcmlx.so there when it runs.
"""

import argparse
import os
import sys

PREFIX = os.path.dirname(os.path.abspath(__file__))
INCLUDE_DIR = os.path.join(PREFIX, "include")
LIB_DIR = os.path.join(PREFIX, "lib")


def cflags():
    return f"-I{INCLUDE_DIR}"


def libs():
    return f"-L{LIB_DIR} -Wl,-rpath,{LIB_DIR} -lcmlx"


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m cmlx.config",
        description="Print what a C compiler, pkg-config or CMake needs to use this cmlx's libcmlx.")
    parser.add_argument("--cflags", action="store_true", help="the include flag (-I...)")
    parser.add_argument("--libs", action="store_true", help="the link flags (-L... -lcmlx)")
    parser.add_argument("--prefix", action="store_true", help="the folder holding lib/ and include/")
    parser.add_argument("--include-dir", action="store_true", help="the mlx-c headers' folder")
    parser.add_argument("--lib-dir", action="store_true", help="libcmlx.so's folder")
    parser.add_argument("--cmake-dir", action="store_true",
                        help="cmlxConfig.cmake's folder (for -Dcmlx_DIR=)")
    parser.add_argument("--pkgconfig-dir", action="store_true",
                        help="cmlx.pc's folder (for PKG_CONFIG_PATH)")
    args = parser.parse_args(argv)
    if not os.path.exists(os.path.join(LIB_DIR, "libcmlx.so")):
        print(f"cmlx.config: this cmlx ({PREFIX}) carries no libcmlx.so", file=sys.stderr)
        return 1
    picks = [(args.prefix, PREFIX), (args.include_dir, INCLUDE_DIR), (args.lib_dir, LIB_DIR),
             (args.cmake_dir, os.path.join(LIB_DIR, "cmake", "cmlx")),
             (args.pkgconfig_dir, os.path.join(LIB_DIR, "pkgconfig")),
             (args.cflags, cflags()), (args.libs, libs())]
    out = [value for wanted, value in picks if wanted]
    if not out:
        parser.print_help()
        return 2
    print(" ".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
