// Origin: NVIDIA-developer-blog/code-samples @ 72d62ec4, posts/parallel_reduction_with_shfl/{fake_shfl.h,warp_reduce.h,block_reduce.h,fake_atomic.h,device_reduce_*.h} (BSD-3-Clause, each carries the notice below); "Faster Parallel Reductions on Kepler" (J. Luitjens), headers concatenated in include order, host wrappers dropped.
/* Copyright (c) 1993-2015, NVIDIA CORPORATION. All rights reserved.
 *
 * Redistribution and use in source and binary forms, with or without
 * modification, are permitted provided that the following conditions
 * are met:
 *  * Redistributions of source code must retain the above copyright
 *    notice, this list of conditions and the following disclaimer.
 *  * Redistributions in binary form must reproduce the above copyright
 *    notice, this list of conditions and the following disclaimer in the
 *    documentation and/or other materials provided with the distribution.
 *  * Neither the name of NVIDIA CORPORATION nor the names of its
 *    contributors may be used to endorse or promote products derived
 *    from this software without specific prior written permission.
 *
 * THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS ``AS IS'' AND ANY
 * EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
 * IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR
 * PURPOSE ARE DISCLAIMED.  IN NO EVENT SHALL THE COPYRIGHT OWNER OR
 * CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL,
 * EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO,
 * PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR
 * PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY
 * OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT
 * (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
 * OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
 */

//#define __shfl_down fake_shfl_down
#define MAX_BLOCK 512
__inline__ __device__
int fake_shfl_down(int val, int offset, int width=32) {
  static __shared__ int shared[MAX_BLOCK];
  int lane=threadIdx.x%32;

  shared[threadIdx.x]=val;
  __syncthreads();

  val = (lane+offset<width) ? shared[threadIdx.x+offset] : 0;
  __syncthreads();

  return val;
}




__inline__ __device__
int warpReduceSum(int val) {
  for (int offset = warpSize/2; offset > 0; offset /= 2)
    val += __shfl_down(val,offset);
  return val;
}





__inline__ __device__
int blockReduceSum(int val) {
  static __shared__ int shared[32];
  int lane=threadIdx.x%warpSize;
  int wid=threadIdx.x/warpSize;
  val=warpReduceSum(val);

  //write reduced value to shared memory
  if(lane==0) shared[wid]=val;
  __syncthreads();

  //ensure we only grab a value from shared memory if that warp existed
  val = (threadIdx.x<blockDim.x/warpSize) ? shared[lane] : int(0);
  if(wid==0) val=warpReduceSum(val);

  return val;
}


#if 0
template <class T>
__device__ __inline__
void atomicAdd(T* ptr, T val) {
  *ptr+=val;
}
#endif






__global__ void device_reduce_atomic_kernel(int *in, int* out, int N) {
  int sum=int(0);
  for(int i=blockIdx.x*blockDim.x+threadIdx.x;i<N;i+=blockDim.x*gridDim.x) {
    sum+=in[i];
  }
  atomicAdd(out,sum);
}


__global__ void device_reduce_atomic_kernel_vector2(int *in, int* out, int N) {
  int sum=0;
  int idx=blockIdx.x*blockDim.x+threadIdx.x;
  for(int i=idx;i<N/2;i+=blockDim.x*gridDim.x) {
    int2 val=reinterpret_cast<int2*>(in)[i];
    sum+=val.x+val.y;
  }
  int i=idx+N/2*2;
  if(i<N) 
    sum+=in[i];
  
  atomicAdd(out,sum);
}


__global__ void device_reduce_atomic_kernel_vector4(int *in, int* out, int N) {
  int sum=0;
  int idx=blockIdx.x*blockDim.x+threadIdx.x;
  for(int i=idx;i<N/4;i+=blockDim.x*gridDim.x) {
    int4 val=reinterpret_cast<int4*>(in)[i];
    sum+=(val.x+val.y)+(val.z+val.w);
  }
  int i=idx+N/4*4;
  if(i<N) 
    sum+=in[i];
  
  atomicAdd(out,sum);
}





__global__ void device_reduce_warp_atomic_kernel(int *in, int* out, int N) {
  int sum=int(0);
  for(int i=blockIdx.x*blockDim.x+threadIdx.x;i<N;i+=blockDim.x*gridDim.x) {
    sum+=in[i];
  }
  sum=warpReduceSum(sum);
  if(threadIdx.x%warpSize==0)
    atomicAdd(out,sum);
}


__global__ void device_reduce_warp_atomic_kernel_vector2(int *in, int* out, int N) {
  int sum=0;
  int idx=blockIdx.x*blockDim.x+threadIdx.x;
  for(int i=idx;i<N/2;i+=blockDim.x*gridDim.x) {
    int2 val=reinterpret_cast<int2*>(in)[i];
    sum+=val.x+val.y;
  }
  int i=idx+N/2*2;
  if(i<N) 
    sum+=in[i];
  sum=warpReduceSum(sum);
  if(threadIdx.x%warpSize==0)
    atomicAdd(out,sum);
}


__global__ void device_reduce_warp_atomic_kernel_vector4(int *in, int* out, int N) {
  int sum=0;
  int idx=blockIdx.x*blockDim.x+threadIdx.x;
  for(int i=idx;i<N/4;i+=blockDim.x*gridDim.x) {
    int4 val=reinterpret_cast<int4*>(in)[i];
    sum+=(val.x+val.y)+(val.z+val.w);
  }
  int i=idx+N/4*4;
  if(i<N) 
    sum+=in[i];
  
  sum=warpReduceSum(sum);
  if(threadIdx.x%warpSize==0)
    atomicAdd(out,sum);
}





__global__ void device_reduce_block_atomic_kernel(int *in, int* out, int N) {
  int sum=int(0);
  for(int i=blockIdx.x*blockDim.x+threadIdx.x;i<N;i+=blockDim.x*gridDim.x) {
    sum+=in[i];
  }
  sum=blockReduceSum(sum);
  if(threadIdx.x==0)
    atomicAdd(out,sum);
}


__global__ void device_reduce_block_atomic_kernel_vector2(int *in, int* out, int N) {
  int sum=0;
  int idx=blockIdx.x*blockDim.x+threadIdx.x;
  for(int i=idx;i<N/2;i+=blockDim.x*gridDim.x) {
    int2 val=reinterpret_cast<int2*>(in)[i];
    sum+=val.x+val.y;
  }
  int i=idx+N/2*2;
  if(i<N) 
    sum+=in[i];
  sum=blockReduceSum(sum);
  if(threadIdx.x==0)
    atomicAdd(out,sum);
}


__global__ void device_reduce_block_atomic_kernel_vector4(int *in, int* out, int N) {
  int sum=0;
  int idx=blockIdx.x*blockDim.x+threadIdx.x;
  for(int i=idx;i<N/4;i+=blockDim.x*gridDim.x) {
    int4 val=reinterpret_cast<int4*>(in)[i];
    sum+=(val.x+val.y)+(val.z+val.w);
  }
  int i=idx+N/4*4;
  if(i<N) 
    sum+=in[i];
  
  sum=blockReduceSum(sum);
  if(threadIdx.x==0)
    atomicAdd(out,sum);
}





__global__ void device_reduce_stable_kernel(int *in, int* out, int N) {
  int sum=int(0);
  for(int i=blockIdx.x*blockDim.x+threadIdx.x;i<N;i+=blockDim.x*gridDim.x) {
    sum+=in[i];
  }
  sum=blockReduceSum(sum);
  if(threadIdx.x==0)
    out[blockIdx.x]=sum;
}


__global__ void device_reduce_stable_kernel_vector2(int *in, int* out, int N) {
  int sum=0;
  int idx=blockIdx.x*blockDim.x+threadIdx.x;
  for(int i=idx;i<N/2;i+=blockDim.x*gridDim.x) {
    int2 val=reinterpret_cast<int2*>(in)[i];
    sum+=val.x+val.y;
  }
  int i=idx+N/2*2;
  if(i<N) 
    sum+=in[i];
  sum=blockReduceSum(sum);
  if(threadIdx.x==0)
    out[blockIdx.x]=sum;
}


__global__ void device_reduce_stable_kernel_vector4(int *in, int* out, int N) {
  int sum=0;
  int idx=blockIdx.x*blockDim.x+threadIdx.x;
  for(int i=idx;i<N/4;i+=blockDim.x*gridDim.x) {
    int4 val=reinterpret_cast<int4*>(in)[i];
    sum+=(val.x+val.y)+(val.z+val.w);
  }
  int i=idx+N/4*4;
  if(i<N) 
    sum+=in[i];
  
  sum=blockReduceSum(sum);
  if(threadIdx.x==0)
    out[blockIdx.x]=sum;
}


