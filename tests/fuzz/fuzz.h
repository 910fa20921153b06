/*
 * Shared by the fuzz targets: the libFuzzer entry point and an oracle check
 * that aborts (so both libFuzzer and the replay main report it) when a
 * property of the library does not hold.
 */
#ifndef TD_FUZZ_H
#define TD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: fuzz oracle failed: %s\n", __FILE__,       \
                    __LINE__, #cond);                                          \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* A copy of the input in a block of exactly `size` bytes, so that reading
 * one byte past the end is caught by ASan (the loaders take a length). */
static inline char *fuzz_exact_copy(const uint8_t *data, size_t size)
{
    char *p = malloc(size ? size : 1);
    FUZZ_CHECK(p != NULL);
    for (size_t i = 0; i < size; i++)
        p[i] = (char)data[i];
    return p;
}

#endif
