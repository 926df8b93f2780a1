// emulator shim: everything is in <cooperative_groups.h>
#include "../cooperative_groups.h"
