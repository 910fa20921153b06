/*
 * The printed C of every golden tensor map in cases.txt must compile with
 * nvcc, and, with --run on a machine with a GPU, the driver must accept
 * every one: the program writes one .cu file holding each map's encode
 * function and a main that calls them all on a device buffer, compiles it
 * (nvcc -c without --run; linked with -lcuda with it) and runs it.
 *   test_tensor_map_nvcc NVCC cases.txt OUTDIR [--run]
 * Without nvcc (an empty NVCC) it prints SKIP and exits 77.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases_read.h"
#include "td_internal.h"
#include "tensor_map_print.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s NVCC cases.txt OUTDIR [--run]\n", argv[0]);
        return 2;
    }
    if (argv[1][0] == '\0') {
        printf("SKIP: nvcc not found\n");
        return 77;
    }
    int run = argc > 4 && strcmp(argv[4], "--run") == 0;
    FILE *fp = fopen(argv[2], "r");
    if (fp == NULL) {
        perror(argv[2]);
        return 2;
    }
    td_buf b;
    td__buf_init(&b);
    td__buf_puts(&b, "#include <cuda.h>\n#include <cuda_runtime.h>\n"
                     "#include <stdint.h>\n#include <stdio.h>\n\n");
    char line[2048], names[128][64];
    int n = 0;
    while (fgets(line, sizeof line, fp) != NULL && n < 128) {
        if (strncmp(line, "golden ", 7) != 0)
            continue;
        td_tmap_request r;
        char dtype[32], oob[32];
        td__test_tmap_request(line, strstr(line, " expect: "), &r, dtype, oob);
        td_tmap m;
        td_diag d;
        td_diag_clear(&d);
        if (td__tmap_plan(&r, &m, &d) != 0) {
            fprintf(stderr, "planning failed: %s\n", d.msg);
            return 1;
        }
        snprintf(names[n], sizeof names[n], "encode_%d", n);
        if (td__tmap_print_c(&m, names[n], 0, &b) != 0) {
            fprintf(stderr, "printing failed\n");
            return 1;
        }
        td__buf_puts(&b, "\n");
        n++;
    }
    fclose(fp);
    td__buf_puts(&b, "int main(void)\n{\n    void *buf = NULL;\n"
                     "    if (cudaMalloc(&buf, 1 << 20) != cudaSuccess) {\n"
                     "        printf(\"no device\\n\");\n        return 2;\n    }\n"
                     "    int bad = 0;\n    CUtensorMap map;\n");
    for (int i = 0; i < n; i++)
        td__buf_printf(&b,
                       "    if (%s(&map, buf) != CUDA_SUCCESS) {\n"
                       "        printf(\"%s: rejected by the driver\\n\");\n"
                       "        bad++;\n    }\n",
                       names[i], names[i]);
    td__buf_printf(&b, "    printf(\"%d maps, %%d rejected\\n\", bad);\n"
                        "    return bad != 0;\n}\n", n);
    char *text = NULL;
    if (td__buf_take(&b, &text) != 0)
        return 1;
    char path[1024], cmd[4096];
    snprintf(path, sizeof path, "%s/tensor_maps.cu", argv[3]);
    FILE *out = fopen(path, "w");
    if (out == NULL) {
        perror(path);
        return 1;
    }
    fputs(text, out);
    fclose(out);
    td__free(text);
    if (run)
        snprintf(cmd, sizeof cmd,
                 "'%s' -arch=sm_90a -o '%s/tensor_maps' '%s' -lcuda && "
                 "'%s/tensor_maps'",
                 argv[1], argv[3], path, argv[3]);
    else
        snprintf(cmd, sizeof cmd,
                 "'%s' -arch=sm_90a -c -o '%s/tensor_maps.o' '%s'", argv[1],
                 argv[3], path);
    int rc = system(cmd);
    printf("%d maps; %s: %s\n", n, run ? "compiled and run" : "compiled",
           rc == 0 ? "ok" : "FAILED");
    return rc == 0 ? 0 : 1;
}
