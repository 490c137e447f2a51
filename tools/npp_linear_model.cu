/* npp_linear_model.cu - what NPP's nppiResize computes with NPPI_INTER_LINEAR when reducing:
 * random gray images are resized by NPP and by CPU models of the candidate filters, and each
 * model's largest and mean difference from NPP's output is printed. The model that matches
 * within a step is what NPP computes; the benchmark's comparison of tessera's filters with NPP
 * rests on it (tools/results/nvidia-h100-resize-2026-11-26.md).
 *
 * Models (double arithmetic, rounded once to the nearest):
 *   cv        two taps at src = (i + 0.5) * in / out - 0.5, clamped at the edges (OpenCV's
 *             INTER_LINEAR, tessera's interp)
 *   centre    two taps at src = (i + 0.5) * in / out (no half-pixel shift back)
 *   corner    two taps at src = i * in / out
 *   aligned   two taps at src = i * (in - 1) / (out - 1) (align corners)
 *   triangle  the antialiased triangle, support widened by the scale (Pillow's BILINEAR,
 *             tessera's triangle)
 *   area      the box average over the output pixel's footprint (OpenCV's INTER_AREA)
 * Build (needs npp.h): nvcc -O2 -o npp_linear_model tools/npp_linear_model.cu -lnppig -lnppc
 */
#include <cuda_runtime.h>
#include <math.h>
#include <npp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { M_CV, M_CENTRE, M_CORNER, M_ALIGNED, M_TRIANGLE, M_AREA, M_COUNT };
static const char *const model_names[M_COUNT] = {"cv", "centre", "corner",
                                                 "aligned", "triangle", "area"};

/* The weights of output i of an axis in -> out under model m: w[0..in). */
static void axis_weights(int m, int i, int in, int out, double *w)
{
    double s = (double)in / out;
    memset(w, 0, sizeof(double) * (size_t)in);
    if (m == M_TRIANGLE || m == M_AREA) {
        double lo = i * s, hi = (i + 1) * s, c = (i + 0.5) * s, sup = s > 1 ? s : 1, sum = 0;
        for (int j = 0; j < in; j++) {
            double v;
            if (m == M_AREA) {
                double a = j > lo ? j : lo, b = j + 1 < hi ? j + 1 : hi;
                v = b > a ? b - a : 0;
            } else {
                double x = fabs((j + 0.5 - c) / sup);
                v = x < 1 ? 1 - x : 0;
            }
            w[j] = v;
            sum += v;
        }
        for (int j = 0; j < in; j++)
            w[j] = sum > 0 ? w[j] / sum : 0;
        return;
    }
    double src = m == M_CV       ? (i + 0.5) * s - 0.5
                 : m == M_CENTRE ? (i + 0.5) * s
                 : m == M_CORNER ? i * s
                                 : (out > 1 ? i * (double)(in - 1) / (out - 1) : 0);
    int x0 = (int)floor(src);
    double f = src - x0;
    if (x0 < 0)
        x0 = 0, f = 0;
    if (x0 >= in - 1)
        x0 = in - 1, f = 0;
    w[x0] += 1 - f;
    if (f > 0)
        w[x0 + 1] += f;
}

static void model(int m, const unsigned char *a, int iw, int ih, unsigned char *o, int ow, int oh)
{
    double *wx = (double *)malloc(sizeof(double) * (size_t)iw * ow);
    double *wy = (double *)malloc(sizeof(double) * (size_t)ih * oh);
    for (int x = 0; x < ow; x++)
        axis_weights(m, x, iw, ow, wx + (size_t)x * iw);
    for (int y = 0; y < oh; y++)
        axis_weights(m, y, ih, oh, wy + (size_t)y * ih);
    for (int y = 0; y < oh; y++)
        for (int x = 0; x < ow; x++) {
            double sum = 0;
            for (int j = 0; j < ih; j++) {
                double r = 0, wyj = wy[(size_t)y * ih + j];
                if (wyj == 0)
                    continue;
                for (int i = 0; i < iw; i++)
                    r += wx[(size_t)x * iw + i] * a[(size_t)j * iw + i];
                sum += wyj * r;
            }
            long v = lround(sum);
            o[(size_t)y * ow + x] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    free(wx);
    free(wy);
}

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x)) {                                                                                \
            fprintf(stderr, "npp_linear_model: %s failed (line %d)\n", #x, __LINE__);             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

int main(void)
{
    static const int cases[][4] = {{64, 64, 32, 32}, {64, 64, 16, 16}, {96, 96, 24, 24},
                                   {60, 45, 45, 30}, {768, 432, 384, 216}, {768, 432, 192, 108},
                                   {32, 32, 48, 48}};
    NppStreamContext ctx;
    memset(&ctx, 0, sizeof ctx);
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0) == cudaSuccess);
    ctx.hStream = 0;
    ctx.nCudaDeviceId = 0;
    ctx.nMultiProcessorCount = p.multiProcessorCount;
    ctx.nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
    ctx.nMaxThreadsPerBlock = p.maxThreadsPerBlock;
    ctx.nSharedMemPerBlock = p.sharedMemPerBlock;
    ctx.nCudaDevAttrComputeCapabilityMajor = p.major;
    ctx.nCudaDevAttrComputeCapabilityMinor = p.minor;
    printf("NPP %d.%d.%d, NPPI_INTER_LINEAR, gray8 random input: max / mean |model - NPP|\n",
           nppGetLibVersion()->major, nppGetLibVersion()->minor, nppGetLibVersion()->build);
    printf("%-22s", "case");
    for (int m = 0; m < M_COUNT; m++)
        printf(" %14s", model_names[m]);
    printf("\n");
    unsigned seed = 12345;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int iw = cases[c][0], ih = cases[c][1], ow = cases[c][2], oh = cases[c][3];
        unsigned char *a = (unsigned char *)malloc((size_t)iw * ih), *got = (unsigned char *)malloc(
                                                                        (size_t)ow * oh),
                      *want = (unsigned char *)malloc((size_t)ow * oh);
        for (int i = 0; i < iw * ih; i++)
            a[i] = (unsigned char)((seed = seed * 1103515245u + 12345u) >> 23);
        unsigned char *d_a, *d_o;
        CHECK(cudaMalloc(&d_a, (size_t)iw * ih) == cudaSuccess);
        CHECK(cudaMalloc(&d_o, (size_t)ow * oh) == cudaSuccess);
        CHECK(cudaMemcpy(d_a, a, (size_t)iw * ih, cudaMemcpyHostToDevice) == cudaSuccess);
        NppiSize is = {iw, ih}, os = {ow, oh};
        NppiRect ir = {0, 0, iw, ih}, orr = {0, 0, ow, oh};
        NppStatus st = nppiResize_8u_C1R_Ctx(d_a, iw, is, ir, d_o, ow, os, orr, NPPI_INTER_LINEAR,
                                             ctx);
        CHECK(st >= NPP_NO_ERROR);
        CHECK(cudaMemcpy(got, d_o, (size_t)ow * oh, cudaMemcpyDeviceToHost) == cudaSuccess);
        char name[40];
        snprintf(name, sizeof name, "%dx%d->%dx%d", iw, ih, ow, oh);
        printf("%-22s", name);
        for (int m = 0; m < M_COUNT; m++) {
            model(m, a, iw, ih, want, ow, oh);
            int mx = 0;
            double sum = 0;
            for (int i = 0; i < ow * oh; i++) {
                int d = abs((int)got[i] - (int)want[i]);
                mx = d > mx ? d : mx;
                sum += d;
            }
            printf(" %6d / %5.2f", mx, sum / (ow * oh));
        }
        printf("\n");
        cudaFree(d_a);
        cudaFree(d_o);
        free(a);
        free(got);
        free(want);
    }
    return 0;
}
