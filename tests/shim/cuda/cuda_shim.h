// A minimal stand-in for the CUDA headers, so that clang (-x cuda --cuda-device-only
// -nocudainc) parses and type-checks generated CUDA on a machine without CUDA.
#pragma once
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __align__(n) __attribute__((aligned(n)))
struct ok_shim_uint3 { unsigned int x, y, z; };
struct uint2 { unsigned int x, y; };
struct uint4 { unsigned int x, y, z, w; };
struct int2 { int x, y; };
struct int4 { int x, y, z, w; };
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
extern const __device__ ok_shim_uint3 threadIdx, blockIdx, blockDim, gridDim;
__device__ void __syncthreads();
__device__ void __threadfence();
__device__ unsigned int atomicAdd(unsigned int*, unsigned int);
__device__ unsigned int atomicExch(unsigned int*, unsigned int);
__device__ void __syncwarp(unsigned int mask = 0xffffffffu);
__device__ unsigned int __float_as_uint(float);
__device__ float __uint_as_float(unsigned int);
__device__ int __float_as_int(float);
__device__ float __int_as_float(int);
__device__ float fmaf(float, float, float);
__device__ float __expf(float);
__device__ float fmaxf(float, float);
__device__ float __shfl_xor_sync(unsigned int, float, int, int = 32);
__device__ int __reduce_max_sync(unsigned int, int);
__device__ int __popc(unsigned int);
__device__ unsigned int __funnelshift_r(unsigned int, unsigned int, unsigned int);
__device__ unsigned long __cvta_generic_to_shared(const void*);
