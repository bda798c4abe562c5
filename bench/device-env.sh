# Sourced by the scripts that run on the GPU machine (device tool, carrying build and
# .deps/starpu): the repository root, the output folder ($OUT there), the libraries of this
# build (TQ_LIBDIR first: another build of libtaskqcd.so, for kernel variants) and a
# private StarPU home (its performance models).
top=$(pwd)
out=${OUT:-/tmp/taskqcd-device}
mkdir -p "$out"
export LD_LIBRARY_PATH="${TQ_LIBDIR:+$TQ_LIBDIR:}$top/build/.libs:$top/.deps/starpu/lib:${LD_LIBRARY_PATH:-}"
export STARPU_HOME=/tmp/taskqcd-starpu-home STARPU_SILENT=1
mkdir -p "$STARPU_HOME"
