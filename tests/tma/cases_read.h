/*
 * The reader of tests/tma/cases.txt (see cases.txt for the line format),
 * shared by test_tensor_map.c and test_tensor_map_nvcc.c.
 */
#ifndef TD_TEST_TMA_CASES_READ_H
#define TD_TEST_TMA_CASES_READ_H

#include <stddef.h>
#include <stdint.h>

#include "tensor_map.h"

/* Parses "a,b,c" into v (at most cap); returns the count. */
int td__test_ints(const char *s, int64_t *v, int cap);
/* The value of key among the key=value words of s before stop (NULL: the
 * whole line), copied into buf; NULL when absent. */
const char *td__test_value(const char *s, const char *stop, const char *key,
                           char *buf, size_t cap);
/* The request a golden/reject line describes; dtype and oob (32 bytes
 * each) hold the strings the request points at. */
void td__test_tmap_request(const char *line, const char *stop,
                           td_tmap_request *r, char *dtype, char *oob);

#endif
