// ---- posts/gups/LICENSE.gups.cu ----
// Copyright (c) 2020-2023 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
// 
// Copyright (c) 2012 NISHIMURA Ryohei.
// Copyright (c) 2012 The University of Tennessee.
// All rights reserved.
// 
// Redistribution and use in source and binary forms, with or without modification, are permitted provided that the following conditions are met:
// · Redistributions of source code must retain the above copyright notice, this list of conditions and the following disclaimer.
// · Redistributions in binary form must reproduce the above copyright notice, this list of conditions and the following disclaimer listed in this license in the documentation and/or other materials provided with the distribution.
// · Neither the name of the copyright holders nor the names of its contributors may be used to endorse or promote products derived from this software without specific prior written permission.
// 
// This software is provided by the copyright holders and contributors "as is" and any express or implied warranties, including, but not limited to, the implied warranties of merchantability and fitness for a particular purpose are disclaimed. in no event shall the copyright owner or contributors be liable for any direct, indirect, incidental, special, exemplary, or consequential damages (including, but not limited to, procurement of substitute goods or services; loss of use, data, or profits; or business interruption) however caused and on any theory of liability, whether in contract, strict liability, or tort (including negligence or otherwise) arising in any way out of the use of this software, even if advised of the possibility of such damage.
// ---- posts/gups/gups.cu up to d_check (host code dropped) ----
// Copyright (c) 2020-2023 NVIDIA CORPORATION & AFFILIATES. All rights reserved.

/* -*- mode: C; tab-width: 2; indent-tabs-mode: nil; -*- */

/*
 * This code has been contributed by the DARPA HPCS program.  Contact
 * David Koester <dkoester@mitre.org> or Bob Lucas <rflucas@isi.edu>
 * if you have questions.
 *
 *
 * GUPS (Giga UPdates per Second) is a measurement that profiles the memory
 * architecture of a system and is a measure of performance similar to MFLOPS.
 * The HPCS HPCchallenge RandomAccess benchmark is intended to exercise the
 * GUPS capability of a system, much like the LINPACK benchmark is intended to
 * exercise the MFLOPS capability of a computer.  In each case, we would
 * expect these benchmarks to achieve close to the "peak" capability of the
 * memory system. The extent of the similarities between RandomAccess and
 * LINPACK are limited to both benchmarks attempting to calculate a peak system
 * capability.
 *
 * GUPS is calculated by identifying the number of memory locations that can be
 * randomly updated in one second, divided by 1 billion (1e9). The term "randomly"
 * means that there is little relationship between one address to be updated and
 * the next, except that they occur in the space of one half the total system
 * memory.  An update is a read-modify-write operation on a table of 64-bit words.
 * An address is generated, the value at that address read from memory, modified
 * by an integer operation (add, and, or, xor) with a literal value, and that
 * new value is written back to memory.
 *
 * We are interested in knowing the GUPS performance of both entire systems and
 * system subcomponents --- e.g., the GUPS rating of a distributed memory
 * multiprocessor the GUPS rating of an SMP node, and the GUPS rating of a
 * single processor.  While there is typically a scaling of FLOPS with processor
 * count, a similar phenomenon may not always occur for GUPS.
 *
 * Select the memory size to be the power of two such that 2^n <= 1/2 of the
 * total memory.  Each CPU operates on its own address stream, and the single
 * table may be distributed among nodes. The distribution of memory to nodes
 * is left to the implementer.  A uniform data distribution may help balance
 * the workload, while non-uniform data distributions may simplify the
 * calculations that identify processor location by eliminating the requirement
 * for integer divides. A small (less than 1%) percentage of missed updates
 * are permitted.
 *
 * When implementing a benchmark that measures GUPS on a distributed memory
 * multiprocessor system, it may be required to define constraints as to how
 * far in the random address stream each node is permitted to "look ahead".
 * Likewise, it may be required to define a constraint as to the number of
 * update messages that can be stored before processing to permit multi-level
 * parallelism for those systems that support such a paradigm.  The limits on
 * "look ahead" and "stored updates" are being implemented to assure that the
 * benchmark meets the intent to profile memory architecture and not induce
 * significant artificial data locality. For the purpose of measuring GUPS,
 * we will stipulate that each thread is permitted to look ahead no more than
 * 1024 random address stream samples with the same number of update messages
 * stored before processing.
 *
 * The supplied MPI-1 code generates the input stream {A} on all processors
 * and the global table has been distributed as uniformly as possible to
 * balance the workload and minimize any Amdahl fraction.  This code does not
 * exploit "look-ahead".  Addresses are sent to the appropriate processor
 * where the table entry resides as soon as each address is calculated.
 * Updates are performed as addresses are received.  Each message is limited
 * to a single 64 bit long integer containing element ai from {A}.
 * Local offsets for T[ ] are extracted by the destination processor.
 *
 * If the number of processors is equal to a power of two, then the global
 * table can be distributed equally over the processors.  In addition, the
 * processor number can be determined from that portion of the input stream
 * that identifies the address into the global table by masking off log2(p)
 * bits in the address.
 *
 * If the number of processors is not equal to a power of two, then the global
 * table cannot be equally distributed between processors.  In the MPI-1
 * implementation provided, there has been an attempt to minimize the differences
 * in workloads and the largest difference in elements of T[ ] is one.  The
 * number of values in the input stream generated by each processor will be
 * related to the number of global table entries on each processor.
 *
 * The MPI-1 version of RandomAccess treats the potential instance where the
 * number of processors is a power of two as a special case, because of the
 * significant simplifications possible because processor location and local
 * offset can be determined by applying masks to the input stream values.
 * The non power of two case uses an integer division to determine the processor
 * location.  The integer division will be more costly in terms of machine
 * cycles to perform than the bit masking operations
 *
 * For additional information on the GUPS metric, the HPCchallenge RandomAccess
 * Benchmark,and the rules to run RandomAccess or modify it to optimize
 * performance -- see http://icl.cs.utk.edu/hpcc/
 *
 */

#include <assert.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define DEFAULT_LOGN 29
#define ACCESS_PER_ELEM_GMEM_U_UNL_RW 8
#define ACCESS_PER_ELEM_GMEM_R_W 32
#define ACCESS_PER_ELEM_SHMEM 65536
#define NUM_THREADS_PER_BLOCK_GMEM 1024
// Number of threads for shared memory GUPS may not be changed for best perf
#define NUM_THREADS_PER_BLOCK_SHMEM 1024
#define POLY 0x0000000000000007ULL

// Switch to compile-time shared memory allocation otherwise collected numbers
// from shmem are instruction bound (not real gups)
#ifdef STATIC_SHMEM

// Need to manually set correct value for compile time shmem allocation
// Handled through makefile (currently only SM80 and SM90 are supported)
// Must satisfy NSHMEM = prop.sharedMemPerBlockOptin / sizeof(benchtype);
#if __CUDA_ARCH__ == 800
#define NSHMEM 20864
#elif __CUDA_ARCH__ == 900
#define NSHMEM 29056
#else
// not supported, fall back to dynamic shmem allocation
#undef STATIC_SHMEM
#endif

#endif

union benchtype
{
  uint64_t data;
};
static __constant__ uint64_t c_m2[64];

#ifndef CUDA_RT_CALL
#define CUDA_RT_CALL(call)                                                         \
  {                                                                                \
    cudaError_t cudaStatus = call;                                                 \
    if (cudaSuccess != cudaStatus)                                                 \
      fprintf(                                                                     \
          stderr,                                                                  \
          "ERROR: CUDA RT call \"%s\" in line %d of file %s failed with %s "       \
          "(%d).\n",                                                               \
          #call,                                                                   \
          __LINE__,                                                                \
          __FILE__,                                                                \
          cudaGetErrorString(cudaStatus),                                          \
          cudaStatus);                                                             \
  }
#endif

static __global__ void d_init(size_t n, benchtype* t)
{
  for (ptrdiff_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    t[i].data = i;
  }
}

static __device__ uint64_t d_starts(size_t n)
{
  if (n == 0) {
    return 1;
  }

  int i = 63 - __clzll(n);

  uint64_t ran = 2;
  while (i > 0) {
    uint64_t temp = 0;
    for (int j = 0; j < 64; j++) {
      if ((ran >> j) & 1) {
        temp ^= c_m2[j];
      }
    }
    ran = temp;
    i -= 1;
    if ((n >> i) & 1) {
      ran = (ran << 1) ^ ((int64_t)ran < 0 ? POLY : 0);
    }
  }

  return ran;
}

enum test_t
{
  UPDATE = 0,
  READ,
  WRITE,
  READ_WRITE,
  UPDATE_NO_LOOP,
};

const char* test_name[] = {
    "Gupdates/s ATOM.CAS.64(loop)",
    "Greads/s LD.64",
    "Gwrites/s STG.64",
    "Greads+writes/s LDG.64+STG.64",
    "Gupdates/s ATOM.CAS.64(no_loop)",
};

template <test_t T_TYPE>
__global__ void
d_bench(size_t n, size_t working_set, benchtype* t, int accesses_per_elem)
{
  size_t num_threads = gridDim.x * blockDim.x;
  size_t thread_num = blockIdx.x * blockDim.x + threadIdx.x;
  size_t start = thread_num * accesses_per_elem * n / num_threads;
  size_t end = (thread_num + 1) * accesses_per_elem * n / num_threads;
  benchtype ran;
  ran.data = d_starts(start);

#pragma unroll
  for (ptrdiff_t i = start; i < end; ++i) {
    ran.data = (ran.data << 1) ^ ((int64_t)ran.data < 0 ? POLY : 0);
    unsigned long long int *address, old, assumed;
    address = (unsigned long long int*)&t[ran.data & (working_set - 1)].data;
    switch (T_TYPE) {
    case READ:
      old = *address;
      if (old == n) { // basically never executes
        *address = n + 1;
      }
      break;
    case WRITE:
      *address = 1;
      break;
    case READ_WRITE:
      *address += 1;
      break;
    case UPDATE_NO_LOOP:
      old = *address;
      assumed = old;
      old = atomicCAS(address, assumed, assumed ^ ran.data);
      break;
    case UPDATE:
      old = *address;
      do {
        assumed = old;
        old = atomicCAS(address, assumed, assumed ^ ran.data);
      } while (assumed != old);
      break;
    }
  }
}

template <test_t T_TYPE>
__global__ void d_bench_shmem(size_t n_shmem, int accesses_per_elem_sh)
{
  extern __shared__ benchtype extern_mem[];
  benchtype* t = (benchtype*)&extern_mem;

  size_t num_threads = gridDim.x * blockDim.x;
  size_t thread_num = blockIdx.x * blockDim.x + threadIdx.x;
#ifdef STATIC_SHMEM
  // ignore any compiler warnings about not using n_shmem!
  const size_t n_shmem_l = NSHMEM;
#else
  const size_t n_shmem_l = n_shmem;
#endif
  size_t start = thread_num * accesses_per_elem_sh * n_shmem_l / num_threads;
  size_t end = (thread_num + 1) * accesses_per_elem_sh * n_shmem_l / num_threads;
  benchtype ran;
  ran.data = d_starts(start);

#pragma unroll
  for (ptrdiff_t i = start; i < end; ++i) {
    ran.data = (ran.data << 1) ^ ((int64_t)ran.data < 0 ? POLY : 0);
    unsigned long long int *address, old, assumed;
    address = (unsigned long long int*)&t[ran.data % n_shmem_l].data;
    switch (T_TYPE) {
    case READ:
      old = *address;
      if (old == n_shmem_l) { // basically never executes
        *address = n_shmem_l + 1;
      }
      break;
    case WRITE:
      *address = 1;
      break;
    case READ_WRITE:
      *address += 1;
      break;
    case UPDATE_NO_LOOP:
      old = *address;
      assumed = old;
      old = atomicCAS(address, assumed, assumed ^ ran.data);
      break;
    case UPDATE:
      old = *address;
      do {
        assumed = old;
        old = atomicCAS(address, assumed, assumed ^ ran.data);
      } while (assumed != old);
      break;
    }
  }
}

static __global__ void d_check(size_t n, benchtype* t, uint32_t* d_error)
{
  for (ptrdiff_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    if (t[i].data != i) {
      atomicAdd(d_error, 1);
    }
  }
}
