// aclnn_py emulator: <cub/iterator/counting_input_iterator.cuh> -- see emu_iterators.cuh.
#include "emu_iterators.cuh"
