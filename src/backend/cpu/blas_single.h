/* Single-threaded BLAS inside pool tasks.
 *
 * Kernels that call BLAS from many pool tasks at once (each on a block
 * small enough for one core) bracket the parallel loop with these: while
 * any such section is open, OpenBLAS runs every call on its calling
 * thread, so the pool's threads and OpenBLAS's do not oversubscribe the
 * cores.  Sections nest and may overlap across threads; the thread count
 * the library had is restored when the last one closes. */
#ifndef CMLX_BACKEND_CPU_BLAS_SINGLE_H
#define CMLX_BACKEND_CPU_BLAS_SINGLE_H

void cm_blas_single_begin(void);
void cm_blas_single_end(void);

#endif
