/* mma_int8.cuh - the 8-bit tensor-core products the resamplers (resize_mma.cuh) and the box rung
 * (conv_mmasep2.cu's mmabox) share: mma.sync on 8-bit operands with exact int32 sums. Internal to
 * kernels/; sm_80 and newer. */
#ifndef TS_MMA_INT8_CUH
#define TS_MMA_INT8_CUH

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
/* D += A * B, 16x8x32, A row-major, B column-major; U: unsigned 8-bit, S: signed. */
#define RS_MMA_DEF(name, ta, tb)                                                                   \
    __device__ __forceinline__ void name(int (&d)[4], unsigned a0, unsigned a1, unsigned a2,       \
                                         unsigned a3, unsigned b0, unsigned b1)                    \
    {                                                                                              \
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32." ta "." tb ".s32 {%0,%1,%2,%3}, "     \
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                                    \
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                              \
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));                      \
    }
RS_MMA_DEF(mma_uu, "u8", "u8")
RS_MMA_DEF(mma_us, "u8", "s8")
RS_MMA_DEF(mma_su, "s8", "u8")

/* D += A * B, 16x8x16, unsigned 8-bit (A: a0 rows 0-7, a1 rows 8-15, k 4t .. 4t + 3 a lane). */
__device__ __forceinline__ void mma_uu_k16(int (&d)[4], unsigned a0, unsigned a1, unsigned b)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
                 "{%0,%1,%2,%3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a0), "r"(a1), "r"(b));
}
#endif

#endif /* TS_MMA_INT8_CUH */
