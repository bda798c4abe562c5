/* TQ_HD marks per-site functions compiled both by gcc (CPU codelets) and nvcc (CUDA
 * codelets), so both compute the same arithmetic (QUDA's pattern, paper 000 Listing 1). */
#ifndef TQ_HD_H
#define TQ_HD_H

#ifdef __CUDACC__
#define TQ_HD static __host__ __device__ __forceinline__
#else
#define TQ_HD static inline __attribute__((always_inline))
#endif

/* TQ_HD functions that CUDA code also evaluates at compile time (template arguments, if
 * constexpr): tables such as a BLAS operation's operands. */
#ifdef __CUDACC__
#define TQ_HD_CONSTEXPR static __host__ __device__ constexpr
#else
#define TQ_HD_CONSTEXPR TQ_HD
#endif

/* Full unrolling of short fixed loops (so per-site arrays stay in registers on GPUs). */
#if defined(__CUDACC__)
#define TQ_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && !defined(__clang__)
#define TQ_UNROLL _Pragma("GCC unroll 16")
#else
#define TQ_UNROLL
#endif

#endif
