/*
 * The warp_xor_swizzle algorithm helpers (permute.h): upstream's
 * _check_bijection, _bank_free and _choose_xor_k, computed the same way on
 * the same numbers (tests/variants/test_permute.c holds upstream's cases).
 * The iteration spaces are small (V <= 32 * 32 elements: the variant
 * declines more than 32 per lane before asking), so plain loops do.
 */
#include <stdlib.h>

#include "permute.h"

#define WARP 32
#define BANKS 32
#define BANK_BYTES 4

/* The offset of flat index i (row-major over extent) under stride. */
static int64_t offset_of(int64_t i, const int64_t *extent,
                         const int64_t *stride, int n)
{
    int64_t off = 0;
    for (int d = n - 1; d >= 0; d--) {
        off += (i % extent[d]) * stride[d];
        i /= extent[d];
    }
    return off;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

bool td__permute_bijection(const int64_t *extent, const int64_t *stride,
                           int n)
{
    int64_t v = 1;
    for (int d = 0; d < n; d++) {
        if (extent[d] <= 0 || v > (int64_t)1 << 20)
            return false;
        v *= extent[d];
    }
    if (v > (int64_t)1 << 20)
        return false;
    int64_t *offs = malloc((size_t)v * sizeof *offs);
    if (offs == NULL)
        return false;
    for (int64_t i = 0; i < v; i++)
        offs[i] = offset_of(i, extent, stride, n);
    qsort(offs, (size_t)v, sizeof *offs, cmp64);
    bool ok = true;
    for (int64_t i = 1; ok && i < v; i++)
        ok = offs[i] != offs[i - 1];
    free(offs);
    return ok;
}

bool td__permute_bank_free(const int64_t *extent, const int64_t *stride,
                           int n, int bytes, int64_t p, int k)
{
    int shift = 5 - k;
    int64_t mask = ((int64_t)1 << k) - 1;
    int64_t v = 1;
    for (int d = 0; d < n; d++)
        v *= extent[d];
    for (int64_t r = 0; r < p; r++) {
        bool seen[BANKS] = {false};
        for (int64_t lane = 0; lane < WARP; lane++) {
            int64_t j = r ^ ((lane >> shift) & mask);
            int64_t flat = lane + j * WARP;
            if (flat >= v)
                return false;
            int64_t off = offset_of(flat, extent, stride, n) * bytes;
            /* Python's floor division and modulo (offsets may be
             * negative with negative strides). */
            int64_t q = off / BANK_BYTES;
            if (off % BANK_BYTES != 0 && off < 0)
                q--;
            int64_t bank = q % BANKS;
            if (bank < 0)
                bank += BANKS;
            if (seen[bank])
                return false;
            seen[bank] = true;
        }
    }
    return true;
}

int td__permute_choose_xor_k(const int64_t *extent, const int64_t *src,
                             const int64_t *dst, int n, int bytes, int64_t p)
{
    int max_k = 0;
    while (((int64_t)1 << (max_k + 1)) <= p)
        max_k++;
    for (int k = 0; k <= max_k; k++)
        if (td__permute_bank_free(extent, src, n, bytes, p, k) &&
            td__permute_bank_free(extent, dst, n, bytes, p, k))
            return k;
    return -1;
}
