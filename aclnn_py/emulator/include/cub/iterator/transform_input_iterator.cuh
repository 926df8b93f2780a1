// aclnn_py emulator: <cub/iterator/transform_input_iterator.cuh> -- see emu_iterators.cuh.
#include "emu_iterators.cuh"
