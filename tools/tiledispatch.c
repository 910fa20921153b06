#include "tiledispatch.h"
int main(void) { return 3; }
