import sys

from .gemm import main

if __name__ == "__main__":       # not in the processes kernels.hopper.variants spawns
    main(sys.argv[1:])
