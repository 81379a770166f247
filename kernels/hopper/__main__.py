import sys

from .gemm import main

main(sys.argv[1:])
