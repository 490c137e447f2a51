/* jpeg_ref.c - see jpeg_ref.h. */
#include "jpeg_ref.h"

#include <setjmp.h>
#include <stdio.h> /* before jpeglib.h, which uses FILE */
#include <jpeglib.h>
#include <string.h>

struct jerr {
    struct jpeg_error_mgr mgr;
    jmp_buf jb;
};

static void jerr_exit(j_common_ptr ci) { longjmp(((struct jerr *)ci->err)->jb, 1); }
static void jerr_quiet(j_common_ptr ci, int level) { (void)ci, (void)level; }

int jpeg_ref_decode(const unsigned char *buf, size_t len, ts_image *out, int *components)
{
    struct jpeg_decompress_struct ci;
    struct jerr je;
    memset(out, 0, sizeof *out);
    ci.err = jpeg_std_error(&je.mgr);
    je.mgr.error_exit = jerr_exit;
    je.mgr.emit_message = jerr_quiet;
    if (setjmp(je.jb)) {
        jpeg_destroy_decompress(&ci);
        ts_image_free(out);
        return -1;
    }
    jpeg_create_decompress(&ci);
    jpeg_mem_src(&ci, buf, (unsigned long)len);
    jpeg_read_header(&ci, TRUE);
    if (components)
        *components = ci.num_components;
    ci.out_color_space = ci.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&ci);
    if (ts_image_alloc(out, (int)ci.output_width, (int)ci.output_height, ci.output_components, 1) !=
        TS_OK)
        longjmp(je.jb, 1);
    while (ci.output_scanline < ci.output_height) {
        JSAMPROW row = (JSAMPROW)((unsigned char *)out->data + (size_t)ci.output_scanline * out->pitch);
        jpeg_read_scanlines(&ci, &row, 1);
    }
    jpeg_finish_decompress(&ci);
    jpeg_destroy_decompress(&ci);
    return 0;
}
