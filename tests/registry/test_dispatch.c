#include "fake.h"
int main(void) { return 0; }
