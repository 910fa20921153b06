/*
 * The bump allocator that IR nodes and printer scratch live in.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "codegen_internal.h"

/* ---- arena -------------------------------------------------------------- */

#define ARENA_BLOCK 4096

struct td__arena_blk {
    td__arena_blk *next;
    size_t used;
    size_t cap;
    max_align_t data[];
};

void *td__arena_alloc(td__arena *a, size_t n)
{
    if (a->err)
        return NULL;
    const size_t align = sizeof(max_align_t);
    if (n > SIZE_MAX / 2) {
        a->err = TD_ENOMEM;
        return NULL;
    }
    n = (n + align - 1) / align * align;
    td__arena_blk *b = a->head;
    if (b == NULL || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        b = td__malloc(sizeof *b + cap);
        if (b == NULL) {
            a->err = TD_ENOMEM;
            return NULL;
        }
        b->used = 0;
        b->cap = cap;
        /* A big object gets its own block behind the current one, so the
         * rest of the current block stays usable. */
        if (a->head != NULL && cap > ARENA_BLOCK) {
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

char *td__arena_strdup(td__arena *a, const char *s)
{
    size_t n = strlen(s);
    char *d = td__arena_alloc(a, n + 1);
    if (d != NULL)
        memcpy(d, s, n + 1);
    return d;
}

void td__arena_seed(td__arena *a, void *mem, size_t bytes)
{
    td__arena_blk *b = mem;
    b->next = NULL;
    b->used = 0;
    b->cap = bytes - sizeof *b;
    a->head = b;
    a->fixed = b;
    a->err = 0;
}

void td__arena_free(td__arena *a)
{
    td__arena_blk *b = a->head;
    while (b != NULL) {
        td__arena_blk *next = b->next;
        if (b != a->fixed)
            td__free(b);
        b = next;
    }
    a->head = NULL;
    a->fixed = NULL;
    a->err = 0;
}
