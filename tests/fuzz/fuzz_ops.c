/* fuzz_ops.c - libFuzzer target: the --ops parser (ts_chain_parse) on arbitrary text. */
#include "tessera.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (strstr(text, "kernel:") == NULL) { /* file names would make it read the disk */
        ts_chain c;
        char err[256];
        if (ts_chain_parse(text, &c, err, sizeof err) == TS_OK) {
            for (int i = 0; i < c.n; i++) {
                if (c.ops[i].kind == TS_OP_CONV && (c.ops[i].filter.k < 1 || c.ops[i].filter.k > 31))
                    abort(); /* the parser must never hand out an out-of-range filter */
                /* the canonical text names the op's table row and parses to itself */
                ts_op again;
                if (ts_op_index(&c.ops[i]) < 0 ||
                    ts_op_parse(c.ops[i].text, &again, err, sizeof err) != TS_OK ||
                    strcmp(again.text, c.ops[i].text) != 0 || again.kind != c.ops[i].kind)
                    abort();
            }
            ts_chain_free(&c);
        }
    }
    free(text);
    return 0;
}
