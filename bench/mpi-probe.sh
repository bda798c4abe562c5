# Probe of the MPI transports on the GPU machine (device tool): matpc on two ranks sharing
# the GPU with OpenMPI's shared-memory and TCP transports, against one rank with two blocks.
source "$(dirname "$0")/device-env.sh"
tool=$top/build/.libs/taskqcd
mpi="mpirun --allow-run-as-root -x LD_LIBRARY_PATH -x STARPU_HOME -x STARPU_SILENT"
c="--test matpc --niter 20 --no-check --recon 12"
row() { local name=$1; shift; printf '%-34s %s\n' "$name" "$(timeout 120 "$@" 2>&1 | grep -E 'time|rror' | awk '/time/ {print $2" ms"} !/time/' | tr '\n' ' ')"; }
nb="--bind-to none -x STARPU_WORKERS_NOBIND=1"
row "cuda 1 rank 2 blocks 32^4 single" $tool dslash --dim 32 32 32 32 --block 32 32 32 16 --where cuda --ncpus 4 $c --prec single
row "cuda 2 ranks vader 32^4 single" $mpi -np 2 $tool dslash --dim 32 32 32 32 --where cuda --ncpus 4 $c --prec single
row "cuda 2 ranks vader nobind 32^4" $mpi $nb -np 2 $tool dslash --dim 32 32 32 32 --where cuda --ncpus 4 $c --prec single
row "cuda 2 ranks vader bind-none 32^4" $mpi --bind-to none -np 2 $tool dslash --dim 32 32 32 32 --where cuda --ncpus 4 $c --prec single
row "cuda 2 ranks tcp nobind 32^4" $mpi $nb --mca pml ob1 --mca btl self,tcp -np 2 $tool dslash --dim 32 32 32 32 --where cuda --ncpus 4 $c --prec single
row "cuda 2 ranks vader nobind 64^4" $mpi $nb -np 2 $tool dslash --dim 64 64 64 64 --where cuda --ncpus 4 $c --prec single
row "cuda 1 rank 2 blocks 64^4 single" $tool dslash --dim 64 64 64 64 --block 64 64 64 32 --where cuda --ncpus 4 $c --prec single
row "cuda 1 rank 1 block 64^4 single" $tool dslash --dim 64 64 64 64 --where cuda --ncpus 4 $c --prec single
row "cpu 2 ranks nobind 24^4 single" $mpi $nb -np 2 $tool dslash --dim 24 24 24 24 --where cpu --ncpus 7 $c --prec single
row "cpu 1 rank 2 blocks 24^4 single" $tool dslash --dim 24 24 24 24 --block 24 24 24 12 --where cpu --ncpus 14 $c --prec single
