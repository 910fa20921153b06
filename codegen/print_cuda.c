/* placeholder: being written */
#include "td_internal.h"
typedef int td__placeholder_print_cuda;
